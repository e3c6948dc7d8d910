"""Per-call cost of masking secrets in a normal answer (no secret in it), median of runs.

    PYTHONPATH=$PWD python bench/bench_redaction.py [--baseline OLD_REDACTION_PY]

--baseline: another version of app/providers/redaction.py (`git show REV:app/providers/
redaction.py > /tmp/old.py`), measured alternately with this one on the same texts.

A provider with a bearer key and a second secret header; the answer is ~2 KB of prose with
the usual punctuation (%, &, quotes, backslashes), a 40 KB raw JSON reply, and a ~100 KB
results page (HTML with entities: the output edge's pass). Prints the median
microseconds per call over 9 runs of 2000 calls.
"""

import argparse
import importlib.util
import json
import statistics
import time

from app.providers.redaction import Redactor

SECRETS = ["Bearer sk-live-EVILSECRET7f0123456789abcdef", "x-org-42aa77c1d2e3"]
ANSWER = ('The answer is 42 & that\'s 100% sure: see "Deep Thought" (p. 17) \\ chapter 3. ' * 26)[
    :2048
]
# A results page: HTML whose escaped quotes and ampersands make every escape test run.
PAGE = (
    "<tr><td>it&#39;s &quot;fine&quot; &amp; 100%</td><td>" + ANSWER[:300] + "</td></tr>\n"
) * 250
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


def measure(name, redactor):
    print(f"{name}: answer 2 KB {per_call_us(redactor, ANSWER):.1f} us/call, ", end="")
    print(f"raw 40 KB {per_call_us(redactor, RAW, calls=200):.1f} us/call, ", end="")
    print(f"page {len(PAGE) // 1024} KB {per_call_us(redactor, PAGE, calls=30):.1f} us/call")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", help="another redaction.py to compare with")
    args = parser.parse_args()
    redactor = Redactor(SECRETS)
    assert redactor(ANSWER) == ANSWER and redactor(RAW) == RAW and redactor(PAGE) == PAGE
    baseline = None
    if args.baseline:
        spec = importlib.util.spec_from_file_location("baseline_redaction", args.baseline)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        baseline = module.Redactor(SECRETS)
    for _ in range(2):  # alternately, so a busy machine blurs both alike
        if baseline is not None:
            measure("baseline", baseline)
        measure("this tree", redactor)


if __name__ == "__main__":
    main()
