"""Shared HTTP for adapters: one Session, timeouts on every call, errors a person understands."""

import codecs
import json
import re
import time
import weakref
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from urllib.parse import urljoin
from urllib.parse import urlsplit
from urllib.parse import urlunsplit

import requests
import urllib3

from ..jsontext import loads
from ..latency import gaps
from .interface import Cancelled
from .interface import ProviderError
from .interface import WireFormat
from .redaction import Redactor
from .urls import credential_values
from .urls import mask_url
from .urls import origin

CONNECT_TIMEOUT = 10.0  # seconds; a server that does not accept within this is down
ERROR_SNIPPET = 200
RAW_KEEP_CHARS = 2 * 1024 * 1024  # of a reply's raw text; the rest is left out (and said so)
RAW_ERROR_CHARS = 10000  # of the raw body kept with an error
READ_CHUNK = 16384
REDIRECTS = (301, 302, 303, 307, 308)
MAX_REDIRECTS = 5  # on the provider's own server; a redirect to another one is refused
# A decode rate needs this many tokens over this long after the first one; fewer, or faster
# (a whole answer in one network chunk), and the gap measures the network, not the model.
MIN_RATE_TOKENS = 8
MIN_RATE_MS = 50.0


def parse_retry_after(value, now=None):
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), else None."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


def error_message_from_body(text):
    """The human part of an error body: error.message / error / message / detail, else the text."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return " ".join(text.split())[:ERROR_SNIPPET]
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            err = err.get("message") or err.get("detail") or err.get("error") or json.dumps(err)
        elif err is None:
            err = data.get("message") or data.get("detail") or json.dumps(data)
        return str(err)[:ERROR_SNIPPET]
    return str(data)[:ERROR_SNIPPET]


def busy_reason(status, detail, retry_after=None):
    """Why a server that answered is too busy for the call now, else None: 'loading model'
    (llama.cpp's 503 'Loading model', Ollama's), or 'busy (429, retry after 1 s)' for a 429 or
    a 503 (Ollama's 'server busy', an overloaded proxy). A plain 500 is not: it may be the
    request's own fault."""
    low = (detail or "").lower()
    if status >= 500 and ("loading model" in low or "model is loading" in low):
        return "loading model"
    if status not in (429, 503):
        return None
    after = f", retry after {retry_after:g} s" if retry_after else ""
    return f"busy ({status}{after})"


def is_model_not_found(message):
    """True for the ways servers say an unknown model was asked for."""
    low = message.lower()
    return "model" in low and ("not found" in low or "does not exist" in low or "no such" in low)


def content_text(value):
    """The text of a message's `content`: a string, or the text parts of a list of content
    parts; None when it is anything else (a reply we cannot use)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return None
    parts = []
    for part in value:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            parts.append(part["text"])
        elif not (isinstance(part, dict) and part.get("type") not in (None, "text")):
            return None  # a part that should be text and is not
    return "".join(parts)


def tool_call(name, arguments):
    """One called tool as {"name", "arguments"}: arguments a dict when they are a JSON object
    (or its text), else kept as given (malformed JSON is the model's answer, not our error)."""
    if isinstance(arguments, str):
        try:
            parsed = loads(arguments) if arguments.strip() else {}
        except ValueError:
            parsed = None
        arguments = parsed if isinstance(parsed, dict) else arguments
    elif arguments is None:
        arguments = {}
    return {"name": name if isinstance(name, str) else "", "arguments": arguments}


def as_dict(value):
    """`value` when it is a JSON object, else an empty one (odd reply shapes read as absent)."""
    return value if isinstance(value, dict) else {}


def stream_rate(tokens, window_ms):
    """Tokens per second over the decode window (first token to the end), or None when the
    window is too short or holds too few tokens to measure a model's speed."""
    if not tokens or window_ms is None or tokens < MIN_RATE_TOKENS or window_ms < MIN_RATE_MS:
        return None
    # The first token arrives at TTFT, so the tokens after it are produced in the window.
    return (tokens - 1) / (window_ms / 1000.0)


class StreamBody:
    """What a streamed reply sent so far, within the caps: its raw lines and the answer text.

    The answer stops growing at `max_chars` (the rest is cut and `cut` says so); raw lines stop
    being kept past RAW_KEEP_CHARS, with a last line saying how many were left out.
    """

    def __init__(self, max_chars):
        self.max_chars = max_chars
        self.lines, self.parts = [], []
        self.size = self.raw_size = self.dropped = 0
        self.cut = False

    def line(self, line):
        """Keep one raw line (while there is room)."""
        if self.raw_size + len(line) <= RAW_KEEP_CHARS:
            self.lines.append(line)
            self.raw_size += len(line) + 1
        else:
            self.dropped += 1

    def add(self, text):
        """Add answer text; False once the cap is reached (stop reading: the rest is cut)."""
        room = self.max_chars - self.size
        if len(text) > room:
            text, self.cut = text[:room], True
        if text:
            self.parts.append(text)
            self.size += len(text)
        return not self.cut

    def add_cut(self, text):
        """Add the text recovered from a line cut off at the cap: the answer ends there, cut."""
        self.add(text)
        self.cut = True

    @property
    def count(self):
        """How many pieces of content arrived (about one token each)."""
        return len(self.parts)

    @property
    def text(self):
        return "".join(self.parts)

    @property
    def raw(self):
        text = "\n".join(self.lines)
        if self.dropped:
            text += f"\n[llmbench: {self.dropped} more lines not kept (raw text over the cap)]"
        return text


class Cut:
    """The first bytes of a reply or stream line bigger than its cap: the rest was not read."""

    def __init__(self, data):
        self.data = data

    def start(self, chars=RAW_ERROR_CHARS):
        """Its start as text, saying that it was cut (for the raw text kept)."""
        text = _decode_start(self.data[: chars * 4])[:chars]
        return text + " [llmbench: cut here at the size cap; the rest was not read]"


_PLAIN = re.compile(rb'[^"\\]+')
_HEX4 = re.compile(rb"[0-9a-fA-F]{4}")
_ESCAPES = {
    b'"': '"',
    b"\\": "\\",
    b"/": "/",
    b"b": "\b",
    b"f": "\f",
    b"n": "\n",
    b"r": "\r",
    b"t": "\t",
}


def answer_prefix(data, keys, max_chars):
    """The first `max_chars` characters of the first JSON string value of one of `keys` in
    the bytes of a JSON text cut off anywhere (None when no such string starts in them)."""
    found = [re.search(rb'"' + key.encode() + rb'"\s*:\s*"', data) for key in keys]
    found = [m.end() for m in found if m]
    return _string_prefix(data, min(found), max_chars) if found else None


def _string_prefix(data, pos, max_chars):
    """Decode a JSON string's bytes from `pos` (after its opening quote) up to its end,
    `max_chars` characters, or where the bytes stop (an escape or character cut in two at the
    end is left out). Decodes no more than it keeps: a window of at most the room left."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    parts, size, end = [], 0, len(data)
    while size < max_chars and pos < end:
        # A character is 1-4 bytes: `room` bytes never decode to more than `room` characters.
        plain = _PLAIN.match(data, pos, min(end, pos + max_chars - size))
        if plain:
            text = decoder.decode(plain.group())
            parts.append(text)
            size += len(text)
            pos = plain.end()
            continue
        rest = decoder.decode(b"", final=True)  # a character cut by an escape: not UTF-8
        if rest:
            parts.append(rest)
            size += len(rest)
        decoder.reset()
        if data[pos : pos + 1] == b'"':
            break  # the string ended
        escape = bytes(data[pos + 1 : pos + 2])
        if escape in _ESCAPES:
            parts.append(_ESCAPES[escape])
            pos += 2
        elif escape == b"u" and _HEX4.fullmatch(data, pos + 2, pos + 6):
            code, pos = int(data[pos + 2 : pos + 6], 16), pos + 6
            if 0xD800 <= code < 0xDC00:
                if data[pos : pos + 2] == b"\\u" and _HEX4.fullmatch(data, pos + 2, pos + 6):
                    low = int(data[pos + 2 : pos + 6], 16)
                    if 0xDC00 <= low < 0xE000:
                        code, pos = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00), pos + 6
                elif pos + 6 > end and b"\\u".startswith(bytes(data[pos : pos + 2])):
                    break  # its other half was not read
            # A lone surrogate cannot be stored as UTF-8: shown as the replacement character.
            parts.append("\ufffd" if 0xD800 <= code < 0xE000 else chr(code))
        else:
            break  # an escape cut in two, or not JSON
        size += 1
    return "".join(parts)[:max_chars]


def _decode_start(data):
    """Bytes cut off anywhere as text: a character cut in two at the end is left out."""
    return codecs.getincrementaldecoder("utf-8")("replace").decode(data)


class Transport(requests.adapters.HTTPAdapter):
    """requests' HTTP transport, with each URL's connection pool and request target looked up
    once. requests selects the proxy, parses the URL and asks urllib3's PoolManager for the
    pool on every call (~6 % of a call's CPU under py-spy); an adapter calls a few URLs."""

    KEPT = 64  # URLs remembered; past that the memory starts again

    def __init__(self):
        super().__init__()
        self._pools = {}
        self._targets = {}

    def get_connection_with_tls_context(self, request, verify, proxies=None, cert=None):
        key = (request.url, verify, cert, _items(proxies))
        pool = self._pools.get(key)
        if pool is None or pool.pool is None:  # new, or closed (the PoolManager let it go)
            pool = super().get_connection_with_tls_context(request, verify, proxies, cert)
            if len(self._pools) >= self.KEPT:
                self._pools.clear()
            self._pools[key] = pool
        return pool

    def request_url(self, request, proxies):
        key = (request.url, _items(proxies))
        target = self._targets.get(key)
        if target is None:
            target = super().request_url(request, proxies)
            if len(self._targets) >= self.KEPT:
                self._targets.clear()
            self._targets[key] = target
        return target


# requests' JSON body (prepare_body: json.dumps(body, allow_nan=False) as UTF-8), one encoder
# kept rather than one built per call.
_JSON_BODY = json.JSONEncoder(allow_nan=False).encode


def _json_body(prepared, body):
    """Set a prepared request's JSON body as requests' prepare_body(json=body) sets it: the
    same bytes and headers, in the same order, and the same error for a body that is not
    JSON (NaN, infinity)."""
    try:
        data = _JSON_BODY(body).encode("utf-8")
    except ValueError as exc:
        raise requests.exceptions.InvalidJSONError(exc, request=prepared) from None
    prepared.headers["Content-Length"] = str(len(data))
    if "content-type" not in prepared.headers:
        prepared.headers["Content-Type"] = "application/json"
    prepared.body = data


def _items(mapping):
    """A dict as something hashable (a cache key)."""
    return tuple(sorted(mapping.items())) if mapping else ()


class HttpAdapter(WireFormat):
    """Base class: holds the config and a requests.Session with the provider's headers."""

    def __init__(self, config):
        self.config = config
        self.session = requests.Session()
        transport = Transport()
        self.session.mount("http://", transport)
        self.session.mount("https://", transport)
        self.session.headers.update({k: str(v) for k, v in (config.headers or {}).items()})
        _settle_environment(self.session, config.base_url)
        self._prepared = {}  # (method, URL) -> its PreparedRequest without a body (_prepare)
        self._secrets = [str(v) for v in (config.headers or {}).values() if v]
        # A key in an endpoint (a row saved before endpoints were checked) is masked like one.
        for endpoint in (config.models_endpoint, config.inference_endpoint):
            self._secrets += credential_values(endpoint)
        self._redact = Redactor(self._secrets)
        # Close pooled sockets when the adapter is dropped (no ResourceWarning under pytest).
        self._finalizer = weakref.finalize(self, self.session.close)

    def close(self):
        """Close the pooled connections."""
        self._finalizer()

    @property
    def timeout(self):
        """(connect, read) timeouts for requests, from the provider's timeout."""
        total = float(self.config.timeout or 120.0)
        return (min(CONNECT_TIMEOUT, total), total)

    def call_seconds(self, params=None):
        """The total time one call may take: the target's max_seconds, else the provider's
        timeout (which also bounds each read, so a trickling stream cannot go on for ever)."""
        limit = (params or {}).get("max_seconds")
        if isinstance(limit, int | float) and not isinstance(limit, bool) and limit > 0:
            return float(limit)
        return float(self.config.timeout or 120.0)

    @property
    def max_answer_chars(self):
        """The answer-size cap: text past it is cut, and the completion says so."""
        return int(self.config.max_answer_chars)

    def url(self, endpoint):
        """Base URL joined with an endpoint path."""
        return self.config.base_url.rstrip("/") + "/" + (endpoint or "").lstrip("/")

    def redact(self, text):
        """Text without any of this provider's header values (in any encoding)."""
        return self._redact(text)

    def redact_data(self, value):
        """A JSON-like value (a model list entry, a parsed reply) with every string masked."""
        return self._redact.data(value) if self._secrets else value

    def error(self, message, **kw):
        """A ProviderError whose message and raw text carry no secret (masked, then cut)."""
        if kw.get("raw") is not None:
            kw["raw"] = self.redact(kw["raw"])[:RAW_ERROR_CHARS]
        return ProviderError(self.redact(message), **kw)

    def malformed(self, message, raw):
        """A permanent ProviderError for a reply we cannot use (its raw text kept, capped)."""
        return self.error(message, transient=False, kind="malformed", raw=raw)

    def no_model_list(self, data, key):
        """The error for a models endpoint whose reply holds no `key` array."""
        return self.malformed(
            f"Server sent no model list from {self.url(self.models_endpoint)} "
            f"(expected a '{key}' array)",
            json.dumps(data),
        )

    def finish(self, completion):
        """A completion without any secret the server may have echoed into it."""
        if not self._secrets:
            return completion
        completion.text, found = self._redact.mask(completion.text)
        # A streamed key is split over events that no one holds whole: the pieces found in
        # the joined answer are masked in the raw text too (and the raw text says so).
        completion.raw = self._redact.pieces(self.redact(completion.raw), found)
        completion.model = self.redact(completion.model)
        if completion.raw_json is not None:
            # Unreadable once masked: dropped, as the raw text (masked) is still kept.
            completion.raw_json = self._redact_json(completion.raw_json, lambda masked: None)
        if completion.tool_calls:
            # A model may echo a key into a call's arguments as well as into its text.
            completion.tool_calls = self._redact_json(
                completion.tool_calls, lambda masked: [{"name": "", "arguments": masked}]
            )
        return completion

    def _redact_json(self, value, unreadable):
        """`value` with every secret masked in its JSON text; `unreadable(masked text)` when
        the masked text no longer parses."""
        text = json.dumps(value, ensure_ascii=False)
        masked = self.redact(text)
        if masked == text:
            return value
        try:
            return json.loads(masked)
        except ValueError:
            return unreadable(masked)

    # ---- requests ------------------------------------------------------------------------
    def request(self, method, endpoint, *, json_body=None, cancel=None, timeout=None):
        """Send one request; a >= 400 answer or a network failure raises ProviderError.

        The body is never read here: read_text / iter_lines read it in chunks, within the call's
        deadline and size caps.
        """
        check_cancel(cancel)
        url = self.url(endpoint)
        timeout = timeout or self.timeout
        resp = self._send(self._prepare(method, url, json_body), url, timeout, cancel)
        hops = 0
        while (target := self._redirect_target(resp, url)) is not None:
            # Only on the provider's own server (_redirect_target refuses any other): a redirect
            # elsewhere would carry its headers there (requests drops Authorization on a host
            # change, not X-Api-Key and the like).
            hops += 1
            if hops > MAX_REDIRECTS:
                raise self.error(
                    f"Server at {mask_url(url)} redirected more than {MAX_REDIRECTS} times; "
                    "set the provider's base URL to where the server really is",
                    transient=False,
                    kind="client",
                    status=resp.status_code,
                )
            method, json_body = _method_after(resp.status_code, method, json_body)
            check_cancel(cancel)
            prepared = self.session.prepare_request(
                requests.Request(method, target, json=json_body)
            )
            url = mask_url(target)  # as shown in messages: a server's own token is not
            resp = self._send(prepared, url, timeout, cancel)
        if resp.status_code >= 400:
            try:
                body = self.read_text(resp, url, limit=RAW_ERROR_CHARS * 4)
            except ProviderError:
                body = ""
            raise self.http_error(resp.status_code, resp.reason, body, resp.headers, url)
        return resp

    def _send(self, prepared, url, timeout, cancel):
        """Send one prepared request without following redirects (request() decides)."""
        attempt = 1
        while True:
            try:
                return self.session.send(
                    prepared,
                    stream=True,
                    timeout=timeout,
                    allow_redirects=False,
                    proxies=self.session.proxies,
                )
            except requests.ConnectionError as exc:
                # A pooled keep-alive connection the server had just closed (llama.cpp closes
                # them after a few requests) fails before any answer: one retry on a new one.
                if attempt == 1 and _closed_without_answer(exc):
                    check_cancel(cancel)
                    attempt = 2
                    continue
                raise self.network_error(exc, url, timeout) from None
            except requests.RequestException as exc:
                raise self.network_error(exc, url, timeout) from None

    def _redirect_target(self, resp, url):
        """The URL a redirect answer points to when it is on the provider's own server (its
        scheme, host and port), else None for an answer that is not a redirect. A redirect to
        anywhere else is refused: a permanent error naming where it pointed (masked)."""
        location = resp.headers.get("Location")
        if resp.status_code not in REDIRECTS or not location:
            return None
        resp.close()
        target = urljoin(url, location.strip())
        if origin(target) == origin(self.config.base_url):
            return target
        raise self.error(
            f"Server at {mask_url(url)} answered {resp.status_code} {resp.reason or ''}".rstrip()
            + f", a redirect to {mask_url(target)} on another server; llmbench does not follow "
            "it, so the provider's headers are never sent there. If the server moved, set the "
            f"provider's base URL to {self._moved_base(url, target)} (and enter its secret "
            "headers again)",
            transient=False,
            kind="client",
            status=resp.status_code,
        )

    def _moved_base(self, url, target):
        """The base URL a redirect suggests (masked): the target without the endpoint's path
        when it ends with it, else the target's scheme and host."""
        endpoint = urlsplit(url).path[len(urlsplit(self.config.base_url).path.rstrip("/")) :]
        parts = urlsplit(target)
        if endpoint and parts.path.endswith(endpoint) and len(parts.path) > len(endpoint):
            path = parts.path[: -len(endpoint)]
        else:
            path = ""
        return mask_url(urlunsplit((parts.scheme, parts.netloc, path, "", "")))

    def _prepare(self, method, url, json_body):
        """The request to send: a copy of the (method, URL)'s prepared request with the body.

        requests' Session.request merges the session's headers, auth, hooks and cookies and
        parses the URL again on every call (~13 % of a call's CPU); here that is done once per
        endpoint. While the session holds cookies (a server set one), every call is prepared
        in full, so they are always sent as they are now.
        """
        if self.session.cookies:
            return self.session.prepare_request(requests.Request(method, url, json=json_body))
        template = self._prepared.get((method, url))
        if template is None:
            template = self.session.prepare_request(requests.Request(method, url))
            self._prepared[(method, url)] = template
        # template.copy() without its copy of the cookie jar (a new jar per call): the jar is
        # empty (no cookie is held, above) and nothing writes to a prepared request's jar;
        # its cookies go out only as the Cookie header prepare_request set, copied here.
        prepared = requests.PreparedRequest()
        prepared.method, prepared.url = template.method, template.url
        prepared.hooks = template.hooks
        prepared.headers = template.headers.copy()
        prepared._cookies = template._cookies
        if json_body is not None:
            _json_body(prepared, json_body)
        return prepared

    def get_json(self, endpoint, *, cancel=None, timeout=None):
        """GET an endpoint and parse its JSON body."""
        resp = self.request("GET", endpoint, cancel=cancel, timeout=timeout)
        return self.parse_json(self.read_text(resp, self.url(endpoint)), self.url(endpoint))

    def read_text(self, resp, url, *, deadline=None, limit=None, cancel=None):
        """The whole body as text, read in chunks within the deadline and `limit` bytes (a
        bigger reply is an error: it cannot be parsed in part); closes the response."""
        limit = limit or self.body_limit
        data, over = self._read_body(resp, url, deadline, limit, cancel)
        if over:
            raise self.error(
                f"Server sent a reply from {url} larger than {limit // 1024} KiB; "
                "llmbench does not read it all (lower max_tokens)",
                transient=False,
                kind="too_large",
                raw=bytes(data[:RAW_ERROR_CHARS]).decode("utf-8", "replace"),
            )
        return data.decode("utf-8", "replace")

    def read_answer(self, resp, url, *, deadline=None, cancel=None):
        """A chat reply's body as text; when it is bigger than body_limit, a Cut of its first
        body_limit bytes (the rest is not read; cut_answer takes the answer's start from it).
        Closes the response."""
        data, over = self._read_body(resp, url, deadline, self.body_limit, cancel)
        return Cut(data) if over else data.decode("utf-8", "replace")

    @property
    def body_limit(self):
        """Bytes of a reply read at most: room for the whole answer even when every character
        of it is JSON-escaped (\\uXXXX), and the rest of the reply."""
        return 8 * self.max_answer_chars + 65536

    @property
    def line_limit(self):
        """Bytes of one stream line kept at most (the rest of a longer line is not kept)."""
        return 4 * self.max_answer_chars + 65536

    def _read_body(self, resp, url, deadline, limit, cancel):
        """(the body's first `limit` bytes, True when it is longer: the rest is not read),
        read in chunks within the deadline; closes the response."""
        data = bytearray()
        try:
            for chunk in self._chunks(resp):
                check_cancel(cancel)
                self.check_deadline(deadline, url)
                if len(data) + len(chunk) > limit:
                    data += chunk[: limit - len(data)]
                    return data, True
                data += chunk
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise self.network_error(exc, url, self.timeout, mid_stream=True) from None
        finally:
            resp.close()
        return data, False

    def cut_answer(self, cut, keys, url, raw, resp=None):
        """The answer's start (at most max_answer_chars) in a reply or stream line Cut at its
        size cap; a permanent 'too_large' error when no answer starts in it."""
        answer = answer_prefix(cut.data, keys, self.max_answer_chars)
        if answer is None:
            if resp is not None:
                resp.close()
            raise self.error(
                f"Server sent a reply from {url} bigger than llmbench reads "
                f"({len(cut.data) // 1024} KiB) with no answer text in it",
                transient=False,
                kind="too_large",
                raw=raw,
            )
        return answer

    def parse_json(self, text, url):
        """JSON from a body, or a permanent 'malformed' ProviderError."""
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            snippet = " ".join(self.redact(text).split())[:ERROR_SNIPPET]
            hint = " (is the base URL / endpoint right?)" if snippet.startswith("<") else ""
            raise self.malformed(
                f"Server sent a response from {url} that is not valid JSON{hint}: {snippet!r}", text
            ) from None

    @staticmethod
    def drain(resp, limit=65536):
        """Read what is left of a finished stream so the connection goes back to the pool.

        Servers end the body right after their last event; without this every request would
        open a new TCP (and TLS) connection. Bounded, and any error just means no reuse.
        """
        try:
            read = 0
            while read < limit:
                chunk = resp.raw.read(4096)
                if not chunk:
                    break
                read += len(chunk)
        except Exception:  # noqa: BLE001 - best effort only
            pass

    def stream_json(self, text, resp, url, what, body):
        """One streamed event's JSON, or a permanent 'malformed' ProviderError (closes resp)."""
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            resp.close()
            raise self.malformed(
                f"Server sent a {what} from {url} that is not valid JSON: "
                f"{self.redact(text)[:200]!r}",
                body.raw,
            ) from None

    def mid_answer_error(self, detail, raw):
        """The transient ProviderError for an error the server reports inside its answer."""
        return self.error(
            f"Server reported an error mid-answer: {self.redact(str(detail))[:200]}",
            transient=True,
            kind="server",
            raw=raw,
        )

    def check_deadline(self, deadline, url):
        """Raise the call's permanent 'deadline' error once its total time is up."""
        if deadline is not None and time.monotonic() > deadline[0]:
            raise self.error(
                f"No complete answer from {url} within {deadline[1]:g} s, the total time one "
                "call may take (the provider's timeout, or the target's max_seconds); raise "
                "it or lower max_tokens",
                transient=False,
                kind="deadline",
            )

    def deadline(self, params=None):
        """(monotonic end, seconds) of a call starting now."""
        seconds = self.call_seconds(params)
        return (time.monotonic() + seconds, seconds)

    @staticmethod
    def _chunks(resp):
        """The body's bytes as they arrive (a chunk of a chunked stream, or what one read
        returns), decompressed; never waits to fill a buffer."""
        while True:
            data = resp.raw.read1(READ_CHUNK, decode_content=True)
            if not data:
                return
            yield data

    def iter_lines(self, resp, url, cancel=None, deadline=None, max_line=None):
        """Decoded lines of a streamed body; checks cancel and the deadline as data arrives.
        A line longer than `max_line` bytes comes as a Cut of its first `max_line` bytes, the
        rest of it dropped as it arrives (memory stays bounded); closes the response."""
        max_line = max_line or self.line_limit
        pending = bytearray()  # the line not ended yet
        skipping = False  # inside a line already handed out as a Cut
        try:
            for chunk in self._chunks(resp):
                check_cancel(cancel)
                self.check_deadline(deadline, url)
                if skipping:
                    newline = chunk.find(b"\n")
                    if newline < 0:
                        continue
                    chunk, skipping = chunk[newline + 1 :], False
                if b"\n" in chunk:
                    lines = chunk.split(b"\n")
                    if pending:
                        lines[0] = bytes(pending + lines[0])
                    pending = bytearray(lines.pop())
                    for line in lines:  # inline, not _line(): this loop runs once per token
                        if len(line) > max_line:
                            yield Cut(line[:max_line])
                        else:
                            yield line.rstrip(b"\r").decode("utf-8", "replace")
                        if cancel is not None and cancel.is_set():
                            raise Cancelled()
                else:
                    pending += chunk
                if len(pending) > max_line:
                    del pending[max_line:]
                    yield Cut(pending)  # handed over whole: a new buffer follows, not a copy
                    pending, skipping = bytearray(), True
            if pending:
                yield _line(pending, max_line)
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise self.network_error(exc, url, self.timeout, mid_stream=True) from None
        finally:
            resp.close()

    # ---- error normalisation ---------------------------------------------------------------
    def network_error(self, exc, url, timeout, mid_stream=False):
        """A ProviderError for a failure below HTTP (refused, reset, timed out, dropped).

        Refused, host name not found and connect timeouts mean the server cannot be reached at
        all: they carry `unreachable` (the engine's breaker counts them against the server).
        """
        text = str(exc)
        low = text.lower()
        read_timeout = timeout[1] if isinstance(timeout, tuple) else timeout
        when = " mid-answer" if mid_stream else ""
        if isinstance(exc, requests.ConnectTimeout):
            connect = timeout[0] if isinstance(timeout, tuple) else timeout
            msg = f"Timed out connecting to {url} (after {connect:g} s)"
            return self.error(msg, transient=True, kind="timeout", unreachable="connect timeout")
        if isinstance(exc, requests.Timeout | TimeoutError) or "timed out" in low:
            msg = f"No answer from {url} within {read_timeout:g} s{when} (read timeout)"
            return self.error(msg, transient=True, kind="timeout")
        unreachable = None
        if "refused" in low:
            reason = "connection refused (is the server running?)"
            unreachable = "connection refused"
        elif "reset" in low:
            reason = "connection reset by the server"
        elif (
            "name or service not known" in low
            or "nodename nor servname" in low
            or "failed to resolve" in low
            or "getaddrinfo" in low
            or "temporary failure in name resolution" in low
        ):
            reason = "host name not found"
            unreachable = reason
        elif not mid_stream and "failed to establish a new connection" in low:
            reason = text.rsplit(":", 1)[-1].strip(" ')\"") or "no connection"
            unreachable = reason.lower()[:80]
        elif mid_stream or isinstance(exc, requests.exceptions.ChunkedEncodingError):
            reason = "the server closed the connection before the answer was complete"
        elif "remote end closed" in low or "aborted" in low:
            reason = "the server closed the connection without answering"
        else:
            reason = text.splitlines()[0][:ERROR_SNIPPET] if text else type(exc).__name__
        return self.error(
            f"Could not connect to {url}: {reason}"
            if not mid_stream
            else f"Connection to {url} failed{when}: {reason}",
            transient=True,
            kind="connection",
            unreachable=None if mid_stream else unreachable,
        )

    def http_error(self, status, reason, body, headers, url):
        """A ProviderError for an HTTP error status, classified transient or permanent."""
        try:
            phrase = reason or HTTPStatus(status).phrase
        except ValueError:
            phrase = ""
        # Masked before anything is cut: a secret cut in two would not be recognised.
        body = self.redact(body or "")
        detail = error_message_from_body(body) or "(empty body)"
        msg = f"Server answered {status} {phrase}: {detail}".replace(" :", ":")
        kw = {"status": status, "raw": body}
        # 503 may carry Retry-After too (maintenance, overloaded); honour it on any status.
        retry = parse_retry_after((headers or {}).get("Retry-After"))
        if retry is not None:
            msg += f" (retry after {retry:.1f}".rstrip("0").rstrip(".") + " s)"
        busy = busy_reason(status, detail, retry)
        if status == 429:
            kw["busy"] = busy
            return self.error(msg, transient=True, kind="rate_limit", retry_after=retry, **kw)
        if status == 404 or is_model_not_found(detail):
            return self.error(f"{msg} [{url}]", transient=False, kind="not_found", **kw)
        if status >= 500:
            kw["busy"] = busy
            return self.error(msg, transient=True, kind="server", retry_after=retry, **kw)
        if status in (408, 425):  # request timeout / too early: worth a retry
            return self.error(msg, transient=True, kind="timeout", **kw)
        return self.error(msg, transient=False, kind="client", **kw)


def _settle_environment(session, base_url):
    """Read the environment's proxies (HTTP(S)_PROXY, ALL_PROXY, NO_PROXY), CA bundle
    (REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE) and ~/.netrc once for the provider's base URL, then
    turn requests' own lookup off. requests does the same on every call (trust_env), and that
    was ~10 % of a call's CPU (py-spy); every URL an adapter calls is under its base URL, so
    the answer is the same. The environment is read again when the adapter is built again."""
    base_url = base_url or ""
    settings = session.merge_environment_settings(base_url, {}, None, None, None)
    session.proxies = settings["proxies"]
    session.verify = settings["verify"]
    # As requests does: netrc credentials for the host, unless the call brings its own auth.
    session.auth = requests.utils.get_netrc_auth(base_url) if base_url else None
    session.trust_env = False


def _line(data, max_line):
    """One stream line as text; a Cut of its start when it is longer than `max_line`."""
    if len(data) > max_line:
        return Cut(data[:max_line])
    return data.rstrip(b"\r").decode("utf-8", "replace")


def _method_after(status, method, json_body):
    """(method, body) to send after a redirect: 307/308 repeat the request; 303, and 301/302
    after a POST, become a GET without a body (what browsers and requests do)."""
    if status == 303 or (status in (301, 302) and method == "POST"):
        return "GET", None
    return method, json_body


def _closed_without_answer(exc):
    """True when the server dropped the connection before sending any response byte."""
    text = str(exc).lower()
    return "remote end closed" in text or "connection aborted" in text


def check_cancel(cancel):
    """Raise Cancelled when the cancel event is set."""
    if cancel is not None and cancel.is_set():
        raise Cancelled()


def number(value):
    """A float from a JSON value, or None when it is missing or not a number."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if number == number and abs(number) != float("inf") else None


def integer(value):
    """An int from a JSON value, or None."""
    num = number(value)
    return int(num) if num is not None else None


def estimate_from_stream(completion, pieces, clock, unseen=0):
    """Fill what the server did not count: one streamed piece (answer or reasoning) is about
    one token; the decode rate from our own clock over every generated token, from the first
    token on any channel to the last, when there is enough of the stream to measure
    (stream_rate). Reasoning counts: timing only the answer would divide the reasoning tokens
    too by the answer's window (twice the rate with as many reasoning tokens as answer ones).
    `unseen`: tokens the server counted but did not stream (hidden reasoning, made before the
    first token we saw), so not in the window."""
    if completion.completion_tokens is None and pieces:
        completion.completion_tokens = pieces
        completion.tokens_estimated = True
    if completion.tokens_per_second is None and clock.first is not None:
        window_ms = (clock.last - clock.first) * 1000
        tokens = completion.completion_tokens
        rate = stream_rate(tokens - unseen if tokens and unseen else tokens, window_ms)
        if rate is not None:
            completion.decode_ms = completion.decode_ms or window_ms
            completion.tokens_per_second = rate
            # Estimated only when the token count is ours; the server's count timed by us is
            # a measurement.
            completion.tps_source = (
                "stream.estimate" if completion.tokens_estimated else "stream.timing"
            )


class TokenClock:
    """When a stream's token-bearing events arrived (time.perf_counter), and which was the
    first answer event: one clock read and one append per event, the rest worked out at the
    end. Events with no token (a role, a finish reason, usage) are never ticked."""

    __slots__ = ("first", "first_answer", "last", "times")

    def __init__(self):
        self.first = self.first_answer = self.last = None
        self.times = []

    def tick(self, answer):
        """One event that carried tokens arrived now; `answer`: some of them are the answer
        (content or a tool call), not reasoning."""
        now = time.perf_counter()
        if self.first is None:
            self.first = now
        if answer and self.first_answer is None:
            self.first_answer = now
        self.last = now
        self.times.append(now)

    def apply(self, completion, start):
        """Put the stream's timing on a Completion, each time from `start` (the request sent)."""
        if self.first is None:
            return
        completion.ttft_ms = (self.first - start) * 1000
        if self.first_answer is not None:
            completion.first_answer_ms = (self.first_answer - start) * 1000
        completion.last_token_ms = (self.last - start) * 1000
        completion.chunks = len(self.times)
        completion.gaps_ms = gaps(self.times)


class Reasoning:
    """A stream's reasoning, kept apart from the answer: its text within the answer's cap (the
    rest is dropped, never the answer: reading goes on) and how many pieces came."""

    def __init__(self, max_chars):
        self.text = StreamBody(max_chars)
        self.pieces = 0

    def add(self, text):
        """Take one reasoning piece; True when it held text (a token-bearing event)."""
        if not text:
            return False
        self.pieces += 1
        self.text.add(text)
        return True

    def apply(self, completion, server_count=None):
        """Reasoning text and tokens (the server's count when it gives one) on a Completion."""
        if self.pieces:
            completion.reasoning_text = self.text.text
        if server_count is not None:
            completion.reasoning_tokens = server_count
        elif self.pieces:
            completion.reasoning_tokens = self.pieces
