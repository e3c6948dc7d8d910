"""Speed in a comparison (issue 29): each shared target's percentiles, output tok/s and goodput
in run A and run B, with the change, under the same evidence rule as scores: a change is called
"faster" or "slower" only when the two runs' 95 % CIs of a p50 do not overlap and the p50 moved
by at least a stated size (MIN_CHANGE_SHARE and MIN_CHANGE_MS): a 1 ms shift on a huge run has
tight CIs but is no change anyone would notice.

The figures are run_speed's and run_goodput's (kept per run, so a comparison reads two rows).
"""

from .goodput import run_goodput
from .speed import run_speed

FASTER = "faster"
SLOWER = "slower"
NO_CLEAR_CHANGE = "no clear change"
NO_SPEED = "no speed figures"

# (key, speed figure, percentile, words): the figures shown A -> B (lower is better).
FIGURES = (
    ("ttftP50Ms", "ttftMs", "p50", "p50 TTFT"),
    ("ttftP90Ms", "ttftMs", "p90", "p90 TTFT"),
    ("itlP50Ms", "itlMs", "p50", "p50 ITL"),
    ("e2eP90Ms", "e2eMs", "p90", "p90 e2e"),
)
# The size a p50 must move by, both at once, to be called faster or slower: a share of A's p50
# and a number of milliseconds.
MIN_CHANGE_SHARE = 0.05
MIN_CHANGE_MS = 2.0
RULE = (
    "Faster or slower only when the two runs' 95 % CIs of a p50 (TTFT, ITL or end-to-end time) "
    f"do not overlap and that p50 moved by at least {MIN_CHANGE_SHARE:.0%} and "
    f'{MIN_CHANGE_MS:g} ms; otherwise "no clear change".'
)
# The p50s whose CIs decide the verdict: the wait for the first token, the gaps between tokens
# and the whole answer.
EVIDENCE = (("ttftMs", "p50 TTFT"), ("itlMs", "p50 ITL"), ("e2eMs", "p50 e2e"))


def speed_by_target(run):
    """{target id: run_speed's figures} and {target id: goodput figures} (empty without an
    SLO) of one run."""
    speed = run_speed(run)
    goodput = run_goodput(run, speed=speed)
    by_id = {t["targetId"]: t for t in goodput["targets"]} if goodput else {}
    return {t["targetId"]: t for t in speed["targets"]}, by_id


def has_speed(target):
    """Whether a target has timing figures: a TTFT or a send time (older runs have neither)."""
    if target is None:
        return False
    return bool(target["ttftMs"]["n"]) or target["window"]["outputTokensPerSecond"] is not None


def big_enough(a, b):
    """Whether a p50 moving from `a` to `b` (ms) is a change of the stated size (RULE)."""
    if a is None or b is None:
        return False
    move = abs(b - a)
    return move >= MIN_CHANGE_MS and move >= MIN_CHANGE_SHARE * abs(a)


def p50_change(a, b):
    """FASTER / SLOWER when the p50 CIs of two distributions (lower is better) do not overlap
    and the p50 moved by the stated size (RULE), NO_CLEAR_CHANGE otherwise, None when either
    has no CI."""
    ci_a, ci_b = a.get("p50Ci"), b.get("p50Ci")
    if not ci_a or not ci_b:
        return None
    if not big_enough(a.get("p50"), b.get("p50")):
        return NO_CLEAR_CHANGE
    if ci_b[1] < ci_a[0]:
        return FASTER
    if ci_b[0] > ci_a[1]:
        return SLOWER
    return NO_CLEAR_CHANGE


def _row(key, words, a, b, verdict=None):
    change = None if None in (a, b) else b - a
    return {"key": key, "words": words, "a": a, "b": b, "change": change, "verdict": verdict}


def compare_speed(target_a, target_b, goodput_a=None, goodput_b=None):
    """One shared target's speed from A to B: {"figures": [{key, words, a, b, change,
    verdict}], "verdict", "why"}; {"figures": [], "verdict": None, "why": NO_SPEED ...} when
    either run has no timing figures for it. Goodput joins when both runs have an SLO."""
    missing = [side for side, t in (("A", target_a), ("B", target_b)) if not has_speed(t)]
    if missing:
        return {"figures": [], "verdict": None, "why": f"{NO_SPEED} in {' and '.join(missing)}"}
    figures = []
    for key, figure, name, words in FIGURES:
        fa, fb = target_a[figure], target_b[figure]
        verdict = p50_change(fa, fb) if name == "p50" else None
        figures.append(_row(key, words, fa[name], fb[name], verdict=verdict))
    figures.append(
        _row(
            "outputTokensPerSecond",
            "output tok/s",
            target_a["window"]["outputTokensPerSecond"],
            target_b["window"]["outputTokensPerSecond"],
        )
    )
    if goodput_a is not None and goodput_b is not None:
        figures.append(
            _row("goodput", "goodput (answers/s)", goodput_a["goodput"], goodput_b["goodput"])
        )
    verdict, why = _verdict(target_a, target_b)
    return {"figures": figures, "verdict": verdict, "why": why}


def _verdict(target_a, target_b):
    """FASTER when a p50's CIs do not overlap and it is lower in B, with no p50 clearly higher;
    SLOWER the other way round; NO_CLEAR_CHANGE otherwise (overlapping CIs, or one figure
    faster and another slower)."""
    calls = {}
    for figure, words in EVIDENCE:
        call = p50_change(target_a[figure], target_b[figure])
        if call in (FASTER, SLOWER):
            calls.setdefault(call, []).append(words)
    if len(calls) == 1:
        ((call, words),) = calls.items()
        return call, (
            f"{', '.join(words)}: the 95 % CIs of A and B do not overlap and the p50 moved by at "
            f"least {MIN_CHANGE_SHARE:.0%} and {MIN_CHANGE_MS:g} ms"
        )
    if calls:
        return NO_CLEAR_CHANGE, (
            f"{', '.join(calls[FASTER])} faster but {', '.join(calls[SLOWER])} slower"
        )
    return NO_CLEAR_CHANGE, (
        f"the 95 % CIs of the p50s overlap, or the p50s moved by less than "
        f"{MIN_CHANGE_SHARE:.0%} or {MIN_CHANGE_MS:g} ms"
    )
