"""Text checks: the answer equals, contains, starts with or matches (regex) given text.

A regex runs with REGEX_TIMEOUT: the `regex` package stops a runaway pattern (catastrophic
backtracking) near that time (its checks are coarse: allow up to about twice that), and the
check fails saying so."""

import string
import unicodedata

from .reasons import show

REGEX_TIMEOUT = 0.5  # seconds


class PatternTimeout(Exception):
    """A json-schema check's pattern ran past REGEX_TIMEOUT on the answer: the check fails,
    saying so (schemas.py raises it)."""


# The regex package lets go of the GIL while it matches a str unless told not to, and taking it
# back waits behind the engine's other threads (up to the 5 ms switch interval each time): a
# 1 us search on a short answer cost ~1 ms of wall time in a run (bench_judge_free.py). It
# keeps the GIL on answers up to this size; a runaway pattern on one still stops at the timeout.
KEEP_GIL_CHARS = 20_000


def concurrent(text):
    """Whether a regex search on `text` lets the engine's other threads run meanwhile."""
    return len(text) > KEEP_GIL_CHARS


_ASCII_PUNCTUATION = set(string.punctuation)


def normalize(text, steps):
    """The text with the `normalize` steps applied (trim, case, whitespace, punctuation)."""
    if "punctuation" in steps:
        text = "".join(
            c for c in text if c not in _ASCII_PUNCTUATION and not unicodedata.category(c)[0] == "P"
        )
    if "whitespace" in steps:
        text = " ".join(text.split())
    if "trim" in steps:
        text = text.strip()
    if "case" in steps:
        text = text.casefold()
    return text


def equals(check, answer, context):
    steps = check.options["normalize"]
    if normalize(answer, steps) == normalize(check.value, steps):
        return 100.0, f"equals {show(check.value)}"
    return 0.0, f"is not {show(check.value)} (answer {show(answer)})"


def contains(check, answer, context):
    if check.value in answer:
        return 100.0, f"contains {show(check.value)}"
    return 0.0, f"{show(check.value)} not found"


def icontains(check, answer, context):
    if check.value.casefold() in answer.casefold():
        return 100.0, f"contains {show(check.value)} (any case)"
    return 0.0, f"{show(check.value)} not found (any case)"


def contains_any(check, answer, context):
    found = next((v for v in check.value if v in answer), None)
    if found is not None:
        return 100.0, f"contains {show(found)}"
    return 0.0, f"none of {', '.join(show(v) for v in check.value)} found"


def contains_all(check, answer, context):
    missing = [v for v in check.value if v not in answer]
    if not missing:
        return 100.0, f"contains all {len(check.value)} texts"
    return 0.0, f"missing {', '.join(show(v) for v in missing)}"


def not_contains(check, answer, context):
    if check.value in answer:
        return 0.0, f"{show(check.value)} found (must not be)"
    return 100.0, f"no {show(check.value)}"


def starts_with(check, answer, context):
    # Leading whitespace is not the model's choice of words (many servers send a newline first).
    if answer.lstrip().startswith(check.value):
        return 100.0, f"starts with {show(check.value)}"
    return 0.0, f"does not start with {show(check.value)} (starts {show(answer.lstrip(), 30)})"


def regex(check, answer, context):
    try:
        found = check.compiled.search(answer, timeout=REGEX_TIMEOUT, concurrent=concurrent(answer))
    except TimeoutError:
        return 0.0, f"regex timed out after {REGEX_TIMEOUT} s"
    if found:
        return 100.0, f"regex {show(check.value)} found"
    return 0.0, f"regex {show(check.value)} not found"


EVALUATORS = {
    "equals": equals,
    "contains": contains,
    "icontains": icontains,
    "contains-any": contains_any,
    "contains-all": contains_all,
    "not-contains": not_contains,
    "starts-with": starts_with,
    "regex": regex,
}
