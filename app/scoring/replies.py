"""A judge's reply read as one JSON object: the parser the rubric and pairwise judges share."""

import re

from .. import jsontext

# A fenced block is still exactly one JSON object; prose around it is not accepted.
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


class JudgeOutputError(ValueError):
    """The judge's reply is not a usable judgement; the message says why."""


def json_object(text, finish_reason=None):
    """The reply's one JSON object (a dict), or JudgeOutputError saying why there is none."""
    if finish_reason == "length":
        raise JudgeOutputError(
            "the reply was cut off (finish_reason length): raise the judge's max_tokens"
        )
    body = (text or "").strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    if not body:
        raise JudgeOutputError("the reply was empty")
    try:
        data = jsontext.loads(body)
    except ValueError as exc:
        raise JudgeOutputError(f"the reply is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise JudgeOutputError("the reply must be a JSON object")
    return data


def reason(data):
    """The reply's "reason", stripped; JudgeOutputError when it is missing or blank."""
    value = data.get("reason")
    if not isinstance(value, str) or not value.strip():
        raise JudgeOutputError('"reason" must be a non-empty string')
    return value.strip()
