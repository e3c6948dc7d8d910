"""A hostile model server: a FakeServer that sends the API key back in every form it can.

    server = HostileServer(KEY).start()

Answers (by the task's question, `Question t{i}?`), judgements, errors and the model list all
carry the key: as base64 inside a larger blob at each byte alignment, hex in both cases, HTML
numeric entities, cut short (`sk-live-EVILSECRET7f****6789`), split over stream events, written
as JSON `\\u` escapes in the raw reply, URL-encoded and with `\\/`, and in a 401's echo of the
request's headers. `traces(text)` says which forms of the key a text still holds, decoding it
every way first, so a test can look for it in pages, files and database bytes.
"""

import base64
import html
import json
import re
from urllib.parse import quote
from urllib.parse import quote_plus
from urllib.parse import unquote

from tests.engine_helpers import call_kind
from tests.fakeserver import FakeServer
from tests.fakeserver import _Handler

KEY = "sk-live-EVILSECRET7f0123456789"
_ESCAPED = re.compile(r"\\+u([0-9a-fA-F]{4})")


def json_escaped(text):
    """Every character as a JSON `\\u` escape."""
    return "".join(f"\\u{ord(c):04x}" for c in text)


def base64_blob(key, offset):
    """The key as base64 inside a larger blob, starting `offset` bytes into a 3-byte group."""
    blob = b"x" * offset + b"attachment: " + key.encode() + b" (end of attachment)"
    return base64.b64encode(blob).decode()


def sse(*contents):
    """A streamed OpenAI reply whose events are written by hand (each content as given)."""
    head = '{"model":"m1","choices":[{"index":0,"delta":{"content":"'
    events = [head + c + '"}}]}' for c in contents]
    events.append('{"model":"m1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}')
    return "".join(f"data: {e}\n\n" for e in events) + "data: [DONE]\n\n"


def judge_reply(key):
    """A judge's whole reply, written by hand: its reason holds the key as `\\u` escapes
    twice over (the judge's JSON inside the reply's JSON), once escaped (plain text once the
    reply is read), as hex and as HTML entities."""
    once = "@ONCE@"
    judgement = json.dumps(
        {
            "score": 50,
            "reason": f"leaked {json_escaped(key)} and {once} and {key.encode().hex()} and "
            + "".join(f"&#{ord(c)};" for c in key),
        }
    ).replace("\\\\u", "\\u")
    content = json.dumps(judgement)[1:-1].replace(once, json_escaped(key))
    return (
        '{"model":"judge","choices":[{"index":0,"finish_reason":"stop",'
        '"message":{"role":"assistant","content":"' + content + '"}}]}'
    )


def answers(key):
    """What the server answers to task t{i}: (spec for the responder)."""
    return [
        {"text": "blob " + " ".join(base64_blob(key, k) for k in range(3)) + " ok"},
        {"text": f"hex {key.encode().hex()} HEX {key.encode().hex().upper()}"},
        {
            "text": "entities "
            + "".join(f"&#{ord(c)};" for c in key)
            + " and "
            + "".join(f"&#x{ord(c):x};" for c in key)
        },
        {"text": f"cut short: {key[:20]}****{key[-4:]}"},
        {"chunks": ["my key is ", key[:7], key[7:14], key[14:22], key[22:], " done"]},
        {"body": sse("escaped ", json_escaped(key), " done")},
        {"text": f"url {quote(key, safe='')} plus {quote_plus(key)} lower {quote(key).lower()}"},
        {"status": 401, "body": None},  # filled in with the request's headers
    ]


class _HostileHandler(_Handler):
    def _send(self, status, payload, headers=None, content_type="application/json"):
        # A stream written by hand (sse) goes out as one, so its events are read one by one.
        if isinstance(payload, str) and payload.startswith("data:"):
            content_type = "text/event-stream"
        super()._send(status, payload, headers, content_type)


class HostileServer(FakeServer):
    """A FakeServer whose replies echo the key (see the module's docstring)."""

    handler = _HostileHandler

    def __init__(self, key=KEY, **kw):
        super().__init__(**kw)
        self.key = key

    def reset(self):
        super().reset()
        key = getattr(self, "key", KEY)
        self.models = ["m1", "judge", key, quote(key, safe=""), json_escaped(key)]
        self.responder = self._respond

    def _respond(self, call):
        kind, _model, last = call_kind(call)
        key = self.key
        if kind == "judge":
            return {"body": judge_reply(key)}
        if kind != "answer":
            return None
        found = re.search(r"t(\d+)\?", last or "")
        choices = answers(key)
        spec = dict(choices[int(found.group(1)) % len(choices)]) if found else {"text": key}
        if spec.get("status") == 401:
            headers = call["headers"]
            message = f"unauthorized: {headers.get('Authorization')} {json_escaped(key)}"
            spec["body"] = json.dumps(
                {"error": {"message": message, "headers": dict(headers)}}
            ).replace("/", "\\/")
        if isinstance(spec.get("body"), str) and spec.get("status", 200) == 200:
            spec["status"] = 200
        return spec


_CONTENT = re.compile(r'"content":\s*"((?:[^"\\]|\\.)*)"')


def _decodings(text):
    """`text` and what it reads as once JSON, URL and HTML escapes are undone (twice over),
    its stream events' pieces joined first (a key split over events is whole again)."""
    seen = [text + "\n" + "".join(_CONTENT.findall(text))]
    for _ in range(2):
        step = seen[-1]
        step = _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), step).replace("\\/", "/")
        step = html.unescape(unquote(step))
        seen.append(step)
    return seen


def _binary_traces(key):
    """The base64 characters the key decides at each alignment, and its hex."""
    raw = key.encode()
    traces = {raw.hex(), raw.hex().upper()}
    for offset in range(3):
        padded = b"\0" * offset + raw
        encoded = base64.b64encode(padded).decode()
        traces.add(encoded[-(-8 * offset // 6) : 8 * len(padded) // 6])
    return traces


def traces(text, key=KEY):
    """The forms of `key` found in `text` (str or bytes): whole, its first 8 characters or more,
    its body, base64 or hex, after every decoding."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace") + text.decode("utf-16-le", "replace")
    needles = {key, key[:8], "EVILSECR", *_binary_traces(key)}
    found = set()
    for view in _decodings(text):
        found.update(n for n in needles if n in view)
    return sorted(found)
