"""Replies the edges share: the request's JSON body, a 201 for a new resource, a streamed file."""

import re

from flask import Response
from flask import jsonify
from flask import request
from flask import stream_with_context

from .. import jsontext
from ..errors import ValidationError

_SURROGATE = re.compile("[\ud800-\udfff]")


def check_json():
    """Parse a JSON body once (Flask caches it for the route) and refuse, with a 400 naming
    where, what no route can use: nesting past jsontext.MAX_DEPTH, and text holding a lone
    surrogate such as "\\ud800" (it cannot be stored or sent as UTF-8)."""
    if not request.is_json or not request.content_length:
        return
    try:
        data = request.get_json(silent=True)
    except RecursionError:
        data = None
    if data is None:
        # Not JSON, too deep, or a number too long: say which, and where.
        try:
            jsontext.loads(request.get_data(as_text=True))
        except ValueError as exc:
            raise ValidationError.field(
                "body", f"not valid JSON: {exc.msg}", line=getattr(exc, "lineno", None)
            ) from None
    stack = [(data, "body", 1)]
    while stack:
        value, where, depth = stack.pop()
        if depth > jsontext.MAX_DEPTH:
            raise ValidationError.field(
                where, f"nested too deeply (more than {jsontext.MAX_DEPTH} levels)"
            )
        if isinstance(value, str):
            if _SURROGATE.search(value):
                raise ValidationError.field(
                    where, "holds a lone surrogate (like \\ud800), which is not text"
                )
        elif isinstance(value, dict):
            for key, item in value.items():
                if _SURROGATE.search(key):
                    raise ValidationError.field(where, "a key holds a lone surrogate")
                stack.append((item, f"{where}.{key}", depth + 1))
        elif isinstance(value, list):
            stack.extend((item, f"{where}[{i}]", depth + 1) for i, item in enumerate(value))


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
