"""A judge call: one request with a JSON schema, one repair request at most, and every failure
raised as a JudgeError carrying what was sent and received (the rubric and pairwise judges)."""

import time

from ..providers.interface import ProviderError
from .replies import JudgeOutputError

DEFAULT_JUDGE_PARAMS = {"temperature": 0, "max_tokens": 1024}


class JudgeError(Exception):
    """A judgement attempt failed; carries what was sent and received so it can be stored."""

    def __init__(
        self,
        message,
        *,
        transient,
        request=None,
        raws=None,
        ms=0.0,
        retry_after=None,
        unreachable=None,
        busy=None,
        unusable=None,
    ):
        super().__init__(message)
        self.message = message
        self.transient = transient
        self.request = request
        self.raws = raws or []
        self.ms = ms
        self.retry_after = retry_after
        self.unreachable = unreachable  # the judge's server could not be reached (no answer)
        self.busy = busy  # the judge's server answered 429, 503 or "loading model"
        # The judge answered, twice, with output that does not fit the schema: (why, its text).
        self.unusable = unusable


def judge_params(run_params):
    """The judge's generation params: deterministic defaults under the run's own."""
    params = dict(DEFAULT_JUDGE_PARAMS)
    params.update({k: v for k, v in (run_params or {}).items() if v not in (None, "")})
    return params


def ask(adapter, model, messages, schema, parse, repair_prompt, *, params, keep_alive, cancel):
    """Ask once and parse the reply; when it does not parse, ask once more with
    `repair_prompt(error)` after the bad reply. Returns the parsed dict plus `request`, `raws`
    (every raw reply), `ms` and `completions` (the repair's included, for their cost).

    Failures raise JudgeError carrying the same; provider errors keep their transient/permanent
    class, unusable output counts as transient (the retry policy decides).
    """
    params = judge_params(params)
    raws, request, ms, completions = [], None, 0.0, []
    started = time.perf_counter()

    def call(chat_messages):
        completion = adapter.chat(
            model,
            chat_messages,
            params=params,
            stream=False,
            json_schema=schema,
            keep_alive=keep_alive,
            cancel=cancel,
        )
        completions.append(completion)
        raws.append(completion.raw or completion.text)
        return completion

    try:
        completion = call(messages)
        request, ms = completion.request, completion.wall_ms
        try:
            result = masked_reason(adapter, parse(completion.text, completion.finish_reason))
        except JudgeOutputError as exc:
            repair = messages + [
                {"role": "assistant", "content": completion.text or ""},
                {"role": "user", "content": repair_prompt(exc)},
            ]
            completion = call(repair)
            ms += completion.wall_ms
            try:
                result = masked_reason(adapter, parse(completion.text, completion.finish_reason))
            except JudgeOutputError as exc2:
                raise JudgeError(
                    f"judge output unusable after one repair: {exc2}",
                    transient=True,
                    request=request,
                    raws=raws,
                    ms=ms,
                    unusable=(str(exc2), completion.text or ""),
                ) from None
    except ProviderError as exc:
        raise call_failed(
            exc, request, raws, ms or (time.perf_counter() - started) * 1000.0
        ) from exc
    result.update(request=request, raws=raws, ms=ms, completions=completions)
    return result


def masked_reason(adapter, result):
    """The judgement with its reason masked once more, after json.loads decoded it: an escape
    (`\\u0042`) the raw text's mask did not read as a key is plain text by now."""
    redact = getattr(adapter, "redact", None)
    if redact is not None and isinstance(result.get("reason"), str):
        result["reason"] = redact(result["reason"])
    return result


def call_failed(exc, request, raws, ms):
    """The JudgeError for a judge call the provider failed: its transient/permanent class,
    its Retry-After and whether the server could not be reached or was busy (the breaker's
    business)."""
    if exc.raw:
        raws.append(exc.raw)
    return JudgeError(
        f"judge call failed: {exc.message}",
        transient=exc.transient,
        request=request,
        raws=raws,
        ms=ms,
        retry_after=exc.retry_after,
        unreachable=exc.unreachable,
        busy=exc.busy,
    )
