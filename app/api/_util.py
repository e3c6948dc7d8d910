"""Helpers the API modules share: the request's JSON body, and a 201 reply for a new resource."""

from flask import jsonify
from flask import request

from ..errors import ValidationError


def json_body(expect=dict):
    """The request's JSON body, or a 400 saying what is wrong with it."""
    if not request.is_json:
        raise ValidationError.field("body", "send JSON with Content-Type: application/json")
    data = request.get_json(silent=True)
    if data is None:
        raise ValidationError.field("body", "the body is not valid JSON")
    if expect is not None and not isinstance(data, expect):
        kind = "an object" if expect is dict else "a list or an object"
        raise ValidationError.field("body", f"the body must be {kind}")
    return data


def created(data, location):
    """201 with the new resource as JSON and its URL in Location."""
    response = jsonify(data)
    response.headers["Location"] = location
    return response, 201
