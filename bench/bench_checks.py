"""What checks cost on one answer, median of runs.

    PYTHONPATH=$PWD python bench/bench_checks.py

Prints: microseconds for 5 text checks (equals, icontains, contains-all, not-contains, regex)
on a ~100-word answer; milliseconds for ROUGE-L, ROUGE-2, BLEU, chrF and similarity on two
1 000-word texts; the same metrics at the MAX_CHARS cap (100 000 characters each side); and
the bound on a catastrophic regex and on a regex over a 1 MiB answer.
"""

import random
import statistics
import time

from app.scoring.checks.evaluate import evaluate
from app.scoring.checks.references import MAX_CHARS
from app.scoring.checks.spec import parse_checks

ANSWER = (
    "The capital of France is Paris. It has been the capital since the tenth century, and "
    "the answer to the second question is 42, as the guide says. "
) * 4
TEXT_CHECKS = parse_checks(
    [
        {"type": "equals", "value": "Paris", "normalize": ["trim", "case"]},
        {"type": "icontains", "value": "PARIS"},
        {"type": "contains-all", "value": ["Paris", "42"]},
        {"type": "not-contains", "value": "London"},
        {"type": "regex", "value": r"\b42\b"},
    ]
)
METRICS = ("rouge-l", "rouge-2", "bleu", "chrf", "similarity")


def words(count, rng):
    vocabulary = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
        for _ in range(400)
    ]
    return " ".join(rng.choice(vocabulary) for _ in range(count))


def median_s(work, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def metric_ms(kind, answer, reference, runs):
    checks = parse_checks([{"type": kind, "value": reference}])
    return median_s(lambda: evaluate(checks, answer), runs) * 1000


def main():
    rng = random.Random(7)
    per_run = 1000
    text_us = median_s(lambda: [evaluate(TEXT_CHECKS, ANSWER) for _ in range(per_run)], 9)
    print(f"5 text checks on a {len(ANSWER.split())}-word answer: {text_us * 1e6 / per_run:.1f} µs")
    answer, reference = words(1000, rng), words(1000, rng)
    for kind in METRICS:
        print(f"{kind} at 1 000 words: {metric_ms(kind, answer, reference, 21):.2f} ms")
    big_answer, big_reference = words(30000, rng)[:MAX_CHARS], words(30000, rng)[:MAX_CHARS]
    for kind in METRICS:
        ms = metric_ms(kind, big_answer, big_reference, 3)
        print(f"{kind} at the cap ({MAX_CHARS} characters each): {ms:.0f} ms")
    catastrophic = parse_checks([{"type": "regex", "value": "(a|aa)+$"}])
    start = time.perf_counter()
    result = evaluate(catastrophic, "a" * 40 + "b").results[0]
    print(f"catastrophic regex (a|aa)+$: {time.perf_counter() - start:.2f} s, {result.reason!r}")
    nested = parse_checks([{"type": "regex", "value": "(a+)+$"}])
    start = time.perf_counter()
    result = evaluate(nested, "a" * 40 + "b").results[0]
    print(f"regex (a+)+$ on 'a'*40+'b': {time.perf_counter() - start:.3f} s, {result.reason!r}")
    mib = words(200_000, rng)[: 1 << 20]
    start = time.perf_counter()
    evaluate(TEXT_CHECKS, mib)
    print(f"5 text checks on a 1 MiB answer: {(time.perf_counter() - start) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
