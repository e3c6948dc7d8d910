"""The tool-call check: the answer made the expected tool calls.

Each expected call is matched, in order, to a returned call not matched yet with the same name
and matching arguments: equal (`match: exact`) or the expected ones among them (`subset`,
nested objects too); numbers within `tolerance`, true/false only to themselves. The score is
the share of expected calls made; under `exact` an extra returned call counts against it too
(matched / the larger count)."""

import json

from ...jsontext import loads
from .reasons import num
from .reasons import show
from .spec import allowed_gap


def returned_calls(tool_calls):
    """The answer's calls as (name, arguments or None when they are not JSON), skipping
    anything that is not a call; OpenAI's {"function": {...}} shape is read too."""
    calls = []
    for call in tool_calls or []:
        if isinstance(call, dict) and isinstance(call.get("function"), dict):
            call = call["function"]
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            continue
        arguments = call.get("arguments", {})
        if isinstance(arguments, str):
            try:
                arguments = loads(arguments) if arguments.strip() else {}
            except ValueError:
                arguments = None
        calls.append((call["name"], arguments if isinstance(arguments, dict) else None))
    return calls


def _same(want, got, subset, tolerance):
    if isinstance(want, bool) or isinstance(got, bool):
        return isinstance(want, bool) and isinstance(got, bool) and want == got
    if isinstance(want, int | float) and isinstance(got, int | float):
        return abs(got - want) <= allowed_gap(tolerance, want)
    if isinstance(want, dict) and isinstance(got, dict):
        if not subset and set(want) != set(got):
            return False
        return all(k in got and _same(v, got[k], subset, tolerance) for k, v in want.items())
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and all(
            _same(w, g, subset, tolerance) for w, g in zip(want, got, strict=True)
        )
    return type(want) is type(got) and want == got


def tool_call(check, answer, context):
    subset = check.options["match"] == "subset"
    tolerance = check.options["tolerance"]
    calls = returned_calls(context.tool_calls)
    free = list(range(len(calls)))
    missing = []
    for want in check.value:
        found = next(
            (
                i
                for i in free
                if calls[i][0] == want["name"]
                and calls[i][1] is not None
                and _same(want["arguments"], calls[i][1], subset, tolerance)
            ),
            None,
        )
        if found is None:
            missing.append(want)
        else:
            free.remove(found)
    made = len(check.value) - len(missing)
    out_of = len(check.value) if subset else max(len(check.value), len(calls))
    score = 100.0 * made / out_of
    if not missing and (subset or not free):
        return score, f"made the expected call{'s' if made > 1 else ''}"
    names = ", ".join(c[0] for c in calls) or "none"
    if missing:
        first = missing[0]
        wanted = show(f"{first['name']}({json.dumps(first['arguments'], sort_keys=True)})", 80)
        why = f"no call {wanted} (calls made: {show(names, 80)})"
    else:
        why = f"{len(free)} unexpected call(s): {show(', '.join(calls[i][0] for i in free), 80)}"
    return score, f"{made}/{num(out_of)} expected calls made; {why}"


EVALUATORS = {"tool-call": tool_call}
