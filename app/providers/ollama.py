"""OLLAMA native wire format: /api/tags, /api/chat (NDJSON), eval counters, /api/ps, unload."""

import time

from .base import Cut
from .base import HttpAdapter
from .base import Reasoning
from .base import StreamBody
from .base import TokenClock
from .base import answer_prefix
from .base import as_dict
from .base import content_text
from .base import estimate_from_stream
from .base import integer
from .base import number
from .base import tool_call
from .formats import OllamaFormat
from .interface import Completion
from .interface import ProviderError

UNLOAD_TIMEOUT = (5.0, 30.0)
ANSWER_KEYS = ("content", "response")  # /api/chat's message.content, /api/generate's response
# Generation params -> Ollama `options` names; anything else is passed through as an option.
OPTION_NAMES = {
    "max_tokens": "num_predict",
    "maxTokens": "num_predict",
    "max_completion_tokens": "num_predict",
    "topP": "top_p",
}
TOP_LEVEL = {"think", "raw", "template"}  # Ollama body keys that are not options
# Ours or set by chat() itself; max_seconds is the target's limit on one call (never sent).
# response_format becomes `format`; Ollama has no tool_choice (a model calls tools or not).
RESERVED = {
    "model",
    "messages",
    "stream",
    "format",
    "keep_alive",
    "options",
    "max_seconds",
    "response_format",
    "tool_choice",
    "tools",
}


def ollama_options(params):
    """Split generation params into (`options` dict, extra top-level body keys)."""
    options, extra = {}, {}
    for key, value in (params or {}).items():
        if value is None or key in RESERVED:
            if key == "options" and isinstance(value, dict):
                options.update(value)
            continue
        if key in TOP_LEVEL:
            extra[key] = value
        else:
            options[OPTION_NAMES.get(key, key)] = value
    return options, extra


def ollama_format(response_format):
    """An OpenAI response_format as Ollama's `format`: "json", the JSON schema, or None."""
    response_format = as_dict(response_format)
    if response_format.get("type") == "json_object":
        return "json"
    if response_format.get("type") == "json_schema":
        return as_dict(response_format.get("json_schema")).get("schema") or "json"
    return None


def called(message):
    """A message's tool_calls as [{"name", "arguments"}] (Ollama sends arguments as an
    object), or [] when it has none."""
    calls = as_dict(message).get("tool_calls")
    out = []
    for call in calls if isinstance(calls, list) else ():
        function = as_dict(as_dict(call).get("function"))
        if function:
            out.append(tool_call(function.get("name"), function.get("arguments")))
    return out


def _with_calls(completion, calls):
    """The answer's tool calls on the completion and in its assembled reply."""
    completion.tool_calls = calls or None
    if calls:
        completion.raw_json["message"]["tool_calls"] = [{"function": c} for c in calls]


def ns_to_ms(value):
    """Ollama durations are nanoseconds."""
    num = number(value)
    return num / 1e6 if num is not None else None


class OllamaAdapter(OllamaFormat, HttpAdapter):
    """Ollama's native API."""

    @property
    def models_endpoint(self):
        endpoint = self.config.models_endpoint
        # An OpenAI default left on an Ollama provider would only 404: use the native one.
        return endpoint if endpoint and endpoint != "/v1/models" else self.models_path

    @property
    def inference_endpoint(self):
        endpoint = self.config.inference_endpoint
        if endpoint and endpoint != "/v1/chat/completions":
            return endpoint
        return self.chat_path

    def list_models(self):
        """Models pulled on the server: [{"id": name, "size", "details", ...}]."""
        data = self.get_json(self.models_endpoint)
        items = data.get("models") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise self.no_model_list(data, "models")
        models = []
        for item in items:
            if isinstance(item, dict) and (item.get("name") or item.get("model")):
                models.append({**item, "id": str(item.get("name") or item.get("model"))})
        return models

    def loaded_models(self, timeout=None):
        """Models in memory now (GET /api/ps): [{"id", "size", "size_vram", "expires_at"...}]."""
        data = self.get_json("/api/ps", timeout=timeout)
        items = data.get("models") if isinstance(data, dict) else None
        return [
            {**m, "id": str(m.get("name") or m.get("model"))}
            for m in items or []
            if isinstance(m, dict)
        ]

    def unload(self, model):
        """Ask Ollama to free the model now; returns None on success, else the error text."""
        body = {"model": model, "messages": [], "keep_alive": 0, "stream": False}
        try:
            resp = self.request(
                "POST", self.inference_endpoint, json_body=body, timeout=UNLOAD_TIMEOUT
            )
            resp.close()
        except ProviderError as exc:
            return exc.message
        return None

    def chat(
        self,
        model,
        messages,
        params=None,
        *,
        stream=True,
        json_schema=None,
        keep_alive=None,
        cancel=None,
        tools=None,
    ):
        """Send one chat and measure it with Ollama's own counters."""
        options, extra = ollama_options(params)
        body = {"model": model, "messages": messages, "stream": bool(stream), **extra}
        if options:
            body["options"] = options
        if tools:
            body["tools"] = tools  # the same function schemas as OpenAI's
        answer_format = ollama_format((params or {}).get("response_format"))
        if json_schema is not None:
            body["format"] = json_schema
        elif answer_format is not None:
            body["format"] = answer_format
        if keep_alive is not None:
            body["keep_alive"] = keep_alive
        url = self.url(self.inference_endpoint)
        deadline = self.deadline(params)
        sent_at, start = time.time(), time.perf_counter()
        resp = self.request("POST", self.inference_endpoint, json_body=body, cancel=cancel)
        if not stream:
            raw = self.read_answer(resp, url, deadline=deadline, cancel=cancel)
            end = time.perf_counter()
            if isinstance(raw, Cut):  # bigger than llmbench reads: the answer's start, cut
                text = self.cut_answer(raw, ANSWER_KEYS, url, raw.start())
                final = {"model": answer_prefix(raw.data, ("model",), 200)}
                completion = self._completion(body, text, final, raw.start(), start, end)
                completion.answer_cut = True
                completion.sent_at = sent_at
                return self.finish(completion)
            final = self.parse_json(raw, url)
            if isinstance(final, dict):
                self._raise_if_error(final, raw)
            if not isinstance(final, dict) or "message" not in final:
                raise self.malformed(f"Server sent a reply from {url} without 'message'", raw)
            text = self._content(final, raw, url)
            cut = len(text) > self.max_answer_chars
            completion = self._completion(
                body, text[: self.max_answer_chars], final, raw, start, end
            )
            completion.answer_cut = cut
            completion.sent_at = sent_at
            _with_calls(completion, called(final.get("message")))
            reasoning = Reasoning(self.max_answer_chars)
            reasoning.add(thinking(final))
            reasoning.apply(completion)
            return self.finish(completion)
        got, final = StreamBody(self.max_answer_chars), None
        clock, reasoning = TokenClock(), Reasoning(self.max_answer_chars)
        calls = []  # Ollama sends each call whole, in the line that makes it
        for line in self.iter_lines(resp, url, cancel, deadline):
            if isinstance(line, Cut):  # one line bigger than the cap: its answer is cut
                got.line(line.start())
                got.add_cut(self.cut_answer(line, ANSWER_KEYS, url, got.raw, resp))
                clock.tick(answer=True)
                final = {"model": answer_prefix(line.data, ("model",), 200)}
                resp.close()
                break
            got.line(line)
            if not line.strip():
                continue
            obj = self.stream_json(line, resp, url, "stream line", got)
            if not isinstance(obj, dict):
                continue
            self._raise_if_error(obj, got.raw, resp)
            content = self._content(obj, got.raw, url, resp)
            made = called(obj.get("message"))
            calls.extend(made)
            thought = reasoning.add(thinking(obj))
            if made or content or thought:
                clock.tick(bool(made or content))
            if content:
                if not got.add(content):
                    resp.close()  # the rest of the answer is not read: the cap is reached
                    final = {k: v for k, v in obj.items() if k not in ("message", "response")}
                    break
            if obj.get("done"):
                final = obj
                self.drain(resp)
                break
        end = time.perf_counter()
        if final is None:
            raise self.error(
                f"Stream from {url} ended without its final 'done' line",
                transient=True,
                kind="connection",
                raw=got.raw,
            )
        completion = self._completion(body, got.text, final, got.raw, start, end)
        completion.answer_cut = got.cut
        completion.sent_at = sent_at
        clock.apply(completion, start)
        reasoning.apply(completion)
        estimate_from_stream(completion, got.count + reasoning.pieces, clock)
        _with_calls(completion, calls)
        return self.finish(completion)

    def _content(self, obj, raw, url, resp=None):
        """The text of one reply object (chat `message.content`, generate `response`)."""
        message = obj.get("message")
        if message is None:
            text = content_text(obj.get("response"))  # /api/generate
        elif isinstance(message, dict):
            text = content_text(message.get("content"))
        else:
            text = None
        if text is None:
            if resp is not None:
                resp.close()
            raise self.malformed(f"Server sent a reply from {url} whose content is not text", raw)
        return text

    def _raise_if_error(self, obj, raw, resp=None):
        if obj.get("error"):
            if resp is not None:
                resp.close()
            error = obj["error"]
            raise self.mid_answer_error(as_dict(error).get("message") or error, raw)

    def _completion(self, body, text, final, raw, start, end):
        """A Completion from the done line's counters (a stream's timing is added after)."""
        assembled = {k: v for k, v in final.items() if k not in ("message", "response")}
        assembled["message"] = {"role": "assistant", "content": text}
        completion = Completion(
            text=text,
            model=final.get("model") if isinstance(final.get("model"), str) else None,
            finish_reason=(
                final.get("done_reason") if isinstance(final.get("done_reason"), str) else None
            ),
            wall_ms=(end - start) * 1000,
            prompt_tokens=integer(final.get("prompt_eval_count")),
            completion_tokens=integer(final.get("eval_count")),
            prompt_ms=ns_to_ms(final.get("prompt_eval_duration")),
            decode_ms=ns_to_ms(final.get("eval_duration")),
            load_ms=ns_to_ms(final.get("load_duration")),
            request=body,
            raw=raw,
            raw_json=assembled,
        )
        eval_s = (completion.decode_ms or 0) / 1000
        if completion.completion_tokens and eval_s > 0:
            completion.tokens_per_second = completion.completion_tokens / eval_s
            completion.tps_source = "ollama.eval"
        return completion


def thinking(obj):
    """The reasoning text of one reply object (/api/chat's message.thinking, /api/generate's
    thinking), "" when it has none."""
    message = obj.get("message")
    value = message.get("thinking") if isinstance(message, dict) else obj.get("thinking")
    return value if isinstance(value, str) else ""
