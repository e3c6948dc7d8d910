"""Masking secrets in whatever a server sends back, in every form it may take.

A server may echo a request's headers, or a model may repeat a key, in any encoding: as given,
JSON-escaped (`\\u0042`, `\\/`), URL-encoded, as HTML entities, decoded (the `user:pass` of a
Basic header), as base64 inside a larger blob (at any of the three byte alignments), as hex,
or cut short (`sk-live-EVILSECRET7f...`). Text is decoded first (JSON escapes, URL, HTML
entities, twice over for doubly escaped text) and the secrets are looked for in the decoded
view; what matches is masked in the original text, escapes and all, so nothing is lost but the
secret. Every form is masked in the whole text before anything is cut, so no part of a secret
survives at a cut either.
"""

import base64
import binascii
import functools
import html
import html.entities
import json
import re
from urllib.parse import quote
from urllib.parse import quote_plus

MASK = "****"
MIN_PART = 4  # shorter words of a secret ("Bearer", a user name "ab") are not masked on their own
PREFIX = 8  # a secret's first characters this many or more are masked: a key cut short by a server
# Letters-and-digits runs this long inside a secret are masked on their own as well: whatever a
# server does to the punctuation around them (escapes, doubled escapes), the key's body is gone.
_RUN = re.compile(r"[A-Za-z0-9]{8,}")
_URL_CREDENTIALS = re.compile(r"//[^/@\s]+@")
_PERCENT = re.compile(r"%[0-9A-F]{2}")
# One escaped character — JSON (`\u0042`, `\/`), URL (`%42`) or HTML (`&#66;`, `&sol;`), also
# escaped twice over (`\\u0042` in a JSON string inside a JSON string, `%2542`, `&amp;#66;`) —
# but only of a character some secret holds: a page's `&#39;` and `&quot;`, a reply's `\"` and
# `\n` are left alone (decoding them would cost every call for nothing).


def _escape_patterns(chars):
    """(marker, regex) of each kind of escape of one of `chars`: a text without the marker (a
    plain substring test) holds none of that kind, so most texts never meet a regex."""
    codes = sorted({ord(c) for c in chars})
    hexes = "|".join(f"{n:x}" for n in codes)
    decimal = "|".join(str(n) for n in codes)
    json_codes = "|".join(f"{n:04x}" for n in codes)
    byte_codes = "|".join(f"{n:02x}" for n in codes if n < 0x80)
    kinds = [
        ("\\u", rf"\\{{1,2}}u(?i:{json_codes})"),
        ("&#", rf"&#0*(?:{decimal});|&#[xX]0*(?i:{hexes});"),
        ("&amp;#", rf"&amp;#0*(?:{decimal});|&amp;#[xX]0*(?i:{hexes});"),
    ]
    if byte_codes:
        kinds.append(("%", rf"%(?:25)?(?i:{byte_codes})"))
    for quoted in (c for c in chars if c in '\\/"'):
        kinds.append(("\\" + quoted, r"\\{1,2}" + re.escape(quoted)))
    names = sorted(n for n, c in html.entities.html5.items() if c in chars and n.endswith(";"))
    if names:
        kinds.append(("&", "&(?:" + "|".join(re.escape(n) for n in names) + ")"))
    return [(marker, re.compile(pattern)) for marker, pattern in kinds]


_BLOB = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_")
# A JSON string value (after a `:`): a stream event's piece of the answer.
_JSON_VALUE = re.compile(r'(:\s*)"((?:[^"\\]|\\.)*)"')


@functools.lru_cache(maxsize=4096)  # a page repeats the same few escapes (&#39;, &quot;) a lot
def _unescape(escape):
    """The text one escape stands for."""
    head = escape[0]
    if head == "\\":
        body = escape.lstrip("\\")
        return chr(int(body[1:], 16)) if body[:1] == "u" and len(body) == 5 else body or "\\"
    if head == "%":
        return chr(int(escape[-2:], 16))  # byte-wise: an ASCII key's bytes are its characters
    if escape.startswith("&amp;#"):
        escape = "&" + escape[5:]
    try:
        return html.unescape(escape)
    except (ValueError, OverflowError):
        return escape


def _decode_map(pattern, text):
    """(decoded text, starts, ends): decoded character i came from text[starts[i]:ends[i]]."""
    parts, starts, ends = [], [], []
    last = 0
    for m in pattern.finditer(text):
        a, b = m.span()
        if a > last:
            parts.append(text[last:a])
            starts.extend(range(last, a))
            ends.extend(range(last + 1, a + 1))
        plain = _unescape(m.group())
        parts.append(plain)
        starts.extend([a] * len(plain))
        ends.extend([b] * len(plain))
        last = b
    parts.append(text[last:])
    starts.extend(range(last, len(text)))
    ends.extend(range(last + 1, len(text) + 1))
    return "".join(parts), starts, ends


def _base64_forms(raw):
    """The base64 characters `raw` decides at each of the three byte alignments in a blob."""
    forms = set()
    for offset in range(3):
        padded = b"\0" * offset + raw
        first = -(-8 * offset // 6)  # characters that also hold the bytes before
        last = 8 * len(padded) // 6  # characters after this also hold the bytes after
        for encoder in (base64.b64encode, base64.urlsafe_b64encode):
            forms.add(encoder(padded).decode("ascii")[first:last])
    return forms


def _encodings(value):
    """The ways `value` may appear in a server's reply, as they are (not decoded)."""
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
    if len(value) < PREFIX:  # longer ones: _binary_forms, which masks the blob around them
        raw = value.encode("utf-8")
        for encoder in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encoder(raw).decode("ascii")
            forms.update((encoded, encoded.rstrip("=")))
    return forms


def _binary_forms(value):
    """Base64 at any alignment and hex (both cases): forms that no decoding of text undoes."""
    raw = value.encode("utf-8")
    forms = {f for f in _base64_forms(raw) if len(f) >= PREFIX}
    forms.update((raw.hex(), raw.hex().upper()))
    return forms


def _keylike(part):
    """Whether a cut-short copy of `part` is still worth masking: a key, not a plain word or URL
    (`application/json`, `https://...`), whose first characters would be masked everywhere."""
    if len(part) < PREFIX or any(c.isspace() for c in part) or "://" in part:
        return False
    has_digit = any(c.isdigit() for c in part)
    mixed = any(c.isupper() for c in part) and any(c.islower() for c in part)
    return has_digit or mixed


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


def secret_parts(secrets):
    """The strings to mask for these secrets as they are: each secret, its words, its runs."""
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
    # All-lowercase runs are words (`services` in a webhook's path), not a key's body.
    runs = (run for part in list(parts) for run in _RUN.findall(part))
    parts.update(run for run in runs if not run.isalpha() or not run.islower())
    return parts


def _binary_parts(parts):
    """The parts whose base64 and hex are looked for: those >= PREFIX long holding no shorter
    such part (the base64 or hex of a part holds that of each part inside it, at some
    alignment, so looking for the inner one finds both, at a third of the cost)."""
    long = sorted((p for p in parts if len(p) >= PREFIX), key=len)
    kept = []
    for part in long:
        if not any(inner in part for inner in kept):
            kept.append(part)
    return kept


def secret_forms(secrets, min_length=0):
    """Every string to mask for these secrets, longest first (so a longer form wins)."""
    parts = {p for p in secret_parts(secrets) if len(p) >= min_length}
    forms = set()
    for part in parts:
        forms.update(f for f in _encodings(part) if f and (f == part or len(f) >= MIN_PART))
    return sorted(forms, key=len, reverse=True)


def _merge(spans):
    """Overlapping or touching (start, end) spans joined, in order."""
    merged = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return merged


class Redactor:
    """Masks a fixed set of secrets; built once per adapter (the forms are worked out once)."""

    def __init__(self, secrets, min_length=0):
        """`min_length`: parts of a secret shorter than this are not masked on their own (the
        app-wide pass: a short secret like `token` would otherwise go from every page)."""
        parts = {p for p in secret_parts(secrets) if len(p) >= min_length}
        self.forms = secret_forms(secrets, min_length)
        # Which secret each form stands for (what `mask` reports found).
        self._part_of = {}
        for part in sorted(parts, key=len):
            self._part_of.update((form, part) for form in _encodings(part))
        # Looked for in the decoded view: whole forms, and the first characters of key-like
        # parts (extended while they keep matching, so a cut-short key is masked as far as
        # it goes).
        self._whole = sorted(parts, key=len, reverse=True)
        # Base64 and hex: a hit masks the whole blob around it (the rest of the blob may hold
        # the secret's other characters at another alignment).
        self._binary = sorted({f for p in _binary_parts(parts) for f in _binary_forms(p)})
        self._kinds = _escape_patterns({c for part in parts for c in part})
        self._escape = re.compile("|".join(p.pattern for _m, p in self._kinds))
        self._prefixes = {}
        for part in sorted(parts, key=len, reverse=True):
            if _keylike(part):
                self._prefixes.setdefault(part[:PREFIX], []).append(part)

    def __bool__(self):
        return bool(self.forms)

    def _hits(self, text):
        """(start, end) spans of `text` holding a secret, as it is or cut short."""
        spans = []
        for needle in self._whole:
            start = text.find(needle)
            while start >= 0:
                spans.append((start, start + len(needle)))
                start = text.find(needle, start + 1)
        for needle in self._binary:
            start = text.find(needle)
            while start >= 0:
                a, b = start, start + len(needle)
                while a > 0 and text[a - 1] in _BLOB:
                    a -= 1
                while b < len(text) and text[b] in _BLOB:
                    b += 1
                spans.append((a, b))
                start = text.find(needle, b)
        for head, parts in self._prefixes.items():
            start = text.find(head)
            while start >= 0:
                end = start + max(_common(text, start, part) for part in parts)
                spans.append((start, end))
                start = text.find(head, start + 1)
        return spans

    def _may_hold(self, text):
        """A quick scan: whether any needle is in `text` at all (most texts hold none)."""
        return (
            any(n in text for n in self._whole)
            or any(h in text for h in self._prefixes)
            or any(n in text for n in self._binary)
        )

    def _escaped(self, text):
        """Whether `text` holds an escape of a secret's character."""
        return any(m in text and p.search(text) for m, p in self._kinds)

    def mask(self, text):
        """(text with every secret masked, the secrets' text as found in its decoded view)."""
        if not text or not self.forms:
            return text, []
        found = []
        for form in self.forms:
            if form in text:  # a fast scan first: most texts hold no secret at all
                text = text.replace(form, MASK)
                found.append(self._part_of.get(form, form))
        if self._escaped(text):
            view = self._escape.sub(lambda m: _unescape(m.group()), text)
            if self._may_hold(view):
                text, more = self._mask_decoded(text)
                found += more
        elif any(h in text for h in self._prefixes) or any(n in text for n in self._binary):
            # Whole forms are masked above already: a cut-short key or a blob can be left.
            hits = _merge(self._hits(text))
            found += [text[a:b] for a, b in hits]
            text = _splice(text, hits)
        # Credentials in a URL (http://user:pass@host) are secrets too.
        return _URL_CREDENTIALS.sub("//" + MASK + "@", text), found

    def _mask_decoded(self, text):
        """Mask what the decoded view of `text` holds, in `text` itself (escapes and all)."""
        view, starts, ends = _decode_map(self._escape, text)
        hits = _merge(self._hits(view))
        found = [view[a:b] for a, b in hits]
        spans = _merge((starts[a], ends[b - 1]) for a, b in hits)
        return _splice(text, spans), found

    def __call__(self, text):
        """`text` with every form of every secret, and URL credentials, masked."""
        return self.mask(text)[0]

    def pieces(self, raw, found):
        """`raw` with every JSON string value that is a piece of a found secret masked: a
        stream sends an answer a few characters an event, so a key it repeats is split over
        events (`"sk-live"`, `"-EVILSE"`, ...) and no one event holds it."""
        if not raw or not found:
            return raw

        def piece(m):
            value = self._escape.sub(lambda e: _unescape(e.group()), m.group(2))
            if len(value) >= 2 and any(value in secret for secret in found):
                return f'{m.group(1)}"{MASK}"'
            return m.group()

        masked = _JSON_VALUE.sub(piece, raw)
        if masked != raw:
            masked += (
                "\n[llmbench: pieces of a secret the server split over stream events are "
                "masked in this raw text]"
            )
        return masked

    def data(self, value):
        """A JSON-like value (dicts, lists, strings) with every string in it masked."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {self(k) if isinstance(k, str) else k: self.data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        return value


def _common(text, start, part):
    """How many characters of `part` `text` holds from `start` on."""
    n = 0
    limit = min(len(part), len(text) - start)
    while n < limit and text[start + n] == part[n]:
        n += 1
    return n


def _splice(text, spans):
    """`text` with each (start, end) span replaced by the mask."""
    out, last = [], 0
    for a, b in spans:
        out.append(text[last:a])
        out.append(MASK)
        last = b
    out.append(text[last:])
    return "".join(out)


def redact(text, secrets):
    """Text with every secret (in every encoding a server may echo) masked."""
    return Redactor(secrets)(text)
