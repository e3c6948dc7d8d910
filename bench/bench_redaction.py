"""Per-call cost of masking secrets in a normal answer (no secret in it), median of runs.

    PYTHONPATH=$PWD python bench/bench_redaction.py

A provider with a bearer key and a second secret header; the answer is ~2 KB of prose with
the usual punctuation (%, &, quotes, backslashes) and a 40 KB raw JSON reply. Prints the median
microseconds per call over 9 runs of 2000 calls.
"""

import json
import statistics
import time

from app.providers.redaction import Redactor

SECRETS = ["Bearer sk-live-EVILSECRET7f0123456789abcdef", "x-org-42aa77c1d2e3"]
ANSWER = ('The answer is 42 & that\'s 100% sure: see "Deep Thought" (p. 17) \\ chapter 3. ' * 26)[
    :2048
]
RAW = json.dumps({"choices": [{"message": {"content": ANSWER * 20}}], "model": "m"})[:40960]


def per_call_us(redact, text, calls=2000, runs=9):
    """Median microseconds one call takes."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(calls):
            redact(text)
        times.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(times)


def main():
    redactor = Redactor(SECRETS)
    assert redactor(ANSWER) == ANSWER and redactor(RAW) == RAW
    print(f"answer 2 KB: {per_call_us(redactor, ANSWER):.1f} us/call")
    print(f"raw 40 KB:   {per_call_us(redactor, RAW, calls=200):.1f} us/call")


if __name__ == "__main__":
    main()
