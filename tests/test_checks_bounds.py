"""Checks never hang or raise: a runaway regex times out with a reason, a 1 MiB answer and odd
answers are scored. How long they take is measured, not asserted: bench/bench_checks.py."""

import random

import pytest

from app.scoring.checks.evaluate import evaluate
from app.scoring.checks.spec import parse_checks
from app.scoring.checks.text import REGEX_TIMEOUT
from app.scoring.checks.text import concurrent

ONE_OF_EACH = [
    {"type": "equals", "value": "x", "normalize": ["trim", "case", "whitespace", "punctuation"]},
    {"type": "contains", "value": "x"},
    {"type": "icontains", "value": "x"},
    {"type": "contains-any", "value": ["x", "y"]},
    {"type": "contains-all", "value": ["x", "y"]},
    {"type": "not-contains", "value": "x"},
    {"type": "starts-with", "value": "x"},
    {"type": "regex", "value": r"(\w+\s?)*$"},
    {"type": "choice", "value": "B"},
    {"type": "number", "value": 42, "tolerance": "1%"},
    {"type": "json"},
    {"type": "json-schema", "value": {"type": "object", "required": ["a"]}},
    {"type": "length", "max": 10},
    {"type": "rouge-1"},
    {"type": "rouge-2"},
    {"type": "rouge-l"},
    {"type": "bleu"},
    {"type": "chrf"},
    {"type": "similarity"},
    {"type": "tool-call", "value": {"name": "f", "arguments": {"a": 1}}},
    {"type": "latency", "value": 1},
    {"type": "ttft", "value": 1},
    {"type": "tokens", "value": 1},
    {"type": "cost", "value": 1},
]
CHECKS = parse_checks(ONE_OF_EACH, has_reference=True)
ODD_ANSWERS = [
    "",
    None,
    "   \n\t ",
    "é東京😀🎉\u200b\u202e",
    "\x00\x01 binary \ufffd",
    "\ud800 lone surrogate",
    "{not json",
    "```json\n{broken\n```",
    "[" * 100_000,
    "(" * 100_000 + "B",
    "The answer is" + " " * 100_000 + "!",
    "answer" + " " * 100_000 + "x",
    "```" + " " * 100_000 + "json",
    "```\n" * 50_000,
    "**" * 50_000,
    "1," * 100_000,
    "1" * 10_000,
    "1e999999",
    "1/" + "7" * 5000,
]


@pytest.mark.parametrize("answer", ODD_ANSWERS)
def test_every_check_scores_an_odd_answer_without_raising(answer):
    evaluation = evaluate(CHECKS, answer, reference="a reference", facts={}, tool_calls=["?"])
    assert len(evaluation.results) == len(CHECKS)
    assert all(0 <= r.score <= 100 for r in evaluation.results)
    # Scored by the check itself, not by evaluate's last guard.
    assert not [r.reason for r in evaluation.results if r.reason.startswith("could not run")]


def test_a_catastrophic_regex_times_out_with_a_reason():
    checks = parse_checks([{"type": "regex", "value": "(a|aa)+$"}])
    (result,) = evaluate(checks, "a" * 40 + "b").results
    assert not result.passed and result.reason == f"regex timed out after {REGEX_TIMEOUT:g} s"


def test_a_nested_quantifier_on_a_near_match_is_not_found():
    checks = parse_checks([{"type": "regex", "value": "(a+)+$"}])
    (result,) = evaluate(checks, "a" * 40 + "b").results
    assert not result.passed and result.reason == "regex `(a+)+$` not found"


def test_every_check_scores_a_1_mib_answer():
    rng = random.Random(5)
    words = "the of cat sat on 42 mat café 東京 answer is B".split()
    answer = " ".join(rng.choice(words) for _ in range(200_000))[: 1 << 20]
    evaluation = evaluate(CHECKS, answer, reference=answer[:5000], facts={})
    assert len(evaluation.results) == len(CHECKS)


def test_a_regex_keeps_the_gil_on_a_short_answer_and_lets_it_go_on_a_long_one():
    # Letting it go on a short answer made the engine's threads queue to take it back.
    assert not concurrent("The answer is 42.") and concurrent("x" * 1_000_000)
