"""Masking secrets in whatever a server sends back: as given, JSON-escaped, URL-encoded, base64.

A server that answers 401 may echo the request's headers in its error body, escaped the way its
JSON encoder or web framework likes (`\\/` for `/`, `%2F`, `\\u002b`), or decoded (the
`user:pass` of a Basic header). Every form is masked in the whole text before anything is cut,
so no part of a secret survives at a cut either.
"""

import base64
import binascii
import html
import json
import re
from urllib.parse import quote
from urllib.parse import quote_plus

MASK = "****"
MIN_PART = 4  # shorter words of a secret ("Bearer", a user name "ab") are not masked on their own
# Letters-and-digits runs this long inside a secret are masked on their own as well: whatever a
# server does to the punctuation around them (escapes, doubled escapes), the key's body is gone.
_RUN = re.compile(r"[A-Za-z0-9]{8,}")
_URL_CREDENTIALS = re.compile(r"//[^/@\s]+@")
_PERCENT = re.compile(r"%[0-9A-F]{2}")


def _encodings(value):
    """The ways `value` may appear in a server's reply."""
    forms = {value}
    escaped = json.dumps(value)[1:-1]  # \" \\ and control characters
    forms.add(escaped)
    forms.add(escaped.replace("/", "\\/"))  # PHP, Java and others escape slashes
    forms.add(json.dumps(value, ensure_ascii=True)[1:-1].replace("/", "\\/"))
    forms.add(json.dumps(value, ensure_ascii=False)[1:-1])
    for encoded in (quote(value, safe=""), quote(value), quote_plus(value)):
        forms.add(encoded)
        forms.add(_PERCENT.sub(lambda m: m.group().lower(), encoded))  # %2f as well as %2F
    forms.add(html.escape(value))
    forms.add(html.escape(value).replace("/", "&#x2F;"))
    raw = value.encode("utf-8")
    for encoder in (base64.b64encode, base64.urlsafe_b64encode):
        encoded = encoder(raw).decode("ascii")
        forms.update((encoded, encoded.rstrip("=")))
    return forms


def _basic_credentials(word):
    """`user:pass` and `pass` from the base64 of a Basic header, else nothing."""
    try:
        decoded = base64.b64decode(word + "=" * (-len(word) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return []
    if ":" not in decoded:
        return []
    _user, password = decoded.split(":", 1)
    return [decoded, password]


def secret_forms(secrets):
    """Every string to mask for these secrets, longest first (so a longer form wins)."""
    parts = set()
    for secret in secrets or ():
        if not secret:
            continue
        secret = str(secret)
        parts.add(secret)
        words = secret.split()
        parts.update(w for w in words if len(w) >= MIN_PART)
        if len(words) == 2 and words[0].lower() == "basic":
            parts.update(p for p in _basic_credentials(words[1]) if len(p) >= MIN_PART)
    parts.update(run for part in list(parts) for run in _RUN.findall(part))
    forms = set()
    for part in parts:
        forms.update(f for f in _encodings(part) if f and (f == part or len(f) >= MIN_PART))
    return sorted(forms, key=len, reverse=True)


class Redactor:
    """Masks a fixed set of secrets; built once per adapter (the forms are worked out once)."""

    def __init__(self, secrets):
        self.forms = secret_forms(secrets)

    def __call__(self, text):
        """`text` with every form of every secret, and URL credentials, masked."""
        if not text:
            return text
        for form in self.forms:
            if form in text:  # a fast scan first: most texts hold no secret at all
                text = text.replace(form, MASK)
        # Credentials in a URL (http://user:pass@host) are secrets too.
        return _URL_CREDENTIALS.sub("//" + MASK + "@", text)


def redact(text, secrets):
    """Text with every secret (in every encoding a server may echo) masked."""
    return Redactor(secrets)(text)
