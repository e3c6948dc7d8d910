"""The rubric judge, the scorer that needs a call: prompt, JSON schema, strict validation, one
repair request, our own rubric score."""

import json

from ..hashing import sha256_json
from .judge_calls import ask
from .replies import JudgeOutputError
from .replies import json_object
from .replies import reason as reply_reason
from .score import JUDGE
from .score import Score
from .score import Scorer

JUDGE_PROMPT_VERSION = "judge-v1"
REASON_MAX_LENGTH = 400

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


def _or_dash(text):
    return text.strip() if text and text.strip() else "(none given)"


def _tool_name(tool):
    """A tool's name and description from its OpenAI function schema (or a bare function)."""
    function = tool.get("function", tool) if isinstance(tool, dict) else {}
    function = function if isinstance(function, dict) else {}
    name = str(function.get("name") or "?")
    description = " ".join(str(function.get("description") or "").split())
    return f"{name}: {description}" if description else name


def with_tools_offered(question, tools):
    """The question as the judge reads it: with the tools the task offered the model, by name
    (and description), so a call to one of them reads as an answer."""
    if not tools or not isinstance(tools, list):
        return question
    lines = "\n".join(f"- {_tool_name(t)}" for t in tools)
    return f"{question}\n\nTools offered to the model (it may answer by calling them):\n{lines}"


def with_tool_calls(answer, tool_calls):
    """The answer as the judge reads it: its text, then each tool call it made as compact
    JSON ({name, arguments}; stored masked, as the answer is, by the target's adapter)."""
    if not tool_calls or not isinstance(tool_calls, list):
        return answer
    calls = "\n".join(
        json.dumps(_name_first(call), ensure_ascii=False, separators=(",", ":"))
        for call in tool_calls
    )
    text = answer.rstrip()
    return f"{text}\n\nTool calls:\n{calls}" if text else f"Tool calls:\n{calls}"


def _name_first(call):
    # The stored JSON sorts its keys; the judge reads the name before the arguments.
    if not isinstance(call, dict):
        return call
    return {"name": call.get("name"), "arguments": call.get("arguments"), **call}


def build_judge_messages(item):
    """The judge's chat messages for one item (question and the tools it offered, references,
    rubric, rules, the answer and the tool calls it made). The template is the same for every
    item, so the prompt's hash is too: an item without tools gets the very prompt it had."""
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
        question=with_tools_offered(item.question.strip(), getattr(item, "tools", None)),
        excellent=_or_dash(item.excellent),
        good=_or_dash(item.good),
        pass_answer=_or_dash(item.pass_answer),
        incorrect_direction=_or_dash(item.incorrect_direction),
        rubric_section=rubric_section,
        auto_fail_section=auto_fail_section,
        answer=with_tool_calls(item.answer or "", getattr(item, "tool_calls", None)),
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


def _number(value):
    return isinstance(value, int | float) and not isinstance(value, bool)


def parse_judgement(text, item, finish_reason=None):
    """Validate the judge's reply, ours or apocbench's ({overall_score, notes,
    auto_fail_reason}); return {score, judge_score, reason, rubric_scores, auto_fail,
    auto_fail_reason}."""
    data = json_object(text, finish_reason)
    if "score" not in data and "overall_score" in data:
        return _apocbench(data, item)
    score = data.get("score")
    if not _number(score) or score != int(score) or not 0 <= score <= 100:
        raise JudgeOutputError(f'"score" must be an integer from 0 to 100, got {score!r}')
    reason = reply_reason(data)
    auto_fail = data.get("auto_fail", False)
    if not isinstance(auto_fail, bool):
        raise JudgeOutputError(f'"auto_fail" must be true or false, got {auto_fail!r}')
    if not item.auto_fail_rules:
        auto_fail = False  # no rule to break: a stray flag must not zero the score
    given = data.get("auto_fail_reason")
    why = given.strip() if isinstance(given, str) and given.strip() else reason
    return _judgement(score, reason, data, item.rubric, auto_fail, why if auto_fail else None)


def _apocbench(data, item):
    """An apocbench-style reply: overall_score 0-100, notes (the reason, may be left out),
    auto_fail_reason (non-empty: the answer auto-fails, for that reason)."""
    score = data.get("overall_score")
    if not _number(score) or not 0 <= score <= 100:
        raise JudgeOutputError(f'"overall_score" must be a number from 0 to 100, got {score!r}')
    notes = data.get("notes")
    if notes is not None and not isinstance(notes, str):
        raise JudgeOutputError(f'"notes" must be a string, got {notes!r}')
    why = data.get("auto_fail_reason")
    if why is not None and not isinstance(why, str):
        raise JudgeOutputError(f'"auto_fail_reason" must be a string, got {why!r}')
    why = (why or "").strip() or None
    # The reply names why it auto-fails, so unlike a bare flag it counts without our rules.
    reason = (notes or "").strip() or (f"auto-fail: {why}" if why else "(the judge gave no notes)")
    # Without rubric_scores its overall_score stands (a missing rubric would count as 0).
    rubric = item.rubric if "rubric_scores" in data else None
    return _judgement(score, reason, data, rubric, why is not None, why)


def _judgement(score, reason, data, rubric, auto_fail, auto_fail_reason):
    rubric_scores = None
    final = float(score)
    if rubric:
        rubric_scores, final, missing = _rubric(data.get("rubric_scores"), rubric)
        if missing:
            reason += f" [no rubric score for {', '.join(missing)}: counted as 0]"
    if auto_fail:
        final = 0.0
    return {
        "score": round(final, 2),
        "judge_score": round(score),
        "reason": reason,
        "rubric_scores": rubric_scores,
        "auto_fail": auto_fail,
        "auto_fail_reason": auto_fail_reason,
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


def judge_item(adapter, model, item, *, params=None, keep_alive=None, cancel=None):
    """Ask the judge about one item, with one repair request; return the judgement dict.

    The result also holds `request`, `raws`, `ms` and `completions` (judge_calls.ask); failures
    raise JudgeError carrying the same, so the caller can store them.
    """
    schema = judge_schema(item)
    return ask(
        adapter,
        model,
        build_judge_messages(item),
        schema,
        lambda text, finish_reason: parse_judgement(text, item, finish_reason),
        lambda error: REPAIR_TEMPLATE.format(error=error, keys=", ".join(schema["required"])),
        params=params,
        keep_alive=keep_alive,
        cancel=cancel,
    )


class RubricJudge(Scorer):
    """The rubric judge as a scorer: one model call (one repair at most) per answer."""

    name = "rubric"
    stage = JUDGE

    def ask(self, adapter, model, task, *, params, keep_alive, cancel):
        result = judge_item(
            adapter, model, task, params=params, keep_alive=keep_alive, cancel=cancel
        )
        score = Score.of(
            result["score"],
            result["reason"],
            by=self.name,
            auto_fail=result["auto_fail"],
            rubric_scores=result["rubric_scores"],
            auto_fail_reason=result["auto_fail_reason"],
        )
        return score, result
