"""OPENAI wire format: /v1/models and /v1/chat/completions (SSE), usage, llama.cpp timings."""

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
from .formats import OpenAIFormat
from .interface import Completion

# Where servers put a delta's or a message's reasoning: llama.cpp, vLLM and DeepSeek say
# reasoning_content, OpenRouter and newer vLLM say reasoning.
REASONING_KEYS = ("reasoning_content", "reasoning")
# Friendly spellings of generation params -> the OpenAI names.
PARAM_ALIASES = {
    "maxTokens": "max_tokens",
    "num_predict": "max_tokens",
    "topP": "top_p",
    "max_completion_tokens": "max_tokens",
}
# Ours, never sent: max_seconds is the target's limit on one call (base.call_seconds).
# response_format and tool_choice are sent by chat() itself, only where they apply.
RESERVED = {
    "model",
    "messages",
    "stream",
    "stream_options",
    "response_format",
    "tool_choice",
    "tools",
    "max_seconds",
}


def openai_params(params):
    """Generation params as OpenAI body keys; None values dropped, unknown keys passed through."""
    out = {}
    for key, value in (params or {}).items():
        key = PARAM_ALIASES.get(key, key)
        if value is None or key in RESERVED:
            continue
        out[key] = value
    return out


def judge_format(schema):
    """The response_format that makes a server answer with JSON of this schema."""
    return {
        "type": "json_schema",
        "json_schema": {"name": "judgement", "strict": True, "schema": schema},
    }


class OpenAIAdapter(OpenAIFormat, HttpAdapter):
    """OpenAI-compatible servers: OpenAI, OpenRouter, llama.cpp, vLLM, LM Studio, Ollama /v1."""

    @property
    def models_endpoint(self):
        return self.config.models_endpoint or self.models_path

    @property
    def inference_endpoint(self):
        return self.config.inference_endpoint or self.chat_path

    def list_models(self):
        """Models the server offers: [{"id": ..., ...metadata}]."""
        data = self.get_json(self.models_endpoint)
        items = data
        if isinstance(data, dict):
            items = data.get("data")
            if not isinstance(items, list):
                items = data.get("models")  # Ollama-style list
        if not isinstance(items, list):
            raise self.no_model_list(data, "data")
        models = []
        for item in items:
            if isinstance(item, str):
                models.append({"id": item})
            elif isinstance(item, dict):
                model_id = item.get("id") or item.get("name") or item.get("model")
                if model_id:
                    models.append({**item, "id": str(model_id)})
        return models

    def unload(self, model):
        """OpenAI-compatible servers have no unload call; nothing to do."""
        return None

    def loaded_models(self, timeout=None):
        """Not knowable over the OpenAI API."""
        return []

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
        """Send one chat completion and measure it; see Completion for the fields."""
        params = params or {}
        body = {"model": model, "messages": messages, **openai_params(params)}
        if tools:
            body["tools"] = tools
            # A server refuses tool_choice without tools, so it rides only beside them.
            if params.get("tool_choice") is not None:
                body["tool_choice"] = params["tool_choice"]
        if json_schema is not None:
            body["response_format"] = judge_format(json_schema)
        elif params.get("response_format") is not None:
            body["response_format"] = params["response_format"]
        body["stream"] = bool(stream)
        if stream:
            body["stream_options"] = {"include_usage": True}
        url = self.url(self.inference_endpoint)
        deadline = self.deadline(params)
        sent_at, start = time.time(), time.perf_counter()
        resp = self.request("POST", self.inference_endpoint, json_body=body, cancel=cancel)
        content_type = resp.headers.get("Content-Type", "")
        if stream and "event-stream" in content_type:
            completion = self._read_stream(resp, url, body, start, cancel, deadline)
            completion.sent_at = sent_at
            return self.finish(completion)
        # Not streamed (asked so, or the server ignored stream: true).
        text = self.read_answer(resp, url, deadline=deadline, cancel=cancel)
        end = time.perf_counter()
        if isinstance(text, Cut):  # bigger than llmbench reads: the answer's start, cut
            completion = self._cut_reply(text, url, body, start, end)
            completion.sent_at = sent_at
            return self.finish(completion)
        data = self.parse_json(text, url)
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list):
            raise self.malformed(f"Server sent a reply from {url} without 'choices'", text)
        choice = choices[0] if choices else {}
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(choice, dict) or not isinstance(message, dict | None):
            raise self.malformed(f"Server sent a reply from {url} with an odd 'choices'", text)
        answer = content_text(as_dict(message).get("content"))
        if answer is None:
            raise self.malformed(f"Server sent a reply from {url} whose content is not text", text)
        calls = as_dict(message).get("tool_calls")
        cut = len(answer) > self.max_answer_chars
        completion = Completion(
            text=answer[: self.max_answer_chars],
            model=_text(data.get("model")),
            finish_reason=_text(choice.get("finish_reason")),
            wall_ms=(end - start) * 1000,
            sent_at=sent_at,
            request=body,
            raw=text,
            raw_json=data,
            answer_cut=cut,
            tool_calls=called(calls if isinstance(calls, list) else []),
        )
        apply_usage(completion, data.get("usage"), data.get("timings"))
        reasoning = Reasoning(self.max_answer_chars)
        reasoning.add(reasoning_of(as_dict(message)))
        reasoning.apply(completion, reasoning_count(data.get("usage")))
        return self.finish(completion)

    def _cut_reply(self, cut, url, body, start, end):
        """The completion of a reply bigger than llmbench reads: the answer's start, cut."""
        answer = self.cut_answer(cut, ("content",), url, cut.start())
        model = _text(answer_prefix(cut.data, ("model",), 200))
        return Completion(
            text=answer,
            model=model,
            wall_ms=(end - start) * 1000,
            request=body,
            raw=cut.start(),
            raw_json=_assembled(model, None, answer),
            answer_cut=True,
        )

    def _read_stream(self, resp, url, body, start, cancel, deadline):
        got = StreamBody(self.max_answer_chars)
        model = finish = usage = timings = None
        pieces = ToolCallPieces()
        clock = TokenClock()
        reasoning = Reasoning(self.max_answer_chars)
        events = 0
        for line in self.iter_lines(resp, url, cancel, deadline):
            if isinstance(line, Cut):  # one event bigger than the cap: its answer is cut
                got.line(line.start())
                got.add_cut(self.cut_answer(line, ("content",), url, got.raw, resp))
                model = model or _text(answer_prefix(line.data, ("model",), 200))
                clock.tick(answer=True)
                events += 1
                resp.close()
                break
            got.line(line)
            if not line.startswith("data:"):
                continue  # blank separators, ": keep-alive" comments, event:/id: fields
            data = line[5:].strip()
            if data == "[DONE]":
                self.drain(resp)
                break
            obj = self.stream_json(data, resp, url, "stream event", got)
            events += 1
            if not isinstance(obj, dict):
                continue
            if obj.get("error"):
                resp.close()
                err = obj["error"]
                detail = err.get("message") if isinstance(err, dict) else str(err)
                raise self.mid_answer_error(detail, got.raw)
            model = _text(obj.get("model")) or model
            choices = obj.get("choices")
            thought = answered = False  # this event carried reasoning / answer tokens
            for choice in choices if isinstance(choices, list) else ():
                choice = as_dict(choice)
                delta = as_dict(choice.get("delta"))
                answered = pieces.add(delta.get("tool_calls")) or answered
                thought = reasoning.add(reasoning_of(delta)) or thought
                content = content_text(delta.get("content"))
                if content is None:
                    resp.close()
                    raise self.malformed(
                        f"Server sent a stream event from {url} whose content is not text", got.raw
                    )
                if content:
                    answered = True
                    if not got.add(content):
                        break
                finish = _text(choice.get("finish_reason")) or finish
            if thought or answered:
                clock.tick(answered)
            if got.cut:
                resp.close()  # the rest of the answer is not read: the cap is reached
                break
            usage = obj.get("usage") or usage
            timings = obj.get("timings") or timings
        end = time.perf_counter()
        if not events:
            raise self.malformed(f"Server sent an empty stream from {url}", got.raw)
        text = got.text
        tool_calls = pieces.calls()
        assembled = _assembled(model, finish, text, pieces.wire())
        if usage:
            assembled["usage"] = usage
        if timings:
            assembled["timings"] = timings
        completion = Completion(
            text=text,
            model=model,
            finish_reason=finish,
            wall_ms=(end - start) * 1000,
            request=body,
            raw=got.raw,
            raw_json=assembled,
            answer_cut=got.cut,
            tool_calls=tool_calls,
        )
        clock.apply(completion, start)
        hidden = reasoning_count(usage)
        reasoning.apply(completion, hidden)
        apply_usage(completion, usage, timings)
        # Reasoning the server counted but never streamed (OpenAI's) was made before the window.
        unseen = hidden if hidden and not reasoning.pieces else 0
        estimate_from_stream(completion, got.count + reasoning.pieces, clock, unseen)
        return completion


def reasoning_of(delta):
    """The reasoning text of a delta or message ("" when it has none or it is not text)."""
    for key in REASONING_KEYS:
        value = delta.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def reasoning_count(usage):
    """The server's count of reasoning tokens (usage.completion_tokens_details), else None."""
    return integer(as_dict(as_dict(usage).get("completion_tokens_details")).get("reasoning_tokens"))


def _assembled(model, finish, text, tool_calls=None):
    """The reply as one chat.completion object."""
    message = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
    }


def called(tool_calls):
    """A message's OpenAI tool_calls as [{"name", "arguments"}], or None when there are none."""
    calls = []
    for call in tool_calls:
        function = as_dict(as_dict(call).get("function"))
        if function.get("name") is not None or function.get("arguments") is not None:
            calls.append(tool_call(function.get("name"), function.get("arguments")))
    return calls or None


class ToolCallPieces:
    """Streamed tool calls put back together: each delta carries pieces of calls by `index`
    (the id and name once, the arguments' text split over many events)."""

    def __init__(self):
        self._calls = {}  # index -> {"id", "type", "function": {"name", "arguments"}}

    def add(self, deltas):
        """Take one event's delta.tool_calls; True when it held a piece of a call."""
        took = False
        for position, delta in enumerate(deltas if isinstance(deltas, list) else ()):
            delta = as_dict(delta)
            index = delta.get("index")
            index = index if isinstance(index, int) else position
            call = self._calls.setdefault(
                index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
            )
            if isinstance(delta.get("id"), str):
                call["id"] = delta["id"]
            function = as_dict(delta.get("function"))
            if isinstance(function.get("name"), str):
                call["function"]["name"] += function["name"]
            arguments = function.get("arguments")
            if isinstance(arguments, dict):  # a server that sends them whole, as an object
                call["function"]["arguments"] = arguments
            elif isinstance(arguments, str) and isinstance(call["function"]["arguments"], str):
                call["function"]["arguments"] += arguments
            took = True
        return took

    def wire(self):
        """The calls in OpenAI's message shape, in index order."""
        return [self._calls[i] for i in sorted(self._calls)]

    def calls(self):
        """The calls as [{"name", "arguments"}], or None when none came."""
        return called(self.wire())


def _text(value):
    """A short string field of a reply (model, finish_reason), or None when it is not text."""
    return value[:200] if isinstance(value, str) else None


def apply_usage(completion, usage, timings):
    """Token counts, cost and llama.cpp timings from a reply onto a Completion."""
    usage = usage if isinstance(usage, dict) else {}
    timings = timings if isinstance(timings, dict) else {}
    completion.prompt_tokens = integer(usage.get("prompt_tokens"))
    completion.completion_tokens = integer(usage.get("completion_tokens"))
    completion.cost_usd = number(usage.get("cost"))
    if timings:
        if completion.prompt_tokens is None:
            prompt_n = integer(timings.get("prompt_n"))
            cache_n = integer(timings.get("cache_n")) or 0
            completion.prompt_tokens = prompt_n + cache_n if prompt_n is not None else None
        if completion.completion_tokens is None:
            completion.completion_tokens = integer(timings.get("predicted_n"))
        completion.prompt_ms = number(timings.get("prompt_ms"))
        completion.decode_ms = number(timings.get("predicted_ms"))
        tps = number(timings.get("predicted_per_second"))
        if tps:
            completion.tokens_per_second = tps
            completion.tps_source = "llamacpp.timings"
