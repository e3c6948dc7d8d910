"""Speed checks: latency, time to first token, tokens generated and cost at most the value,
read from the answer's facts; a fact not known fails saying so."""

import pytest

from app.scoring.checks.evaluate import run_check
from app.scoring.checks.spec import parse_checks

FACTS = {"time_taken_ms": 1200.0, "ttft_ms": 180.5, "tokens_generated": 250, "cost_usd": 0.0004}


def check(kind, value, facts=FACTS):
    (parsed,) = parse_checks([{"type": kind, "value": value}])
    return run_check(parsed, "an answer", facts=facts)


@pytest.mark.parametrize(
    "kind, value, reason",
    [
        ("latency", 1500, "latency 1200 ms ≤ 1500 ms"),
        ("ttft", 200, "time to first token 180.5 ms ≤ 200 ms"),
        ("tokens", 250, "tokens generated 250 ≤ 250"),
        ("cost", 0.001, "cost 0.0004 USD ≤ 0.001 USD"),
    ],
)
def test_a_fact_at_most_the_value_passes(kind, value, reason):
    result = check(kind, value)
    assert result.passed and result.reason == reason


def test_a_fact_over_the_value_fails_saying_both():
    result = check("latency", 1000)
    assert not result.passed and result.reason == "latency 1200 ms > 1000 ms"


@pytest.mark.parametrize("facts", [None, {}, {"ttft_ms": None}])
def test_an_unknown_fact_fails_saying_it_is_unknown(facts):
    result = check("ttft", 500, facts=facts)
    assert (
        not result.passed
        and result.reason == "time to first token unknown (no ttft_ms for this answer)"
    )
