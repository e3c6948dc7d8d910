"""Replies the edges share: the request's JSON body, a 201 for a new resource, a streamed file."""

from flask import Response
from flask import jsonify
from flask import request
from flask import stream_with_context

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


def attachment(chunks, filename, content_type):
    """A streamed download of `chunks` (str) named `filename` (the web pages and the API)."""
    # content_type=, not mimetype=: the value already names its charset (Flask would add one).
    response = Response(stream_with_context(chunks), content_type=content_type)
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
