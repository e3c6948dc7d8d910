"""Provider fields: validation of every field and header row, with messages naming the fix."""

import re
from urllib.parse import urlsplit

from ..errors import ValidationError
from ..providers import formats
from ..providers.urls import credential_in

# Each type's (models endpoint, inference endpoint), as its wire format declares them.
DEFAULT_ENDPOINTS = {
    ptype: (wire.models_path, wire.chat_path) for ptype, wire in formats.FORMATS.items()
}
TYPE_CHOICE_TEXT = " or ".join(f"{ptype} ({wire.label})" for ptype, wire in formats.FORMATS.items())
# The timeout every provider gets unless it says otherwise (the built-in ones too): a local
# model loading into memory on its first call can take minutes.
DEFAULT_TIMEOUT_SECONDS = 300.0
# RFC 7230 token: the characters a header field name may use.
HEADER_NAME_RE = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")

# API (camelCase) spellings accepted beside the model field names.
_ALIASES = {
    "baseUrl": "base_url",
    "modelsEndpoint": "models_endpoint",
    "inferenceEndpoint": "inference_endpoint",
    "timeoutSeconds": "timeout_seconds",
    "timeout": "timeout_seconds",
    "maxConcurrency": "max_concurrency",
}
# Field name → its API spelling for error messages: the inverse of _ALIASES (first alias wins).
_SPELLING = {field: alias for alias, field in reversed(_ALIASES.items())}


def as_text(value):
    """Text as given (numbers as text, None as ""); None for anything else."""
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value if isinstance(value, str) else None


def as_number(value, kind):
    """Parse an int/float (numeric strings from forms allowed); None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = value.strip()
        try:
            value = float(value) if kind is float else int(value)
        except ValueError:
            return None
    if kind is int and isinstance(value, float) and value.is_integer():
        value = int(value)
    if kind is int and not isinstance(value, int):
        return None
    if kind is float and not isinstance(value, (int, float)):
        return None
    return value


def as_flag(value):
    """A checkbox/JSON boolean: "1", "true", "on", "yes" or a truthy value."""
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "on", "yes")
    return bool(value)


def check_base_url(url):
    """The message for a bad base URL, or None when it is fine."""
    if not url:
        return "enter the server's base URL, e.g. http://localhost:11434"
    if len(url) > 500:
        return "at most 500 characters"
    if any(ch.isspace() for ch in url):
        return "a URL cannot contain spaces"
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # e.g. an unclosed IPv6 bracket: http://[::1
        return f"not a valid URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return "must start with http:// or https://"
    if not parts.hostname:
        return "must name a host, e.g. http://localhost:11434"
    if parts.username or parts.password:
        return "put credentials in a secret header, not in the URL"
    if parts.query or parts.fragment:
        return "no query string or fragment; put paths in the endpoints"
    try:
        _ = parts.port
    except ValueError:
        return "the port must be a number from 1 to 65535"
    return None


def _check_endpoint(value):
    if not value.startswith("/"):
        return "must start with /"
    if len(value) > 200:
        return "at most 200 characters"
    if any(ch.isspace() for ch in value):
        return "cannot contain spaces"
    found = credential_in(value)
    if found:
        # The endpoint is shown on pages and in every error message: a key there would be too.
        what = "user:password@" if found == "userinfo" else f"{found}="
        return (
            f"no credentials in the endpoint ({what}); put the key in a secret header, "
            "e.g. Authorization: Bearer …"
        )
    return None


def _normalise(data):
    """Accept model field names or the API's camelCase; remember how each was spelled."""
    out = {}
    for key, value in (data or {}).items():
        out[_ALIASES.get(key, key)] = value
    return out


_TEXT_FIELDS = ("name", "type", "base_url", "models_endpoint", "inference_endpoint")


def check_json_types(data):
    """JSON (the API) says what type a value is: no quiet coercion of `name: 5` to "5" or of
    `isSecret: "yes"` to true. Raises ValidationError naming each field of the wrong type."""
    errors = []

    def wrong(field, message):
        errors.append({"field": field, "message": message})

    for key, value in (data or {}).items():
        field = _ALIASES.get(key, key)
        if field in _TEXT_FIELDS and value is not None and not isinstance(value, str):
            wrong(key, "must be text")
        elif field == "timeout_seconds" and (
            isinstance(value, bool) or not isinstance(value, int | float)
        ):
            wrong(key, "must be a number of seconds")
        elif field == "max_concurrency" and (isinstance(value, bool) or not isinstance(value, int)):
            wrong(key, "must be a whole number")
    rows = (data or {}).get("headers")
    for i, row in enumerate(rows if isinstance(rows, list) else []):
        if not isinstance(row, dict):
            continue
        for key in ("key", "value"):
            if row.get(key) is not None and not isinstance(row[key], str):
                wrong(f"headers[{i}].{key}", "must be text")
        for key in ("isSecret", "is_secret"):
            if key in row and not isinstance(row[key], bool):
                wrong(f"headers[{i}].{key}", "must be true or false")
        if row.get("id") is not None and (
            isinstance(row["id"], bool) or not isinstance(row["id"], int)
        ):
            wrong(f"headers[{i}].id", "must be a header id (a whole number)")
    if errors:
        raise ValidationError(errors)


def clean_provider(data, current=None, strict=False):
    """Validate provider fields; returns cleaned values or raises ValidationError (every field).

    `current` is the Provider being edited: fields missing from `data` keep its values.
    `strict` (JSON input) refuses values of the wrong type instead of converting them.
    """
    if strict:
        check_json_types(data)
    data = _normalise(data)
    errors = []

    def err(field, message):
        errors.append({"field": _SPELLING.get(field, field), "message": message})

    def get(field, default=None):
        if field in data:
            return data[field]
        return getattr(current, field) if current is not None else default

    out = {}
    name = as_text(get("name"))
    if name is None or not name.strip():
        err("name", "enter a name")
    elif len(name.strip()) > 100:
        err("name", "at most 100 characters")
    else:
        out["name"] = name.strip()

    ptype = as_text(get("type"))
    ptype = (ptype or "").strip().upper()
    if ptype not in formats.TYPES:
        err("type", f"choose {TYPE_CHOICE_TEXT}")
    else:
        out["type"] = ptype

    base_url = as_text(get("base_url"))
    base_url = None if base_url is None else base_url.strip().rstrip("/")
    problem = check_base_url(base_url) if base_url is not None else "must be text"
    if problem:
        err("base_url", problem)
    else:
        out["base_url"] = base_url

    defaults = DEFAULT_ENDPOINTS.get(ptype, ("", ""))
    # Editing: the stored type's default endpoints (the form sends them back as they are). A new
    # provider's form comes filled with another type's defaults when its type was switched.
    if current is None:
        stale = [ends for other, ends in DEFAULT_ENDPOINTS.items() if other != ptype]
    else:
        stale = [DEFAULT_ENDPOINTS.get(getattr(current, "type", None), (None, None))]
    fields = ("models_endpoint", "inference_endpoint")
    for i, (field, default) in enumerate(zip(fields, defaults, strict=True)):
        value = as_text(get(field))
        if value is not None and any(value == ends[i] for ends in stale):
            value = default  # the type changed: the old type's default endpoints do not apply
        if value is None:
            err(field, "must be text")
            continue
        value = value.strip() or default
        problem = _check_endpoint(value) if value else None
        if problem:
            err(field, problem)
        else:
            out[field] = value

    timeout = as_number(get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS), float)
    if timeout is None or not 1 <= timeout <= 3600:
        err("timeout_seconds", "a number of seconds from 1 to 3600")
    else:
        out["timeout_seconds"] = float(timeout)

    concurrency = as_number(get("max_concurrency", 1), int)
    if concurrency is None or not 1 <= concurrency <= 64:
        err("max_concurrency", "a whole number from 1 to 64")
    else:
        out["max_concurrency"] = concurrency

    if "headers" in data or current is None:
        out["headers"] = _clean_headers(data.get("headers") or [], current, err)
    if errors:
        raise ValidationError(errors)
    return out


def _clean_headers(rows, current, err):
    """Header rows → [{key, value|None (keep), is_secret, existing}]; blank rows are skipped."""
    if not isinstance(rows, list):
        err("headers", "must be a list of {key, value, isSecret}")
        return []
    existing = {}
    if current is not None:
        for h in current.headers:
            existing[("id", h.id)] = h
            existing[("key", h.key.lower())] = h
    seen = set()
    out = []
    for i, row in enumerate(rows):
        where = f"headers[{i}]"
        if not isinstance(row, dict):
            err(where, "must be an object with key, value and isSecret")
            continue
        key = as_text(row.get("key"))
        value = as_text(row.get("value"))
        is_secret = as_flag(row.get("isSecret", row.get("is_secret", False)))
        if key is None or value is None:
            err(where, "key and value must be text")
            continue
        key = key.strip()
        if not key and not value:
            continue  # an empty form row
        if not key:
            err(f"{where}.key", "enter the header name")
            continue
        if len(key) > 100:
            err(f"{where}.key", "at most 100 characters")
            continue
        if not HEADER_NAME_RE.match(key):
            err(f"{where}.key", "letters, digits and !#$%&'*+-.^_`|~ only (no spaces or colons)")
            continue
        if key.lower() in seen:
            err(f"{where}.key", f"the header {key} is given twice")
            continue
        seen.add(key.lower())
        if len(value) > 4096:
            err(f"{where}.value", "at most 4096 characters")
            continue
        if any(ch in value for ch in "\r\n\x00"):
            err(f"{where}.value", "cannot contain line breaks")
            continue
        bad = _not_latin1(value)
        if bad:
            # HTTP sends header values as latin-1: anything else fails every request to the
            # server (UnicodeEncodeError), so say so now rather than mid-run.
            err(
                f"{where}.value",
                f"the header {key} holds {bad!r}, which HTTP headers cannot "
                "carry; use plain ASCII (or latin-1) text",
            )
            continue
        old = None
        row_id = as_number(row.get("id"), int) if row.get("id") not in (None, "") else None
        if row_id is not None:
            old = existing.get(("id", row_id))
        if old is None:
            old = existing.get(("key", key.lower()))
        if not value:
            if old is None:
                err(f"{where}.value", "enter a value")
                continue
            if old.is_secret and not is_secret:
                err(f"{where}.value", "enter the value again to store it unencrypted")
                continue
            out.append({"key": key, "value": None, "is_secret": is_secret, "existing": old})
        else:
            out.append({"key": key, "value": value, "is_secret": is_secret, "existing": None})
    return out


def _not_latin1(value):
    """The first character latin-1 cannot encode, or None."""
    for ch in value:
        if ord(ch) > 0xFF:
            return ch
    return None
