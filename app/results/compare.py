"""Compare two runs: per-model deltas, paired significance over shared tasks, per-task changes."""

import numpy as np

from ..clock import isoformat
from ..db.models import Run
from ..db.models import RunTarget
from ..db.target_name import target_name
from ..runs.state import run_state
from . import stats
from .averages import model_averages
from .compare_pairs import ANSWER_FAILED
from .compare_pairs import JUDGE_FAILED
from .compare_pairs import OUTCOMES
from .compare_pairs import SCORED
from .compare_pairs import first
from .compare_pairs import item_keys
from .compare_pairs import rank_in_sql
from .compare_pairs import read_pairs
from .compare_pairs import smallest
from .compare_speed import RULE as SPEED_RULE
from .compare_speed import compare_speed
from .compare_speed import speed_by_target
from .composite import DEFAULT_SETTINGS
from .composite import composite_rule
from .composite_figures import target_composites

METHOD = (
    "Paired over the tasks both runs scored for that model: the mean per-task difference "
    "(B − A) with its 95 % percentile bootstrap CI (1000 resamples, fixed seed) and the exact "
    "two-sided sign test. A model is better or worse only with at least 10 paired tasks, a CI "
    "that excludes 0 and a sign-test p below 0.05; a regression is a significant drop of more "
    "than 5 points."
)
# The dashboard's regression alert: a drop of more than 5 points on the shared tasks.
REGRESSION_POINTS = 5.0
# What puts a task under "Regressions" or "Improvements": the verdict's own rule, evidence and
# size, so the lists never contradict it (a 2-point drop under "no significant change" is not a
# regression).
LIST_RULE = (
    "A task is listed as a regression or an improvement only when its model's verdict says so "
    "(worse or better: the paired test above) and its own score moved more than 5 points that "
    "way; every other change is a change below the threshold."
)
# Below this many paired tasks no verdict is given: the sign test cannot reach p < 0.05 with
# fewer than 6 non-zero pairs, and a percentile bootstrap of a handful of values under-covers.
MIN_PAIRED_TASKS = 10
ALPHA = 0.05
# The composite score has no CI (it mixes a mean with a median time and a share), so compare
# states its change and leaves the verdict to the paired score test.
COMPOSITE_NOTE = (
    "The composite score has no confidence interval: its change is stated, not tested; the "
    "verdict comes from the paired score test."
)


def verdict(pairs, *, min_n=MIN_PAIRED_TASKS, alpha=ALPHA, regression_points=REGRESSION_POINTS):
    """The one verdict on a change from run A to run B over paired (a, b) values of the same
    tasks: the API, the compare page and `llmbench diff` all show this one.

    Returns {verdict, why, significant, regression, n, meanDiff, ciLow, ciHigh, signTestP}.
    `verdict` is "better" / "worse" only with at least `min_n` pairs, a bootstrap CI of the
    mean difference that excludes 0 and a sign-test p below `alpha` (both, not either);
    otherwise "no significant change", "too few shared tasks" or "no shared scored tasks".
    `regression` is a "worse" verdict whose mean drop is more than `regression_points`.
    """
    diffs = [b - a for a, b in pairs]
    return verdict_of_differences(
        diffs, min_n=min_n, alpha=alpha, regression_points=regression_points
    )


def verdict_of_differences(
    diffs, *, min_n=MIN_PAIRED_TASKS, alpha=ALPHA, regression_points=REGRESSION_POINTS
):
    """verdict() from the paired differences b - a in the pairs' order (a list or a numpy
    array: the same verdict)."""
    paired = stats.paired_differences(diffs)
    n, mean = paired["n"], paired["meanDiff"]
    p = stats.sign_test(diffs) if n else None
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


def run_choices(limit=200):
    """Recent runs for the pickers: (run_id, label), newest first."""
    query = (
        Run.select(Run.run_id, Run.name, Run.created_at)
        .order_by(Run.created_at.desc(), Run.id.desc())
        .limit(limit)
        .tuples()
    )
    return [
        (run_id, f"{run_id} ({isoformat(created)[:16].replace('T', ' ')})")
        for run_id, _name, created in query
    ]


def _side(row, composite=None):
    return {
        "compositeScore": composite.score if composite else None,
        "compositeFormula": composite.formula() if composite else None,
        "items": row["item_count"],
        "completed": row["completed"],
        "failedAnswer": row["failed_answer"],
        "failedJudge": row["failed_judge"],
        "avgScore": row["avg_score"],
        "scoreCiLow": row["ci_low"],
        "scoreCiHigh": row["ci_high"],
        "avgTimeMs": row["avg_time_ms"],
        "avgTokensPerSecond": row["avg_tokens_per_second"],
    }


def _delta(a, b):
    return None if a is None or b is None else b - a


def _composite_delta(side_a, side_b):
    # Both scores are rounded to 0.1; so is their change (no 0.30000000000000004).
    change = _delta(side_a["compositeScore"], side_b["compositeScore"])
    return None if change is None else round(change, 1)


def _keyed(run, composite_settings):
    """({(provider, label): averages row}, {target id: Composite or None}) of one run."""
    rows = model_averages(run)
    composites = target_composites(run, composite_settings, rows)
    return {(r["provider_name"], r["target_label"]): r for r in rows}, composites


def compare_runs(run_a, run_b, limit=50, composite_settings=DEFAULT_SETTINGS):
    """Per target (matched by provider name + label): deltas, significance, task-level changes,
    each run's composite score with its change (no verdict: it has no CI) and its speed A -> B
    ("speed": compare_speed's figures, faster/slower only from non-overlapping p50 CIs)."""
    avg_a, comp_a = _keyed(run_a, composite_settings)
    avg_b, comp_b = _keyed(run_b, composite_settings)
    shared_keys = [k for k in avg_a if k in avg_b]
    speed_a, goodput_a = speed_by_target(run_a)
    speed_b, goodput_b = speed_by_target(run_b)
    models, changes, failures = [], [], []
    positions = dict(
        RunTarget.select(RunTarget.id, RunTarget.position).where(RunTarget.run == run_a.id).tuples()
    )
    for key in shared_keys:
        a, b = avg_a[key], avg_b[key]
        ta, tb = a["target_id"], b["target_id"]
        label = target_name(*key)
        # One target's pairs at a time, let go before its bootstraps (which take their own
        # buffers) and before the next target's.
        pairs = read_pairs(run_a, run_b, ta, tb)
        scored = (pairs.outcome_a == SCORED) & (pairs.outcome_b == SCORED)
        scored &= pairs.set("score_a") & pairs.set("score_b")
        timed = (pairs.outcome_a != ANSWER_FAILED) & (pairs.outcome_b != ANSWER_FAILED)
        timed &= pairs.set("time_a") & pairs.set("time_b")
        score_diffs = pairs.score_b[scored] - pairs.score_a[scored]
        time_diffs = pairs.time_b[timed] - pairs.time_a[timed]
        failures.append(_judge_failures(pairs, label, limit, positions[ta]))
        moved = _moved(pairs, scored)
        tallies = {
            "sharedTasks": len(pairs),
            "judge": _failed(pairs, JUDGE_FAILED),
            "answer": _failed(pairs, ANSWER_FAILED),
            "asked": int(np.count_nonzero(pairs.asked_differently)),
        }
        del pairs, scored, timed
        score = verdict_of_differences(score_diffs)
        timing = verdict_of_differences(time_diffs)
        del score_diffs, time_diffs
        changes.append(_changes(moved, score["verdict"], limit, label, key, a["model"]))
        side_a, side_b = _side(a, comp_a.get(ta)), _side(b, comp_b.get(tb))
        paired = {k: score[k] for k in ("n", "meanDiff", "ciLow", "ciHigh", "significant")}
        paired_time = {k: timing[k] for k in ("n", "meanDiff", "ciLow", "ciHigh", "significant")}
        models.append(
            {
                "providerName": key[0],
                "model": a["model"],
                "label": label,
                "a": side_a,
                "b": side_b,
                "scoreDelta": _delta(a["avg_score"], b["avg_score"]),
                "compositeDelta": _composite_delta(side_a, side_b),
                "timeDeltaMs": _delta(a["avg_time_ms"], b["avg_time_ms"]),
                "tokensPerSecondDelta": _delta(
                    a["avg_tokens_per_second"], b["avg_tokens_per_second"]
                ),
                "sharedTasks": tallies["sharedTasks"],
                "pairedScore": paired,
                "signTestP": score["signTestP"],
                "pairedTimeMs": paired_time,
                "sharedJudgeFailures": tallies["judge"],
                "sharedAnswerFailures": tallies["answer"],
                "verdict": score["verdict"],
                "verdictWhy": score["why"],
                "regressionAlert": score["regression"],
                "askedDifferently": tallies["asked"],
                "speed": compare_speed(
                    speed_a.get(ta), speed_b.get(tb), goodput_a.get(ta), goodput_b.get(tb)
                ),
            }
        )
    keys = item_keys([c["itemA"] for listed in changes for c in listed["rows"]])
    keys.update(item_keys([f["itemA"] for found in failures for f in found["rows"]]))
    lists = _listed_changes(changes, keys, limit)
    judge_failures = _listed_failures(failures, keys, limit)
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
        "regressions": lists["regressions"],
        "improvements": lists["improvements"],
        "listRule": LIST_RULE,
        "speedRule": SPEED_RULE,
        "belowThresholdCount": lists["belowCount"],
        "belowThreshold": lists["below"],
        "judgeFailuresCount": sum(found["count"] for found in failures),
        "judgeFailures": judge_failures,
        "warnings": comparability_warnings(run_a, run_b, models),
    }


def _failed(pairs, outcome):
    """How many of a target's shared tasks failed that way in A and in B."""
    return {
        "a": int(np.count_nonzero(pairs.outcome_a == outcome)),
        "b": int(np.count_nonzero(pairs.outcome_b == outcome)),
    }


def _judge_failures(pairs, label, limit, position):
    """A target's shared tasks the judge failed in either run: their count, and the first
    `limit` in row order (only those can be listed)."""
    mask = (pairs.outcome_a == JUDGE_FAILED) | (pairs.outcome_b == JUDGE_FAILED)
    rows = [
        {
            "label": label,
            "itemA": int(pairs.id_a[at]),
            "itemB": int(pairs.id_b[at]),
            "outcomeA": OUTCOMES[pairs.outcome_a[at]],
            "outcomeB": OUTCOMES[pairs.outcome_b[at]],
        }
        for at in first(mask, limit)
    ]
    return {"count": int(np.count_nonzero(mask)), "rows": rows, "position": position}


def _moved(pairs, scored):
    """The scored pairs whose score moved: (item A ids, item B ids, scores A, scores B)."""
    where = np.flatnonzero(scored)
    score_a, score_b = pairs.score_a[where], pairs.score_b[where]
    where = where[score_a != score_b]
    return pairs.id_a[where], pairs.id_b[where], pairs.score_a[where], pairs.score_b[where]


def _changes(moved, word, limit, label, key, model):
    """A target's changed scores as its verdict `word` lists them (LIST_RULE): the counts, and
    the rows that can be among the first `limit` of each list it goes to (ties of the change
    are kept: the task key, read later, breaks them)."""
    id_a, id_b, score_a, score_b = moved
    delta = score_b - score_a
    drop, rise = delta < -REGRESSION_POINTS, delta > REGRESSION_POINTS
    if word == "worse":
        lists = {"regressions": (drop, delta), "below": (~drop, -np.abs(delta))}
        counts = {"regressionsCount": int(np.count_nonzero(drop))}
    elif word == "better":
        lists = {"improvements": (rise, -delta), "below": (~rise, -np.abs(delta))}
        counts = {"improvementsCount": int(np.count_nonzero(rise))}
    else:
        lists = {"below": (np.ones(len(delta), dtype=bool), -np.abs(delta))}
        counts = {}
    counts["belowCount"] = len(delta) - sum(counts.values())
    rows = []
    for name, (mask, order) in lists.items():
        at = np.flatnonzero(mask)
        for i in at[smallest(order[at], limit)].tolist():
            rows.append(
                {
                    "list": name,
                    "label": label,
                    "providerName": key[0],
                    "model": model,
                    "itemA": int(id_a[i]),
                    "itemB": int(id_b[i]),
                    "scoreA": float(score_a[i]),
                    "scoreB": float(score_b[i]),
                    "delta": float(delta[i]),
                }
            )
    return {"counts": counts, "rows": rows}


def _change(row, keys):
    task_key, category = keys[row["itemA"]]
    return {
        "label": row["label"],
        "providerName": row["providerName"],
        "model": row["model"],
        "taskKey": task_key,
        "category": category,
        "itemA": row["itemA"],
        "itemB": row["itemB"],
        "scoreA": row["scoreA"],
        "scoreB": row["scoreB"],
        "delta": row["delta"],
    }


def _listed_changes(changes, keys, limit):
    """split_changes' lists of every target's kept rows (each cut at `limit`) and the counts."""
    out = {"regressions": [], "improvements": [], "below": []}
    counts = {"regressionsCount": 0, "improvementsCount": 0, "belowCount": 0}
    for target in changes:
        for name, count in target["counts"].items():
            counts[name] += count
        for row in target["rows"]:
            out[row["list"]].append(_change(row, keys))
    # sorted() is stable and each key ends in the task: the order split_changes gives, ties (a
    # task's repeats) in row order.
    return {
        "regressions": sorted(out["regressions"], key=_by_drop)[:limit],
        "improvements": sorted(out["improvements"], key=_by_rise)[:limit],
        "below": sorted(out["below"], key=_by_size)[:limit],
        **counts,
    }


def _listed_failures(failures, keys, limit):
    """The first `limit` judge failures of all targets in compare's row order: by the target's
    position, then in each target's own order (the database's ORDER BY gave it)."""
    positions = [found["position"] for found in failures if found["rows"]]
    rows = [row for found in failures for row in found["rows"]]
    if len(set(positions)) == len(positions):
        order = {
            id(row): (found["position"], n)
            for found in failures
            for n, row in enumerate(found["rows"])
        }
        rows.sort(key=lambda row: order[id(row)])
    else:  # targets that share a position interleave by task key, in the database's collation
        rank = rank_in_sql([row["itemA"] for row in rows])
        rows.sort(key=lambda row: (rank[row["itemA"]], row["itemB"]))
    return [
        {
            "label": row["label"],
            "taskKey": keys[row["itemA"]][0],
            "itemA": row["itemA"],
            "itemB": row["itemB"],
            "outcomeA": row["outcomeA"],
            "outcomeB": row["outcomeB"],
        }
        for row in rows[:limit]
    ]


def _by_drop(c):
    return (c["delta"], c["label"], c["taskKey"])


def _by_rise(c):
    return (-c["delta"], c["label"], c["taskKey"])


def _by_size(c):
    return (-abs(c["delta"]), c["label"], c["taskKey"])


def split_changes(changes, verdicts, points=REGRESSION_POINTS):
    """The task changes as the verdict reads them: {"regressions", "improvements", "below"}.

    A regression is a drop of more than `points` on a target whose verdict is "worse", an
    improvement a rise of more than `points` on one whose verdict is "better" (LIST_RULE);
    everything else is below the threshold. Each list biggest change first."""
    regressions, improvements, below = [], [], []
    for c in changes:
        word = verdicts.get(c["label"])
        if word == "worse" and c["delta"] < -points:
            regressions.append(c)
        elif word == "better" and c["delta"] > points:
            improvements.append(c)
        else:
            below.append(c)
    return {
        "regressions": sorted(regressions, key=_by_drop),
        "improvements": sorted(improvements, key=_by_rise),
        "below": sorted(below, key=_by_size),
    }


def comparability_warnings(run_a, run_b, models):
    """What makes the two runs' scores less comparable: another judge, other judge params or
    judge prompt, and shared tasks asked differently (question, system prompt, params or
    template version changed: the context hashes differ)."""
    warnings = []
    judge_a = f"{run_a.judge_provider_name}/{run_a.judge_model}"
    judge_b = f"{run_b.judge_provider_name}/{run_b.judge_model}"
    if judge_a != judge_b:
        warnings.append(f"the runs were judged by different judges: {judge_a} and {judge_b}")
    if (run_a.judge_params or {}) != (run_b.judge_params or {}):
        warnings.append(
            f"the judge's params differ: {run_a.judge_params or {}} and {run_b.judge_params or {}}"
        )
    if run_a.prompt_hash and run_b.prompt_hash and run_a.prompt_hash != run_b.prompt_hash:
        warnings.append("the judge's prompt changed between the runs (prompt hash)")
    for m in models:
        if m["askedDifferently"]:
            warnings.append(
                f"{m['label']}: {m['askedDifferently']} of {m['sharedTasks']} shared tasks were "
                "asked differently (question, system prompt, params or template version: "
                "their context hashes differ)"
            )
    return warnings


def _run_info(run):
    return {
        "runId": run.run_id,
        "name": run.name,
        "state": run_state(run),
        "judgeModel": run.judge_model,
        "createdAt": isoformat(run.created_at),
        "finishedAt": isoformat(run.finished_at),
    }
