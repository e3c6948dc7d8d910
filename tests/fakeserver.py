"""A scripted fake model server over real HTTP on 127.0.0.1: OpenAI and Ollama wire formats.

    server = FakeServer(); server.start()
    server.enqueue("Paris", status=200, latency=0.0, chunks=None, usage=None, timings=None)
    server.enqueue(tool_calls=[{"name": "get_weather", "arguments": {"city": "Paris"}}])
    requests.post(server.url + "/v1/chat/completions", json={...})
    server.calls[-1]["body"]

Queued replies are consumed FIFO by chat requests (and by GET model listings only when queued
with that exact `path=`); `model=`/`path=` restrict what a queued reply matches. With nothing
queued, `responder(call)` may return a reply spec (same keys as enqueue; it waits `default_latency`
unless it names its own `latency`); else the default reply:
`default_text` after `default_latency` seconds, or a JSON judgement for judge requests.
"""

import json
import re
import socket
import threading
import time
from datetime import UTC
from datetime import datetime
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from urllib.parse import urlsplit

JUDGE_DEFAULT = {"score": 80, "reason": "fake judge"}
SPEC_DEFAULTS = {
    "text": None,
    "model": None,
    "path": None,
    "status": 200,
    "latency": 0.0,
    "retry_after": None,
    "malformed": False,
    "drop": False,
    "body": None,
    "chunks": None,
    "chunk_delay": 0.0,
    "usage": None,
    "timings": None,
    "finish_reason": "stop",
    # [{"name", "arguments"}] the answer calls (arguments an object, or text sent as is); the
    # text defaults to "" beside them. OpenAI streams each call's arguments in `tool_chunk`
    # characters per event (0: each call whole in one event); Ollama sends each call whole.
    "tool_calls": None,
    "tool_chunk": 0,
}
ERROR_TYPES = {404: "not_found_error", 429: "rate_limit_error"}


def split_tokens(text):
    """Split text into word-ish pieces that join back to exactly the text."""
    return re.findall(r"\s*\S+|\s+", text) or ([text] if text else [])


class FakeServer:
    """A real threaded HTTP server whose answers tests script with enqueue()."""

    handler = None  # a subclass of _Handler to serve with (a hostile server's), else _Handler

    def __init__(self, host="127.0.0.1", port=0):
        self._lock = threading.Lock()
        self._calls_changed = threading.Condition(self._lock)
        self._abort = threading.Event()  # set by stop() and reset(): sleeping replies give up
        self._host, self._port = host, port
        self._httpd = None
        self._thread = None
        self._conns = {}  # handler thread -> socket, closed on stop()
        self.reset()

    # ---- lifecycle -------------------------------------------------------------------------
    def start(self):
        """Bind to 127.0.0.1 on a free port and serve in a daemon thread."""
        self._abort = threading.Event()
        self._httpd = _Server((self._host, self._port), self.handler or _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fakeserver",
            daemon=True,
        )
        self._thread.start()
        self._bound = self._httpd.server_address[:2]
        return self

    @property
    def url(self):
        """The base URL (also while stopped: the address it will serve on again)."""
        host, port = self._bound
        return f"http://{host}:{port}"

    @property
    def running(self):
        return self._httpd is not None

    def restart(self):
        """Serve again on the same address after stop(): an outage that ends."""
        self._host, self._port = self._bound
        return self.start()

    def stop(self):
        """Stop serving, wake sleeping handlers, close open connections and join threads."""
        if self._httpd is None:
            return
        self._abort.set()
        self._httpd.shutdown()
        with self._lock:
            conns = list(self._conns.items())
        for _thread, sock in conns:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._httpd.server_close()
        self._thread.join(timeout=2)
        for thread, _sock in conns:
            thread.join(timeout=2)
        self._httpd = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # ---- script ----------------------------------------------------------------------------
    def reset(self):
        """Forget the script, the call log and every changed default."""
        with self._lock:
            # Replies still sleeping or streaming for an earlier test are dropped, so they
            # neither answer late nor disturb the counters below.
            self._abort.set()
            self._abort = threading.Event()
            self._script = []
            self.calls = []
            self.models = ["fake-model"]
            self.loaded = []  # models "in memory" as reported by GET /api/ps
            self.default_text = "fake answer"
            self.default_latency = 0.0
            self.responder = None
            self.strict_models = False
            self.llamacpp_timings = False
            self.redirects = []  # (path prefix, status, URL the rest of the path is sent on to)
            self.active = 0  # chat requests in flight now
            self.max_active = 0  # most chat requests in flight at once since reset

    def enqueue(self, text=None, **spec):
        """Queue one reply; see SPEC_DEFAULTS for the keys (status, latency, drop, ...)."""
        unknown = set(spec) - set(SPEC_DEFAULTS)
        if unknown:
            raise TypeError(f"unknown enqueue option(s): {sorted(unknown)}")
        item = {**SPEC_DEFAULTS, **spec, "text": text}
        with self._lock:
            self._script.append(item)
        return item

    def redirect(self, status, to, prefix=""):
        """Answer every request whose path starts with `prefix` with `status` and a Location of
        `to` + the rest of the path (and its query string)."""
        with self._lock:
            self.redirects.append((prefix, status, to))

    @property
    def pending(self):
        """How many queued replies are still waiting to be consumed."""
        with self._lock:
            return len(self._script)

    def chat_calls(self):
        """Only the POSTed chat calls (either wire format), in order."""
        with self._lock:
            return [c for c in self.calls if c["method"] == "POST"]

    def wait_for_calls(self, n, timeout=5.0):
        """Block until at least n calls were received (or timeout); returns the count."""
        deadline = time.monotonic() + timeout
        with self._calls_changed:
            while len(self.calls) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._calls_changed.wait(left)
            return len(self.calls)

    # ---- used by the handler ---------------------------------------------------------------
    def _record(self, call):
        with self._calls_changed:
            self.calls.append(call)
            self._calls_changed.notify_all()

    def _take(self, call, listing=False):
        """The first matching queued reply, else the responder's, else None (or default)."""
        model = (call["body"] or {}).get("model") if isinstance(call["body"], dict) else None
        with self._lock:
            for i, item in enumerate(self._script):
                if item["path"] is not None and item["path"] != call["path"]:
                    continue
                if listing and item["path"] is None:
                    continue
                if item["model"] is not None and item["model"] != model:
                    continue
                return self._script.pop(i)
            responder = self.responder
        if listing:
            return None
        spec = responder(call) if responder else None
        # A responder's reply waits `default_latency` too unless it names its own: a test that
        # slows the fake down means every reply, not only the unscripted ones.
        return {**SPEC_DEFAULTS, "latency": self.default_latency, **(spec or {})}

    def _model_ids(self):
        return [m["id"] if isinstance(m, dict) else m for m in self.models]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        pass  # clients hang up (timeouts, cancel) all the time in tests; stay quiet


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, chunked streaming like real servers

    def setup(self):
        super().setup()
        # Without TCP_NODELAY each small response waits ~40 ms for Nagle/delayed ACK.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.server.fake._lock:
            self.server.fake._conns[threading.current_thread()] = self.connection

    def finish(self):
        with self.server.fake._lock:
            self.server.fake._conns.pop(threading.current_thread(), None)
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    # ---- dispatch --------------------------------------------------------------------------
    def _wait(self, seconds):
        """Sleep that stop() and reset() interrupt; True when the reply should be abandoned."""
        if seconds and seconds > 0:
            return self._abort.wait(seconds)
        return self._abort.is_set()

    def _dispatch(self, method):
        fake = self.server.fake
        self._abort = fake._abort
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = urlsplit(self.path).path
        call = {
            "path": path,
            "method": method,
            "body": body,
            "headers": dict(self.headers.items()),
            "t": time.monotonic(),
            "wall": time.time(),
            "raw": raw.decode("utf-8", "replace"),
        }
        fake._record(call)
        try:
            moved = _redirect(fake, self.path)
            if moved:
                self._send(moved[0], b"", headers={"Location": moved[1]})
            elif method == "GET" and path.endswith("/api/tags"):
                self._listing(call, self._ollama_tags)
            elif method == "GET" and path.endswith("/api/ps"):
                self._send(200, {"models": [_ps_entry(m) for m in list(fake.loaded)]})
            elif method == "GET" and path.endswith("/models"):
                self._listing(call, self._openai_models)
            elif method == "POST" and path.endswith("/chat/completions"):
                self._chat(call, "openai")
            elif method == "POST" and path.endswith(("/api/chat", "/api/generate")):
                self._chat(call, "ollama")
            else:
                self._send(
                    404,
                    {
                        "error": {
                            "message": f"File Not Found: {path}",
                            "type": "not_found_error",
                            "code": 404,
                        }
                    },
                )
        except OSError:
            self.close_connection = True  # the client went away (timeout, cancel)

    def _listing(self, call, build):
        spec = self.server.fake._take(call, listing=True)
        if spec and self._wait(spec["latency"]):
            return self._drop()
        if spec is None or (
            spec["status"] == 200
            and spec["body"] is None
            and not spec["malformed"]
            and not spec["drop"]
        ):
            return self._send(200, build())
        self._scripted(spec, "ollama" if call["path"].endswith("/api/tags") else "openai")

    def _openai_models(self):
        data = [
            {"id": m, "object": "model", "owned_by": "fake", "created": 0}
            for m in self.server.fake._model_ids()
        ]
        return {"object": "list", "data": data}

    def _ollama_tags(self):
        return {
            "models": [
                {
                    "name": m,
                    "model": m,
                    "modified_at": _now(),
                    "size": 1000,
                    "digest": "0" * 12,
                    "details": {
                        "family": "fake",
                        "format": "gguf",
                        "parameter_size": "1M",
                        "quantization_level": "Q4_0",
                    },
                }
                for m in self.server.fake._model_ids()
            ]
        }

    def _chat(self, call, fmt):
        fake = self.server.fake
        body = call["body"] if isinstance(call["body"], dict) else {}
        model = body.get("model") or "fake-model"
        if fake.strict_models and model not in fake._model_ids():
            msg = f"model '{model}' not found"
            err = (
                {"error": msg}
                if fmt == "ollama"
                else {"error": {"message": msg, "type": "not_found_error"}}
            )
            return self._send(404, err)
        if fmt == "ollama" and not body.get("messages") and not body.get("prompt"):
            return self._ollama_load(model, body.get("keep_alive"))
        spec = fake._take(call)
        with fake._lock:
            counted = fake._abort is self._abort  # False if reset() came in between
            if counted:
                fake.active += 1
                fake.max_active = max(fake.max_active, fake.active)
        try:
            if self._wait(spec["latency"]):
                return self._drop()
            if spec["drop"] is True or spec["status"] != 200 or spec["body"] is not None:
                return self._scripted(spec, fmt)
            if fmt == "ollama":
                self._track_loaded(model, body.get("keep_alive"))
            self._answer(spec, fmt, body, model)
        finally:
            with fake._lock:
                if counted and fake._abort is self._abort:  # else reset() zeroed the count
                    fake.active -= 1

    def _scripted(self, spec, fmt):
        """Replies that are not a normal answer: drop, raw body, error status, malformed."""
        if spec["drop"]:
            return self._drop()
        headers = {"Retry-After": str(spec["retry_after"])} if spec["retry_after"] else {}
        if spec["body"] is not None:
            raw = spec["body"]
            raw = raw if isinstance(raw, (bytes, str)) else json.dumps(raw)
            return self._send(spec["status"], raw, headers=headers)
        if spec["malformed"]:
            return self._send(spec["status"], b'{"choices": [{"message": ', headers=headers)
        status = spec["status"]
        msg = spec["text"] or f"fake error {status}"
        err = (
            {"error": msg}
            if fmt == "ollama"
            else {
                "error": {
                    "message": msg,
                    "type": ERROR_TYPES.get(
                        status, "server_error" if status >= 500 else "invalid_request_error"
                    ),
                    "code": status,
                }
            }
        )
        return self._send(status, err, headers=headers)

    # ---- normal answers --------------------------------------------------------------------
    def _answer(self, spec, fmt, body, model):
        fake = self.server.fake
        judge = "response_format" in body or "format" in body
        text = spec["text"]
        if text is None and spec["tool_calls"]:
            text = ""
        if text is None:
            text = json.dumps(JUDGE_DEFAULT) if judge else fake.default_text
        pieces = list(spec["chunks"]) if spec["chunks"] is not None else split_tokens(text)
        text = "".join(pieces)
        usage = None
        if spec["usage"] is not False:
            prompt = (
                sum(
                    len(str(m.get("content", "")).split())
                    for m in body.get("messages") or []
                    if isinstance(m, dict)
                )
                or 1
            )
            usage = {"prompt_tokens": prompt, "completion_tokens": len(pieces)}
            usage.update(spec["usage"] or {})
            usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
        stream = body.get("stream", fmt == "ollama")  # Ollama streams unless told not to
        if fmt == "openai":
            timings = spec["timings"]
            if timings is True or (timings is None and fake.llamacpp_timings):
                timings = _llamacpp_timings(usage, len(pieces))
            writer = self._openai_stream if stream else self._openai_full
            return writer(spec, body, model, text, pieces, usage, timings or None)
        counters = _ollama_counters(usage, len(pieces), spec["timings"])
        writer = self._ollama_stream if stream else self._ollama_full
        return writer(spec, model, text, pieces, counters)

    def _openai_full(self, spec, body, model, text, pieces, usage, timings):
        if spec["malformed"]:
            return self._send(200, b'{"choices": [{"message": ')
        reply = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": "fake",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": spec["finish_reason"],
                    "message": {"role": "assistant", "content": text},
                }
            ],
        }
        if spec["tool_calls"]:
            message = reply["choices"][0]["message"]
            message["content"] = text or None  # as OpenAI sends a reply that only calls tools
            message["tool_calls"] = [
                {"id": f"call_{i}", "type": "function", "function": _openai_function(call)}
                for i, call in enumerate(spec["tool_calls"])
            ]
        if usage:
            reply["usage"] = usage
        if timings:
            reply["timings"] = timings
        self._send(200, reply)

    def _openai_stream(self, spec, body, model, text, pieces, usage, timings):
        base = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": "fake",
        }

        def event(choices, **extra):
            return b"data: " + json.dumps({**base, "choices": choices, **extra}).encode() + b"\n\n"

        self._start_stream("text/event-stream")
        self._chunk(
            event(
                [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": None},
                        "finish_reason": None,
                    }
                ]
            )
        )

        def piece(p):
            return event([{"index": 0, "delta": {"content": p}, "finish_reason": None}])

        if not self._stream_pieces(spec, pieces, piece, b"data: {broken\n\n"):
            return
        for i, call in enumerate(spec["tool_calls"] or ()):
            for delta in _openai_call_deltas(i, call, spec["tool_chunk"]):
                self._chunk(event([{"index": 0, "delta": delta, "finish_reason": None}]))
        final = {"timings": timings} if timings else {}
        self._chunk(
            event([{"index": 0, "delta": {}, "finish_reason": spec["finish_reason"]}], **final)
        )
        if usage and (body.get("stream_options") or {}).get("include_usage"):
            self._chunk(event([], usage=usage, **final))
        self._chunk(b"data: [DONE]\n\n")
        self._end_stream()

    def _ollama_full(self, spec, model, text, pieces, counters):
        if spec["malformed"]:
            return self._send(200, b'{"model": ')
        message = {"role": "assistant", "content": text}
        if spec["tool_calls"]:
            message["tool_calls"] = _ollama_calls(spec["tool_calls"])
        self._send(
            200,
            {
                "model": model,
                "created_at": _now(),
                "done": True,
                "message": message,
                "done_reason": spec["finish_reason"],
                **counters,
            },
        )

    def _ollama_stream(self, spec, model, text, pieces, counters):
        def line(obj):
            return json.dumps({"model": model, "created_at": _now(), **obj}).encode() + b"\n"

        self._start_stream("application/x-ndjson")
        if not self._stream_pieces(
            spec,
            pieces,
            lambda p: line({"message": {"role": "assistant", "content": p}, "done": False}),
            b"{broken\n",
        ):
            return
        if spec["tool_calls"]:  # Ollama sends the calls whole, in one line before the last
            calls = _ollama_calls(spec["tool_calls"])
            message = {"role": "assistant", "content": "", "tool_calls": calls}
            self._chunk(line({"message": message, "done": False}))
        self._chunk(
            line(
                {
                    "message": {"role": "assistant", "content": ""},
                    "done": True,
                    "done_reason": spec["finish_reason"],
                    **counters,
                }
            )
        )
        self._end_stream()

    def _stream_pieces(self, spec, pieces, encode, garbage):
        """Send content pieces; False when the stream was cut (drop="mid", malformed, stop)."""
        for i, piece in enumerate(pieces):
            if i and self._wait(spec["chunk_delay"]):
                self._drop()
                return False
            self._chunk(encode(piece))
            if i == 0 and spec["malformed"]:
                self._chunk(garbage)
                self._end_stream()
                return False
            if i == 0 and spec["drop"] == "mid":
                self._drop()
                return False
        return True

    def _ollama_load(self, model, keep_alive):
        self._track_loaded(model, keep_alive)
        unloading = keep_alive in (0, "0", "0s", "0m")
        self._send(
            200,
            {
                "model": model,
                "created_at": _now(),
                "done": True,
                "message": {"role": "assistant", "content": ""},
                "done_reason": "unload" if unloading else "load",
            },
        )

    def _track_loaded(self, model, keep_alive):
        fake = self.server.fake
        with fake._lock:
            if keep_alive in (0, "0", "0s", "0m"):
                if model in fake.loaded:
                    fake.loaded.remove(model)
            elif model not in fake.loaded:
                fake.loaded.append(model)

    # ---- wire helpers ----------------------------------------------------------------------
    def _send(self, status, payload, headers=None, content_type="application/json"):
        data = (
            payload
            if isinstance(payload, bytes)
            else (payload if isinstance(payload, str) else json.dumps(payload)).encode()
        )
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _start_stream(self, content_type):
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()

    def _chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _end_stream(self):
        self.wfile.write(b"0\r\n\r\n")

    def _drop(self):
        """Close the connection without (the rest of) a response."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _redirect(fake, target):
    """(status, Location) when a redirect matches the request target, else None."""
    with fake._lock:
        rules = list(fake.redirects)
    for prefix, status, to in rules:
        if target.startswith(prefix):
            return status, to + target[len(prefix) :]
    return None


def _arguments_text(arguments):
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _openai_function(call):
    return {"name": call["name"], "arguments": _arguments_text(call.get("arguments", {}))}


def _openai_call_deltas(index, call, size):
    """One call's delta.tool_calls pieces: whole (size 0), or the id and name first, then the
    arguments' text `size` characters at a time."""
    head = {"index": index, "id": f"call_{index}", "type": "function"}
    if not size:
        return [{"tool_calls": [{**head, "function": _openai_function(call)}]}]
    text = _arguments_text(call.get("arguments", {}))
    deltas = [{"tool_calls": [{**head, "function": {"name": call["name"], "arguments": ""}}]}]
    for at in range(0, len(text), size):
        piece = {"index": index, "function": {"arguments": text[at : at + size]}}
        deltas.append({"tool_calls": [piece]})
    return deltas


def _ollama_calls(calls):
    return [{"function": {"name": c["name"], "arguments": c.get("arguments", {})}} for c in calls]


def _now():
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _ps_entry(model):
    return {
        "name": model,
        "model": model,
        "size": 1000,
        "size_vram": 0,
        "expires_at": _now(),
        "details": {"family": "fake"},
    }


def _llamacpp_timings(usage, n):
    predicted = (usage or {}).get("completion_tokens", n)
    prompt = (usage or {}).get("prompt_tokens", 1)
    return {
        "cache_n": 0,
        "prompt_n": prompt,
        "prompt_ms": 10.0,
        "prompt_per_token_ms": 10.0 / max(prompt, 1),
        "prompt_per_second": prompt / 0.01,
        "predicted_n": predicted,
        "predicted_ms": predicted * 20.0,
        "predicted_per_token_ms": 20.0,
        "predicted_per_second": 50.0,
    }


def _ollama_counters(usage, n, overrides):
    """Ollama's done-line counters (durations in ns); usage=False leaves them out."""
    if usage is None:
        return dict(overrides or {})
    counters = {
        "load_duration": 1_000_000,
        "prompt_eval_count": usage["prompt_tokens"],
        "prompt_eval_duration": 10_000_000,
        "eval_count": usage["completion_tokens"],
        "eval_duration": usage["completion_tokens"] * 20_000_000,
    }
    counters.update(overrides or {})
    counters["total_duration"] = counters.get("total_duration") or (
        counters["load_duration"] + counters["prompt_eval_duration"] + counters["eval_duration"]
    )
    return counters
