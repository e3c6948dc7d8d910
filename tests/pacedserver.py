"""A model server over real HTTP on 127.0.0.1 whose timing is known: the truth that llmbench's
speed figures are checked against.

    server = PacedServer(ttft=0.15, tokens=64, itl=0.02).start()
    adapter.chat(...)            # OpenAI SSE at /v1/chat/completions, Ollama NDJSON at /api/chat
    server.log[-1]               # what the server did for that request, by its own clock
    server.stop()

Each request: wait for a slot (`slots`, None for unlimited: the rest queue, as llama.cpp's
do), then `ttft` seconds to the first token, then one token every `itl` seconds (plus a
deterministic `jitter`, uniform in +-jitter, from `seed` and the request's number): first
`reasoning_tokens` reasoning tokens (OpenAI `delta.reasoning_content`, Ollama
`message.thinking`), then `tokens` answer tokens. `one_chunk` sends everything in one event at
`ttft` (a buffering proxy). The last event carries usage and the server's own timings
(llama.cpp `timings`, Ollama's `*_duration` in ns) unless `timings=False`.
`show_reasoning=False` makes the reasoning tokens' time pass and counts them in usage but
never sends them, as OpenAI's hidden reasoning (its timings then cover the tokens sent).

Pacing uses absolute deadlines on the monotonic clock (token k is due at start + ttft + the
gaps before it), so sleeping late once does not push every later token back. Each event is
written and flushed on its own over a TCP_NODELAY socket (without it Nagle and delayed ACK add
~40 ms to small writes).

`log` holds one dict per finished request (in the order they finished; `logged(n)` waits
for n of them):
  number, wire ("openai" | "ollama"), received / started / first_sent / last_sent
  (time.perf_counter(); the same clock as the client's in this process), received_wall /
  first_sent_wall / last_sent_wall (time.time()), slot_wait (s), sent: [perf_counter of every
  token-bearing event], channels: ["reasoning" | "answer" per event], in_service (how many
  requests were being served when this one started), completed (False when the client left).
"""

import json
import random
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer

MODEL = "paced"
PROMPT_TOKENS = 12  # what the server says the prompt was


class PacedServer:
    """A real threaded HTTP server that answers every chat on a known schedule."""

    def __init__(
        self,
        *,
        ttft=0.15,
        tokens=64,
        itl=0.02,
        jitter=0.0,
        seed=1,
        one_chunk=False,
        slots=None,
        reasoning_tokens=0,
        timings=True,
        show_reasoning=True,
        host="127.0.0.1",
    ):
        self.ttft, self.tokens, self.itl, self.jitter = ttft, tokens, itl, jitter
        self.seed, self.one_chunk, self.slots = seed, one_chunk, slots
        self.reasoning_tokens, self.timings = reasoning_tokens, timings
        self.show_reasoning = show_reasoning
        self._host = host
        self._lock = threading.Lock()
        self._logged = threading.Condition(self._lock)
        self._slots = threading.Semaphore(slots) if slots else None
        self._numbers = 0  # requests received
        self._serving = 0  # requests being served now
        self.log = []
        self._httpd = self._thread = None

    # ---- lifecycle -------------------------------------------------------------------------
    def start(self):
        """Bind to a free port on 127.0.0.1 and serve in a daemon thread."""
        self._httpd = _Server((self._host, 0), _Handler)
        self._httpd.paced = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="pacedserver",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self):
        """Stop serving and close the listening socket."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def url(self):
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def logged(self, count, timeout=30.0):
        """The log once it holds `count` requests (a client may read a reply's last byte just
        before the server writes its log entry); AssertionError after `timeout` seconds."""
        with self._logged:
            if not self._logged.wait_for(lambda: len(self.log) >= count, timeout):
                raise AssertionError(f"{len(self.log)} requests logged, expected {count}")
            return list(self.log)

    # ---- the schedule ----------------------------------------------------------------------
    def schedule(self, number):
        """The offsets (s, from the request's start of service) at which its token events are
        due, and each event's channel: deterministic for a request number."""
        total = self.reasoning_tokens + self.tokens
        channels = ["reasoning"] * self.reasoning_tokens + ["answer"] * self.tokens
        if self.one_chunk:
            return ([self.ttft], ["one_chunk"]) if total else ([], [])
        rng = random.Random(self.seed * 1_000_003 + number)
        offsets, at = [], self.ttft
        for k in range(total):
            if k:
                at += max(0.0, self.itl + rng.uniform(-self.jitter, self.jitter))
            offsets.append(at)
        return offsets, channels

    def _begin(self):
        """A number for a request just received, and its slot (waits while none is free)."""
        received, received_wall = time.perf_counter(), time.time()
        with self._lock:
            self._numbers += 1
            number = self._numbers
        if self._slots is not None:
            self._slots.acquire()
        with self._lock:
            self._serving += 1
            in_service = self._serving
        started = time.perf_counter()
        return {
            "number": number,
            "received": received,
            "received_wall": received_wall,
            "started": started,
            "slot_wait": started - received,
            "in_service": in_service,
            "sent": [],
            "channels": [],
            "completed": False,
        }

    def _end(self, entry):
        with self._lock:
            self._serving -= 1
            self.log.append(entry)
            self._logged.notify_all()
        if self._slots is not None:
            self._slots.release()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        pass  # a client that hangs up mid-stream is not an error here


def sleep_until(deadline):
    """Sleep until time.perf_counter() reaches `deadline` (an absolute instant)."""
    left = deadline - time.perf_counter()
    if left > 0:
        time.sleep(left)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked streaming, like real servers

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        if self.path.startswith("/api/tags"):
            self._json({"models": [{"name": MODEL, "model": MODEL}]})
        else:
            self._json({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path.startswith("/api/chat"):
            wire = "ollama"
        elif self.path.startswith("/v1/chat/completions"):
            wire = "openai"
        else:
            self._json({"error": "not found"}, status=404)
            return
        paced = self.server.paced
        entry = paced._begin()
        entry["wire"] = wire
        try:
            if body.get("stream") is False:
                self._whole(paced, entry, wire)
            else:
                self._stream(paced, entry, wire)
            entry["completed"] = True
        except OSError:  # the client left mid-answer
            self.close_connection = True
        finally:
            paced._end(entry)

    # ---- replies ---------------------------------------------------------------------------
    def _stream(self, paced, entry, wire):
        offsets, channels = paced.schedule(entry["number"])
        start = entry["started"]
        self.send_response(200)
        kind = "text/event-stream" if wire == "openai" else "application/x-ndjson"
        self.send_header("Content-Type", kind)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if wire == "openai":  # a role-only event first, as OpenAI and llama.cpp send
            self._event(wire, {"role": "assistant", "content": None})
        for k, (offset, channel) in enumerate(zip(offsets, channels, strict=True)):
            sleep_until(start + offset)
            if channel == "reasoning" and not paced.show_reasoning:
                continue  # made and counted in usage, never sent (OpenAI's hidden reasoning)
            if channel == "one_chunk":
                shown = paced.reasoning_tokens if paced.show_reasoning else 0
                reasoning = "".join(_token("reasoning", i) for i in range(shown))
                answer = "".join(_token("answer", i) for i in range(paced.tokens))
            else:
                index = k if channel == "reasoning" else k - paced.reasoning_tokens
                reasoning = _token("reasoning", index) if channel == "reasoning" else ""
                answer = _token("answer", index) if channel == "answer" else ""
            # Stamped just before the bytes go out: a client may read them before this thread
            # runs again, so a stamp taken after the write could come after the client's.
            self._sent(entry, channel)
            self._event(wire, _delta(wire, reasoning, answer))
        if not offsets:
            sleep_until(start + paced.ttft)
        self._event(wire, self._final(paced, entry, wire), last=True)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _sent(self, entry, channel):
        now, wall = time.perf_counter(), time.time()
        if not entry["sent"]:
            entry["first_sent"], entry["first_sent_wall"] = now, wall
        entry["last_sent"], entry["last_sent_wall"] = now, wall
        entry["sent"].append(now)
        entry["channels"].append(channel)

    def _event(self, wire, delta, last=False):
        """One SSE event or NDJSON line, in its own HTTP chunk, flushed."""
        if wire == "openai":
            obj = delta if last else _openai_chunk(delta)
            data = b"data: " + json.dumps(obj).encode() + b"\n\n"
            if last:
                data += b"data: [DONE]\n\n"
        else:
            data = json.dumps(delta).encode() + b"\n"
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _final(self, paced, entry, wire):
        """The last event: finish reason, usage and the server's own timings."""
        generated = paced.reasoning_tokens + paced.tokens
        sent = entry["sent"]
        # The server's decode time: n tokens at the rate seen between the first and the last
        # (n - 1 gaps), so its tok/s is (n - 1) / (last - first), as the stream shows it.
        span = sent[-1] - sent[0] if len(sent) > 1 else 0.0
        decode_s = span * generated / (generated - 1) if generated > 1 and span else 0.0
        prompt_s = sent[0] - entry["started"] if sent else paced.ttft
        if wire == "ollama":
            final = {
                "model": MODEL,
                "created_at": _now_iso(),
                "message": {"role": "assistant", "content": ""},
                "done": True,
                "done_reason": "stop",
                "prompt_eval_count": PROMPT_TOKENS,
                "eval_count": generated,
            }
            if paced.timings:
                final.update(
                    total_duration=int((time.perf_counter() - entry["received"]) * 1e9),
                    load_duration=0,
                    prompt_eval_duration=int(prompt_s * 1e9),
                    eval_duration=int(decode_s * 1e9),
                )
            return final
        usage = {
            "prompt_tokens": PROMPT_TOKENS,
            "completion_tokens": generated,
            "total_tokens": PROMPT_TOKENS + generated,
        }
        if paced.reasoning_tokens:
            usage["completion_tokens_details"] = {"reasoning_tokens": paced.reasoning_tokens}
        final = {
            "id": f"paced-{entry['number']}",
            "object": "chat.completion.chunk",
            "model": MODEL,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": usage,
        }
        if paced.timings:
            final["timings"] = {
                "prompt_n": PROMPT_TOKENS,
                "prompt_ms": prompt_s * 1000,
                "predicted_n": generated,
                "predicted_ms": decode_s * 1000,
                "predicted_per_second": generated / decode_s if decode_s else None,
            }
        return final

    def _whole(self, paced, entry, wire):
        """A non-streamed reply: everything after ttft plus every token's time."""
        offsets, _ = paced.schedule(entry["number"])
        sleep_until(entry["started"] + (offsets[-1] if offsets else paced.ttft))
        reasoning = "".join(_token("reasoning", i) for i in range(paced.reasoning_tokens))
        answer = "".join(_token("answer", i) for i in range(paced.tokens))
        if wire == "ollama":
            message = {"role": "assistant", "content": answer}
            if reasoning:
                message["thinking"] = reasoning
            reply = {"model": MODEL, "message": message, "done": True, "done_reason": "stop"}
            reply["eval_count"] = paced.reasoning_tokens + paced.tokens
        else:
            message = {"role": "assistant", "content": answer}
            if reasoning:
                message["reasoning_content"] = reasoning
            reply = {
                "object": "chat.completion",
                "model": MODEL,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            }
        self._sent(entry, "whole")
        self._json(reply)

    def _json(self, payload, status=200):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _token(channel, index):
    """Token `index` of a channel: distinct, so order is visible in the text."""
    return f"r{index} " if channel == "reasoning" else f"t{index} "


def _delta(wire, reasoning, answer):
    if wire == "ollama":
        message = {"role": "assistant", "content": answer}
        if reasoning:
            message["thinking"] = reasoning
        return {"model": MODEL, "created_at": _now_iso(), "message": message, "done": False}
    delta = {"content": answer} if answer else {}
    if reasoning:
        delta["reasoning_content"] = reasoning
    return delta


def _openai_chunk(delta):
    return {
        "object": "chat.completion.chunk",
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
    }


def _now_iso():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
