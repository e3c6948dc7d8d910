"""compare_runs as it was before its pairs were read into numpy arrays (commit 3e45272), frozen
for tests/test_compare_same_as_before.py and bench/bench_compare_first_view.py --check: every
paired row a Python tuple, per-target lists of pairs, the task changes kept as dicts, the
sign test's exact integer sum and the bootstrap over Python lists. One change: repeats of a task
(several rows of one target and task key) are ordered by the item ids, as the new code orders
them, where the old ORDER BY left them to the database's plan."""

import math
import random
from collections import Counter

import numpy as np

from app.db.models import COMPLETED
from app.db.models import Item
from app.db.models import RunTarget
from app.db.target_name import target_name
from app.latency import percentile
from app.results.compare import ALPHA
from app.results.compare import COMPOSITE_NOTE
from app.results.compare import LIST_RULE
from app.results.compare import METHOD
from app.results.compare import MIN_PAIRED_TASKS
from app.results.compare import REGRESSION_POINTS
from app.results.compare import _composite_delta
from app.results.compare import _delta
from app.results.compare import _keyed
from app.results.compare import _run_info
from app.results.compare import _side
from app.results.compare import comparability_warnings
from app.results.compare_speed import RULE as SPEED_RULE
from app.results.compare_speed import compare_speed
from app.results.compare_speed import speed_by_target
from app.results.composite import DEFAULT_SETTINGS
from app.results.composite import composite_rule
from app.runs.outcomes import FAILED_STATUSES

RESAMPLES = 1000
CONFIDENCE = 0.95
SEED = 20240601
# Past this many values per distinct value, resampling the histogram (one binomial draw per
# distinct value) is cheaper than drawing n indices; both sample the same bootstrap distribution.
_HISTOGRAM_RATIO = 15


def bootstrap_means(values, *, resamples=RESAMPLES, seed=SEED):
    """The `resamples` bootstrap means of `values`, sorted ascending."""
    values = sorted(values)
    n = len(values)
    rng = random.Random(seed)
    counts = Counter(values)
    if len(counts) * _HISTOGRAM_RATIO < n:
        means = _histogram_means(sorted(counts.items()), n, resamples, rng)
    else:
        means = _choice_means(values, n, resamples, rng)
    means.sort()
    return means


# Draws per block of resamples in _choice_means: about 16 MiB of indices and values at a time.
_BLOCK = 1 << 20


def _choice_means(values, n, resamples, rng):
    """The means of `resamples` draws of rng.choices(values, k=n), each summed left to right,
    worked out by numpy from the same Mersenne Twister stream: numpy's legacy generator makes
    its doubles from two 32-bit outputs exactly as random.random() does, so index i of draw j
    is floor(u * n) of the same u, and a cumulative sum adds the drawn values in the same
    order as sum() (CPython 3.11; 3.12's sum() compensates its rounding). A pure-Python loop
    of 25 000 draws x 1000 resamples took seconds per target of a 100 000-item compare."""
    state = rng.getstate()[1]
    generator = np.random.RandomState()
    generator.set_state(("MT19937", np.array(state[:-1], dtype=np.uint32), state[-1]))
    array = np.array(values, dtype=np.float64)
    means = []
    per_block = max(1, _BLOCK // n)
    for start in range(0, resamples, per_block):
        count = min(per_block, resamples - start)
        draws = generator.random_sample((count, n))
        draws *= n
        index = draws.astype(np.intp)  # truncation is floor: every draw is >= 0
        totals = np.cumsum(array[index], axis=1)[:, -1] + 0.0  # a sum of -0.0s is 0.0, as sum()
        means.extend((totals / n).tolist())
    return means


def _histogram_means(pairs, n, resamples, rng):
    """Bootstrap means drawn as multinomial counts over the distinct values.

    Most draws take binomial's BTRS branch; it is written out here (the same arithmetic in the
    same order, the same calls to rng.random) because the call and its checks, 200 distinct
    scores x 1000 resamples per target, were a second of a 100 000-item compare."""
    random_, sqrt, floor, log, lgamma = rng.random, math.sqrt, math.floor, math.log, math.lgamma
    means = []
    for _ in range(resamples):
        left = n
        weight_left = n
        total = 0.0
        for value, count in pairs:
            if left == 0:
                break
            if count == weight_left:
                drawn = left
            else:
                p = count / weight_left
                if left == 1 or p > 0.5 or left * p < 10.0:
                    drawn = binomial(rng, left, p)
                else:
                    # binomial's BTRS branch, unchanged.
                    spq = sqrt(left * p * (1.0 - p))
                    b = 1.15 + 2.53 * spq
                    a = -0.0873 + 0.0248 * b + 0.01 * p
                    c = left * p + 0.5
                    vr = 0.92 - 4.2 / b
                    setup = None
                    while True:
                        u = random_() - 0.5
                        us = 0.5 - abs(u)
                        k = floor((2.0 * a / us + b) * u + c)
                        if k < 0 or k > left:
                            continue
                        v = random_()
                        if us >= 0.07 and v <= vr:
                            break
                        if setup is None:
                            alpha = (2.83 + 5.1 / b) * spq
                            lpq = log(p / (1.0 - p))
                            m = floor((left + 1) * p)
                            h = lgamma(m + 1) + lgamma(left - m + 1)
                            setup = (alpha, lpq, m, h)
                        alpha, lpq, m, h = setup
                        v *= alpha / (a / (us * us) + b)
                        if log(v) <= h - lgamma(k + 1) - lgamma(left - k + 1) + (k - m) * lpq:
                            break
                    drawn = k
            total += value * drawn
            left -= drawn
            weight_left -= count
        means.append(total / n)
    return means


def bootstrap_mean_ci(values, *, resamples=RESAMPLES, confidence=CONFIDENCE, seed=SEED):
    """Percentile bootstrap CI (lo, hi) of the mean of `values`; None when there are none."""
    values = list(values)
    if not values:
        return None
    if len(values) == 1 or min(values) == max(values):
        return (float(values[0]), float(values[0]))
    means = bootstrap_means(values, resamples=resamples, seed=seed)
    alpha = (1.0 - confidence) / 2
    return (percentile(means, alpha), percentile(means, 1.0 - alpha))


def paired_bootstrap(pairs, *, resamples=RESAMPLES, confidence=CONFIDENCE, seed=SEED):
    """Mean difference (b - a) over (a, b) pairs with its bootstrap CI and whether it excludes 0."""
    diffs = [b - a for a, b in pairs]
    if not diffs:
        return {"n": 0, "meanDiff": None, "ciLow": None, "ciHigh": None, "significant": False}
    ci = bootstrap_mean_ci(diffs, resamples=resamples, confidence=confidence, seed=seed)
    low, high = ci
    significant = len(diffs) >= 2 and (low > 0 or high < 0)
    return {
        "n": len(diffs),
        "meanDiff": sum(diffs) / len(diffs),
        "ciLow": low,
        "ciHigh": high,
        "significant": significant,
    }


def sign_test(diffs):
    """Exact two-sided sign test p-value over non-zero differences (None when all are ties)."""
    plus = sum(1 for d in diffs if d > 0)
    minus = sum(1 for d in diffs if d < 0)
    n = plus + minus
    if n == 0:
        return None
    k = min(plus, minus)
    # C(n, i) from C(n, i - 1), exactly (integers): math.comb for each i recomputes every
    # term, minutes for the 24 000 paired tasks of a 100 000-item compare.
    term = total = 1
    for i in range(k):
        term = term * (n - i) // (i + 1)
        total += term
    return min(1.0, 2 * (total / 2**n))


def binomial(rng, n, p):
    """One Binomial(n, p) draw from `rng` (CPython 3.12's binomialvariate: BG / BTRS)."""
    if p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    if n == 1:
        return int(rng.random() < p)
    if p > 0.5:
        return n - binomial(rng, n, 1.0 - p)
    random_ = rng.random
    if n * p < 10.0:
        # Geometric method (Devroye): O(np).
        x = y = 0
        c = math.log2(1.0 - p)
        if not c:
            return x
        while True:
            y += math.floor(math.log2(random_()) / c) + 1
            if y > n:
                return x
            x += 1
    # BTRS: transformed rejection with squeeze (Hörmann 1993).
    spq = math.sqrt(n * p * (1.0 - p))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    vr = 0.92 - 4.2 / b
    setup = None
    while True:
        u = random_() - 0.5
        us = 0.5 - abs(u)
        k = math.floor((2.0 * a / us + b) * u + c)
        if k < 0 or k > n:
            continue
        v = random_()
        if us >= 0.07 and v <= vr:
            return k
        if setup is None:
            alpha = (2.83 + 5.1 / b) * spq
            lpq = math.log(p / (1.0 - p))
            m = math.floor((n + 1) * p)
            h = math.lgamma(m + 1) + math.lgamma(n - m + 1)
            setup = (alpha, lpq, m, h)
        alpha, lpq, m, h = setup
        v *= alpha / (a / (us * us) + b)
        if math.log(v) <= h - math.lgamma(k + 1) - math.lgamma(n - k + 1) + (k - m) * lpq:
            return k


def verdict(pairs, *, min_n=MIN_PAIRED_TASKS, alpha=ALPHA, regression_points=REGRESSION_POINTS):
    """The one verdict on a change from run A to run B over paired (a, b) values of the same
    tasks: the API, the compare page and `llmbench diff` all show this one.

    Returns {verdict, why, significant, regression, n, meanDiff, ciLow, ciHigh, signTestP}.
    `verdict` is "better" / "worse" only with at least `min_n` pairs, a bootstrap CI of the
    mean difference that excludes 0 and a sign-test p below `alpha` (both, not either);
    otherwise "no significant change", "too few shared tasks" or "no shared scored tasks".
    `regression` is a "worse" verdict whose mean drop is more than `regression_points`.
    """
    paired = paired_bootstrap(pairs)
    n, mean = paired["n"], paired["meanDiff"]
    p = sign_test([b - a for a, b in pairs]) if n else None
    significant = False
    if n == 0:
        word, why = "no shared scored tasks", "no task was scored in both runs"
    elif n < min_n:
        word = "too few shared tasks"
        why = f"{n} shared scored task{'s' if n != 1 else ''}; a verdict needs at least {min_n}"
    else:
        excludes_zero = paired["ciLow"] > 0 or paired["ciHigh"] < 0
        significant = excludes_zero and p is not None and p < alpha
        if significant:
            word = "better" if mean > 0 else "worse"
            why = f"the 95 % CI excludes 0 and the sign test gives p = {p:.3g} over {n} tasks"
        else:
            word = "no significant change"
            why = (
                "the 95 % CI includes 0"
                if not excludes_zero
                else f"the sign test gives p = {p:.3g}, not below {alpha:g}"
            ) + f" over {n} tasks"
    return {
        "verdict": word,
        "why": why,
        "significant": significant,
        "regression": word == "worse" and mean < -regression_points,
        "n": n,
        "meanDiff": mean,
        "ciLow": paired["ciLow"],
        "ciHigh": paired["ciHigh"],
        "signTestP": p,
    }


def _outcome(status, error_stage):
    if status == COMPLETED:
        return "scored"
    if status in FAILED_STATUSES:
        return "judge_failed" if error_stage == "judge" else "answer_failed"
    return "pending"


def _pairs(run_a, run_b):
    """Rows for every task both runs gave the same target (provider and label, so the same model
    with the same params): one join, no per-row query. The rows come straight from the cursor:
    the columns are text, integers and floats the driver already gives as str, int and float,
    and peewee's per-value conversion of 16 columns x 100 000 rows took seconds."""
    ia, ib = Item.alias("ia"), Item.alias("ib")
    ta, tb = RunTarget.alias("ta"), RunTarget.alias("tb")
    query = (
        ia.select(
            ta.provider_name,
            ta.label,
            ia.task_key,
            ia.category,
            ia.id,
            ia.status,
            ia.error_stage,
            ia.evaluation_score,
            ia.time_taken_ms,
            ia.context_hash,
            ib.id,
            ib.status,
            ib.error_stage,
            ib.evaluation_score,
            ib.time_taken_ms,
            ib.context_hash,
        )
        .join(ta, on=(ia.target == ta.id))
        .join(
            tb,
            on=(
                (tb.run == run_b.id)
                & (tb.provider_name == ta.provider_name)
                & (tb.label == ta.label)
            ),
        )
        .join(ib, on=((ib.run == run_b.id) & (ib.target == tb.id) & (ib.task_key == ia.task_key)))
        .where(ia.run == run_a.id)
        .order_by(ta.position, ia.task_key, ia.id, ib.id)
    )
    return Item._meta.database.execute(query)


def compare_runs(run_a, run_b, limit=50, composite_settings=DEFAULT_SETTINGS):
    """Per target (matched by provider name + label): deltas, significance, task-level changes,
    each run's composite score with its change (no verdict: it has no CI) and its speed A -> B
    ("speed": compare_speed's figures, faster/slower only from non-overlapping p50 CIs)."""
    avg_a, comp_a = _keyed(run_a, composite_settings)
    avg_b, comp_b = _keyed(run_b, composite_settings)
    shared_keys = [k for k in avg_a if k in avg_b]
    per_model = {
        k: {
            "scores": [],
            "times": [],
            "judge": {"a": 0, "b": 0},
            "answer": {"a": 0, "b": 0},
            "tasks": 0,
            "changed": 0,  # shared tasks asked differently (their context hashes differ)
        }
        for k in shared_keys
    }
    changes = _Changes(limit)
    judge_failures = []
    for (
        provider,
        label,
        task_key,
        category,
        id_a,
        status_a,
        stage_a,
        score_a,
        time_a,
        hash_a,
        id_b,
        status_b,
        stage_b,
        score_b,
        time_b,
        hash_b,
    ) in _pairs(run_a, run_b):
        bucket = per_model.get((provider, label))
        if bucket is None:
            continue
        bucket["tasks"] += 1
        if hash_a and hash_b and hash_a != hash_b:
            bucket["changed"] += 1
        out_a, out_b = _outcome(status_a, stage_a), _outcome(status_b, stage_b)
        for side, out in (("a", out_a), ("b", out_b)):
            if out == "judge_failed":
                bucket["judge"][side] += 1
            elif out == "answer_failed":
                bucket["answer"][side] += 1
        if "judge_failed" in (out_a, out_b):
            judge_failures.append(
                {
                    "label": target_name(provider, label),
                    "taskKey": task_key,
                    "itemA": id_a,
                    "itemB": id_b,
                    "outcomeA": out_a,
                    "outcomeB": out_b,
                }
            )
        if out_a != "answer_failed" and out_b != "answer_failed" and None not in (time_a, time_b):
            bucket["times"].append((time_a, time_b))
        if out_a == "scored" and out_b == "scored" and None not in (score_a, score_b):
            bucket["scores"].append((score_a, score_b))
            if score_a != score_b:
                changes.add(
                    {
                        "label": target_name(provider, label),
                        "providerName": provider,
                        "model": avg_a[(provider, label)]["model"],
                        "taskKey": task_key,
                        "category": category,
                        "itemA": id_a,
                        "itemB": id_b,
                        "scoreA": score_a,
                        "scoreB": score_b,
                        "delta": score_b - score_a,
                    }
                )
    speed_a, goodput_a = speed_by_target(run_a)
    speed_b, goodput_b = speed_by_target(run_b)
    models = []
    for key in shared_keys:
        a, b, bucket = avg_a[key], avg_b[key], per_model[key]
        ta, tb = a["target_id"], b["target_id"]
        side_a, side_b = _side(a, comp_a.get(a["target_id"])), _side(b, comp_b.get(b["target_id"]))
        score = verdict(bucket["scores"])
        timing = verdict(bucket["times"])
        paired = {k: score[k] for k in ("n", "meanDiff", "ciLow", "ciHigh", "significant")}
        paired_time = {k: timing[k] for k in ("n", "meanDiff", "ciLow", "ciHigh", "significant")}
        models.append(
            {
                "providerName": key[0],
                "model": a["model"],
                "label": target_name(*key),
                "a": side_a,
                "b": side_b,
                "scoreDelta": _delta(a["avg_score"], b["avg_score"]),
                "compositeDelta": _composite_delta(side_a, side_b),
                "timeDeltaMs": _delta(a["avg_time_ms"], b["avg_time_ms"]),
                "tokensPerSecondDelta": _delta(
                    a["avg_tokens_per_second"], b["avg_tokens_per_second"]
                ),
                "sharedTasks": bucket["tasks"],
                "pairedScore": paired,
                "signTestP": score["signTestP"],
                "pairedTimeMs": paired_time,
                "sharedJudgeFailures": bucket["judge"],
                "sharedAnswerFailures": bucket["answer"],
                "verdict": score["verdict"],
                "verdictWhy": score["why"],
                "regressionAlert": score["regression"],
                "askedDifferently": bucket["changed"],
                "speed": compare_speed(
                    speed_a.get(ta), speed_b.get(tb), goodput_a.get(ta), goodput_b.get(tb)
                ),
            }
        )
    lists = changes.split({m["label"]: m["verdict"] for m in models})
    regressions, improvements, below = lists["regressions"], lists["improvements"], lists["below"]
    return {
        "a": _run_info(run_a),
        "b": _run_info(run_b),
        "method": METHOD,
        "regressionThreshold": REGRESSION_POINTS,
        "compositeRule": composite_rule(composite_settings),
        "compositeNote": COMPOSITE_NOTE,
        "models": models,
        "onlyInA": [f"{p}/{m}" for (p, m) in avg_a if (p, m) not in avg_b],
        "onlyInB": [f"{p}/{m}" for (p, m) in avg_b if (p, m) not in avg_a],
        "regressionsCount": lists["regressionsCount"],
        "improvementsCount": lists["improvementsCount"],
        "regressions": regressions[:limit],
        "improvements": improvements[:limit],
        "listRule": LIST_RULE,
        "speedRule": SPEED_RULE,
        "belowThresholdCount": lists["belowCount"],
        "belowThreshold": below[:limit],
        "judgeFailuresCount": len(judge_failures),
        "judgeFailures": judge_failures[:limit],
        "warnings": comparability_warnings(run_a, run_b, models),
    }


def _by_drop(c):
    return (c["delta"], c["label"], c["taskKey"])


def _by_rise(c):
    return (-c["delta"], c["label"], c["taskKey"])


def _by_size(c):
    return (-abs(c["delta"]), c["label"], c["taskKey"])


class _Changes:
    """The task changes of a compare, holding per target only what split_changes could list
    first under `limit` whatever the target's verdict turns out to be, and the counts. Keeping
    every change took ~1 GiB at a million shared tasks; the verdicts are known only once every
    pair is read, so each target keeps its candidates for all three verdicts."""

    PRUNE_AT = 1000  # changes a target holds before it is cut back to its candidates

    def __init__(self, limit, points=REGRESSION_POINTS):
        self.limit, self.points = limit, points
        self.targets = {}  # label: {"drops", "rises", "aboveDrop", "belowRise", "all", counts}

    def add(self, change):
        """One changed task (a compare row's dict)."""
        kept = self.targets.get(change["label"])
        if kept is None:
            kept = self.targets[change["label"]] = {
                "drops": [],
                "rises": [],
                "notDrops": [],
                "notRises": [],
                "all": [],
                "n": 0,
                "nDrops": 0,
                "nRises": 0,
            }
        kept["n"] += 1
        delta = change["delta"]
        kept["all"].append(change)
        if delta < -self.points:
            kept["nDrops"] += 1
            kept["drops"].append(change)
        else:
            kept["notDrops"].append(change)
        if delta > self.points:
            kept["nRises"] += 1
            kept["rises"].append(change)
        else:
            kept["notRises"].append(change)
        if self.limit is not None and len(kept["all"]) > max(4 * self.limit, self.PRUNE_AT):
            self._prune(kept)

    def _prune(self, kept):
        # sorted() is stable and each key ends in the task, so the first `limit` are the ones
        # split_changes would list, in the same order, ties by arrival as before
        for name, key in (
            ("drops", _by_drop),
            ("rises", _by_rise),
            ("notDrops", _by_size),
            ("notRises", _by_size),
            ("all", _by_size),
        ):
            kept[name] = sorted(kept[name], key=key)[: self.limit]

    def split(self, verdicts):
        """split_changes' lists (each cut at `limit` if there is one) and their full counts."""
        regressions, improvements, below = [], [], []
        counts = {"regressionsCount": 0, "improvementsCount": 0, "belowCount": 0}
        for label, kept in self.targets.items():
            word = verdicts.get(label)
            if word == "worse":
                regressions += kept["drops"]
                below += kept["notDrops"]
                counts["regressionsCount"] += kept["nDrops"]
                counts["belowCount"] += kept["n"] - kept["nDrops"]
            elif word == "better":
                improvements += kept["rises"]
                below += kept["notRises"]
                counts["improvementsCount"] += kept["nRises"]
                counts["belowCount"] += kept["n"] - kept["nRises"]
            else:
                below += kept["all"]
                counts["belowCount"] += kept["n"]
        return {
            "regressions": sorted(regressions, key=_by_drop),
            "improvements": sorted(improvements, key=_by_rise),
            "below": sorted(below, key=_by_size),
            **counts,
        }
