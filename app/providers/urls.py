"""Where a provider's requests may go: its origin, and credentials a URL must not carry.

A URL is shown in error messages, logs and on pages, so a key in it would be shown in clear;
headers are where secrets go (encrypted at rest, masked everywhere).
"""

import re
from urllib.parse import parse_qsl
from urllib.parse import urlsplit
from urllib.parse import urlunsplit

from .redaction import MASK

# Query keys that carry a credential (compared lower-case, "-" read as "_").
CREDENTIAL_KEYS = frozenset(
    {
        "key",
        "apikey",
        "api_key",
        "token",
        "access_token",
        "auth",
        "auth_token",
        "password",
        "passwd",
        "pass",
        "pwd",
        "secret",
        "client_secret",
        "sig",
        "signature",
    }
)
CREDENTIAL_SUFFIXES = ("_key", "_token", "_secret", "_password")
# userinfo put in a path: a segment's `user:password@`, or `//user@` at its start.
_SEGMENT_USERINFO = re.compile(r"(?<![^/])[^/@]*:[^/@]*@")
_LEADING_USERINFO = re.compile(r"^//[^/@]+@")


def origin(url):
    """(scheme, host, port) of a URL, default ports filled in: where its headers may be sent."""
    parts = urlsplit(url or "")
    try:
        port = parts.port
    except ValueError:
        port = None
    scheme = parts.scheme.lower()
    default = {"http": 80, "https": 443}.get(scheme)
    return scheme, (parts.hostname or "").lower(), port or default


def is_credential_key(name):
    """True for a query key that names a credential (key=, api_key=, token=, password=...)."""
    low = name.strip().lower().replace("-", "_")
    return low in CREDENTIAL_KEYS or low.endswith(CREDENTIAL_SUFFIXES)


def credential_in(url):
    """What credential a URL or endpoint path carries ("userinfo" or the query key), else None."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.username or parts.password or _userinfo_in(parts.path):
        return "userinfo"
    for name, _value in parse_qsl(parts.query, keep_blank_values=True):
        if is_credential_key(name):
            return name
    return None


def credential_values(url):
    """The credentials a URL or endpoint carries (userinfo, credential query values), to be
    masked wherever the URL is shown."""
    try:
        parts = urlsplit(url or "")
    except ValueError:
        return []
    values = [v for v in (parts.username, parts.password) if v]
    values += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if is_credential_key(k)]
    return [v for v in values if v]


def mask_url(url):
    """The URL with its userinfo and credential-looking query values replaced by ****."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        netloc = MASK + "@" + netloc.rsplit("@", 1)[1]
    path = _SEGMENT_USERINFO.sub(MASK + "@", _LEADING_USERINFO.sub("//" + MASK + "@", parts.path))
    query = "&".join(_mask_pair(pair) for pair in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, path, query, parts.fragment))


def _userinfo_in(path):
    return bool(_SEGMENT_USERINFO.search(path) or _LEADING_USERINFO.search(path))


def _mask_pair(pair):
    name, sep, _value = pair.partition("=")
    return f"{name}={MASK}" if sep and is_credential_key(name) else pair
