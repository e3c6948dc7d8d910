"""The judge: prompt, JSON schema, strict validation, one repair request, our own rubric score."""

import re
import time

from .. import jsontext
from ..hashing import sha256_json
from ..providers.interface import ProviderError

JUDGE_PROMPT_VERSION = "judge-v1"
REASON_MAX_LENGTH = 400
DEFAULT_JUDGE_PARAMS = {"temperature": 0, "max_tokens": 1024}

JUDGE_SYSTEM_PROMPT = (
    "You are a strict, fair grader of answers written by AI models. You compare an answer with "
    "reference answers and grading rules and reply with one JSON object only, no other text."
)

JUDGE_TEMPLATE = """Grade the ANSWER to the QUESTION below.

## Question
{question}

## Reference answers
- Excellent answer (score 90-100): {excellent}
- Good answer (score 70-89): {good}
- Passing answer (score 50-69): {pass_answer}
- An incorrect answer goes in this direction (score below 50): {incorrect_direction}
{rubric_section}{auto_fail_section}
## Answer to grade
<answer>
{answer}
</answer>

## Reply
One JSON object with exactly these keys:
- "score": integer 0-100, your overall grade;
- "reason": string, at most {reason_max} characters, why you gave that score;
{rubric_key}{auto_fail_key}"""

REPAIR_TEMPLATE = (
    "Your reply could not be used: {error}\n"
    "Reply again with the corrected JSON object only (keys: {keys}), nothing else."
)

PROMPT_HASH = sha256_json(
    {
        "version": JUDGE_PROMPT_VERSION,
        "system": JUDGE_SYSTEM_PROMPT,
        "template": JUDGE_TEMPLATE,
        "repair": REPAIR_TEMPLATE,
    }
)


class JudgeOutputError(ValueError):
    """The judge's reply is not a usable judgement; the message says why."""


# The task snapshot an item carries that the judge's prompt reads, beside the answer.
TASK_FIELDS = (
    "question",
    "excellent",
    "good",
    "pass_answer",
    "incorrect_direction",
    "rubric",
    "auto_fail_rules",
)


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


def _or_dash(text):
    return text.strip() if text and text.strip() else "(none given)"


def build_judge_messages(item):
    """The judge's chat messages for one item (question, references, rubric, rules, answer)."""
    rubric_section = ""
    rubric_key = ""
    if item.rubric:
        lines = [
            f'- "{r["id"]}" (weight {r.get("weight", 1):g}, '
            f"score 0-{r.get('max_score', 1):g}): {r.get('text', '')}"
            for r in item.rubric
        ]
        rubric_section = "\n## Rubric (score every item)\n" + "\n".join(lines) + "\n"
        rubric_key = (
            '- "rubric_scores": object with one number per rubric id, each between 0 '
            "and that item's maximum;\n"
        )
    auto_fail_section = ""
    if item.auto_fail_rules:
        rules = "\n".join(f"- {rule}" for rule in item.auto_fail_rules)
        auto_fail_section = (
            "\n## Auto-fail rules (if the answer breaks any, set auto_fail true)\n" + rules + "\n"
        )
    user = JUDGE_TEMPLATE.format(
        question=item.question.strip(),
        excellent=_or_dash(item.excellent),
        good=_or_dash(item.good),
        pass_answer=_or_dash(item.pass_answer),
        incorrect_direction=_or_dash(item.incorrect_direction),
        rubric_section=rubric_section,
        auto_fail_section=auto_fail_section,
        answer=item.answer or "",
        reason_max=REASON_MAX_LENGTH,
        rubric_key=rubric_key,
        auto_fail_key=(
            '- "auto_fail": true if the answer breaks an auto-fail rule, else false.\n'
            if item.auto_fail_rules
            else ""
        ),
    )
    return [{"role": "system", "content": JUDGE_SYSTEM_PROMPT}, {"role": "user", "content": user}]


def judge_schema(item):
    """The JSON schema the judge must follow (sent as structured output)."""
    properties = {
        "score": {"type": "integer", "minimum": 0, "maximum": 100},
        "reason": {"type": "string", "maxLength": REASON_MAX_LENGTH},
    }
    required = ["score", "reason"]
    # auto_fail only where there are rules to break: a small judge asked for it anyway sets it
    # at random and zeroes good answers.
    if item.auto_fail_rules:
        properties["auto_fail"] = {"type": "boolean"}
        required.append("auto_fail")
    if item.rubric:
        properties["rubric_scores"] = {
            "type": "object",
            "properties": {r["id"]: _bounded(r.get("max_score", 1)) for r in item.rubric},
            "required": [r["id"] for r in item.rubric],
            "additionalProperties": False,
        }
        required.insert(2, "rubric_scores")
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _bounded(max_score):
    # llama.cpp turns integer ranges into its grammar but not number ranges, so whole-number
    # maxima are sent as integers: the judge then cannot answer 90 out of 10.
    if float(max_score).is_integer():
        return {"type": "integer", "minimum": 0, "maximum": int(max_score)}
    return {"type": "number", "minimum": 0, "maximum": max_score}


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


def _number(value):
    return isinstance(value, int | float) and not isinstance(value, bool)


def parse_judgement(text, item, finish_reason=None):
    """Validate the judge's reply; return {score, judge_score, reason, rubric_scores, auto_fail}."""
    if finish_reason == "length":
        raise JudgeOutputError(
            "the reply was cut off (finish_reason length): raise the judge's max_tokens"
        )
    body = (text or "").strip()
    fenced = _FENCE.match(body)
    if fenced:  # a fenced block is still exactly one JSON object; prose around it is not accepted
        body = fenced.group(1)
    if not body:
        raise JudgeOutputError("the reply was empty")
    try:
        data = jsontext.loads(body)
    except ValueError as exc:
        raise JudgeOutputError(f"the reply is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise JudgeOutputError("the reply must be a JSON object")
    score = data.get("score")
    if not _number(score) or score != int(score) or not 0 <= score <= 100:
        raise JudgeOutputError(f'"score" must be an integer from 0 to 100, got {score!r}')
    reason = data.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise JudgeOutputError('"reason" must be a non-empty string')
    auto_fail = data.get("auto_fail", False)
    if not isinstance(auto_fail, bool):
        raise JudgeOutputError(f'"auto_fail" must be true or false, got {auto_fail!r}')
    if not item.auto_fail_rules:
        auto_fail = False  # no rule to break: a stray flag must not zero the score
    rubric_scores = None
    final = float(score)
    reason = reason.strip()
    if item.rubric:
        rubric_scores, final, missing = _rubric(data.get("rubric_scores"), item.rubric)
        if missing:
            reason += f" [no rubric score for {', '.join(missing)}: counted as 0]"
    if auto_fail:
        final = 0.0
    return {
        "score": round(final, 2),
        "judge_score": int(score),
        "reason": reason,
        "rubric_scores": rubric_scores,
        "auto_fail": auto_fail,
    }


def _rubric(given, rubric):
    """Check per-item scores and compute our weighted score: (scores, score, missing ids).

    A rubric item without a score counts 0, also when `rubric_scores` is missing
    altogether: the item is scored, and the reason says which were missing.
    """
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise JudgeOutputError('"rubric_scores" must be an object keyed by rubric id')
    ids = {r["id"]: r for r in rubric}
    unknown = sorted(set(given) - set(ids))
    if unknown:
        raise JudgeOutputError(f'"rubric_scores" has unknown ids {unknown}; use {sorted(ids)}')
    scores, total, weights = {}, 0.0, 0.0
    missing = [rid for rid in ids if given.get(rid) is None]
    for rid, r in ids.items():
        top = float(r.get("max_score", 1) or 1)
        weight = float(r.get("weight", 1))
        value = given.get(rid)
        value = 0 if value is None else value
        if not _number(value) or not 0 <= value <= top:
            raise JudgeOutputError(
                f'rubric score "{rid}" must be a number from 0 to {top:g}, got {value!r}'
            )
        scores[rid] = value
        total += weight * (value / top)
        weights += weight
    return scores, (100.0 * total / weights if weights else 0.0), missing


def judge_params(run_params):
    """The judge's generation params: deterministic defaults under the run's own."""
    params = dict(DEFAULT_JUDGE_PARAMS)
    params.update({k: v for k, v in (run_params or {}).items() if v not in (None, "")})
    return params


def judge_item(adapter, model, item, *, params=None, keep_alive=None, cancel=None):
    """Ask the judge about one item, with one repair request; return the judgement dict.

    The result also holds `request`, `raws` (every raw reply), `ms` and `completions` (every
    completion, the repair's included, for their cost). Failures raise
    JudgeError carrying the same, so the caller can store them; provider errors keep their
    transient/permanent class, unusable output counts as transient (the retry policy decides).
    """
    messages = build_judge_messages(item)
    schema = judge_schema(item)
    params = judge_params(params)
    raws, request, ms, completions = [], None, 0.0, []
    started = time.perf_counter()
    try:
        completion = adapter.chat(
            model,
            messages,
            params=params,
            stream=False,
            json_schema=schema,
            keep_alive=keep_alive,
            cancel=cancel,
        )
        request, ms = completion.request, completion.wall_ms
        completions.append(completion)
        raws.append(completion.raw or completion.text)
        try:
            result = masked_reason(
                adapter, parse_judgement(completion.text, item, completion.finish_reason)
            )
        except JudgeOutputError as exc:
            repair = messages + [
                {"role": "assistant", "content": completion.text or ""},
                {
                    "role": "user",
                    "content": REPAIR_TEMPLATE.format(
                        error=exc, keys=", ".join(schema["required"])
                    ),
                },
            ]
            completion = adapter.chat(
                model,
                repair,
                params=params,
                stream=False,
                json_schema=schema,
                keep_alive=keep_alive,
                cancel=cancel,
            )
            ms += completion.wall_ms
            completions.append(completion)
            raws.append(completion.raw or completion.text)
            try:
                result = masked_reason(
                    adapter, parse_judgement(completion.text, item, completion.finish_reason)
                )
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
