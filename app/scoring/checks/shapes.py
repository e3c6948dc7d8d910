"""Shape checks: the option picked (choice), the number given, JSON, JSON matching a schema, and
the answer's length."""

import json
import re

from ...jsontext import depth_over
from ...jsontext import loads
from .reasons import num
from .reasons import show
from .spec import allowed_gap
from .text import PatternTimeout

# A JSON answer may come in a fenced block (```json … ```), often with words around it.
_FENCED = re.compile(r"```(?:[ \t]*(?:json|JSON))?[ \t]*\r?\n(.*?)```", re.DOTALL)
# `anywhere` tries at most this many "{" of an answer as the start of a JSON object: a bound on
# the work a long answer full of braces can cause.
MAX_OBJECT_STARTS = 200
# Two floats that print alike are equal: a parsed 0.3 and an expected 0.1 + 0.2.
_EPSILON = 1e-9


def choice(check, answer, context):
    # Lazy: picks compiles ~20 patterns at import (~10 ms), and every run's scoring loads this
    # module; only a task with a choice or number check needs them.
    from .picks import pick_choice

    picked = pick_choice(answer)
    if picked is None:
        return 0.0, f"no option letter found (expected {check.value})"
    if picked == check.value:
        return 100.0, f"picked {picked}"
    return 0.0, f"picked {picked}, expected {check.value}"


def number(check, answer, context):
    from .picks import pick_number  # lazy, as in choice()

    got = pick_number(answer)
    expected = check.value
    gap = allowed_gap(check.options["tolerance"], expected)
    plus = f" ± {num(gap)}" if gap else ""
    if got is None:
        return 0.0, f"no number found (expected {num(expected)}{plus})"
    if abs(got - expected) <= gap + _EPSILON * max(1.0, abs(expected)):
        return 100.0, f"number {num(got)} is {num(expected)}{plus}"
    return 0.0, f"number {num(got)} is not {num(expected)}{plus}"


def read_json(answer):
    """(data, None) when the answer is JSON (or holds a fenced JSON block), else (None, why)."""
    try:
        return loads(answer.strip()), None
    except ValueError as exc:
        error = exc
    fenced = _FENCED.search(answer)
    if fenced:
        try:
            return loads(fenced.group(1).strip()), None
        except ValueError as exc:
            error = exc
    if isinstance(error, json.JSONDecodeError):
        return None, f"not JSON: {error.msg} at line {error.lineno} column {error.colno}"
    return None, f"not JSON: {error}"


def objects_within(answer):
    """The JSON objects that stand anywhere in the answer, in order (each found from a "{" and
    read to its end; a found object's inside is not searched again). Strict JSON only:
    promptfoo's contains-json also reads YAML-ish objects (unquoted keys, comments)."""
    found, decoder, start, tries = [], json.JSONDecoder(), answer.find("{"), 0
    while start != -1 and tries < MAX_OBJECT_STARTS:
        tries += 1
        try:
            data, end = decoder.raw_decode(answer, start)
        except (ValueError, RecursionError):
            start = answer.find("{", start + 1)
            continue
        if isinstance(data, dict) and not depth_over(data):
            found.append(data)
        start = answer.find("{", end)
    return found


def _candidates(check, answer):
    """([the JSON values the check may judge], why there are none)."""
    data, why = read_json(answer)
    if not check.options.get("anywhere"):
        return ([data], None) if not why else ([], why)
    if not why and isinstance(data, dict):
        return [data], None
    # Only objects count, as in promptfoo: a bare number or list of numbers is not "JSON in it".
    found = objects_within(answer)
    return (found, None) if found else ([], "no JSON object in the answer")


def json_shape(check, answer, context):
    found, why = _candidates(check, answer)
    if why:
        return 0.0, why
    data = found[0]
    return 100.0, f"JSON {type(data).__name__.replace('dict', 'object').replace('list', 'array')}"


def json_schema(check, answer, context):
    found, why = _candidates(check, answer)
    if why:
        return 0.0, why
    # Lazy: jsonschema (~60 ms to import) only where a json-schema check is scored; its
    # validator (check.compiled) was built with it, so it is loaded by then.
    from jsonschema.exceptions import best_match

    first = None  # the first value's error, which the reason names
    for data in found:  # any one that matches will do (promptfoo's contains-json)
        try:
            error = best_match(check.compiled.iter_errors(data))
        except PatternTimeout as exc:
            return 0.0, str(exc)
        except Exception as exc:  # e.g. a $ref that resolves nowhere: the schema, not the answer
            return 0.0, f"the schema could not be applied: {show(exc, 120)}"
        if error is None:
            return 100.0, "JSON matches the schema"
        if first is None:
            first = error
    where = first.json_path
    return 0.0, f"JSON does not match the schema at {where}: {show(first.message, 120)}"


def length(check, answer, context):
    unit = check.options["unit"]
    size = len(answer.split()) if unit == "words" else len(answer)
    low, high = check.options["min"], check.options["max"]
    unit = unit[:-1] if size == 1 else unit  # "1 word"
    if low is not None and size < low:
        return 0.0, f"{size} {unit}, fewer than {low}"
    if high is not None and size > high:
        return 0.0, f"{size} {unit}, more than {high}"
    return 100.0, f"{size} {unit}"


EVALUATORS = {
    "choice": choice,
    "number": number,
    "json": json_shape,
    "json-schema": json_schema,
    "length": length,
}
