"""Speed checks: the call's latency, time to first token, tokens generated and cost, each at
most the check's value, read from the answer's facts (scoring.score.FACTS)."""

from .reasons import num

# A check type: (its fact, how a reason names it, its unit).
FACT_OF = {
    "latency": ("time_taken_ms", "latency", "ms"),
    "ttft": ("ttft_ms", "time to first token", "ms"),
    "tokens": ("tokens_generated", "tokens generated", ""),
    "cost": ("cost_usd", "cost", "USD"),
}


def at_most(check, answer, context):
    fact, label, unit = FACT_OF[check.type]
    value = (context.facts or {}).get(fact)
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0, f"{label} unknown (no {fact} for this answer)"
    unit = f" {unit}" if unit else ""
    if value <= check.value:
        return 100.0, f"{label} {num(value)}{unit} ≤ {num(check.value)}{unit}"
    return 0.0, f"{label} {num(value)}{unit} > {num(check.value)}{unit}"


EVALUATORS = dict.fromkeys(FACT_OF, at_most)
