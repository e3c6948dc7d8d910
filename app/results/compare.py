"""Compare two runs: per-model deltas, paired significance over shared tasks, per-task changes."""

from ..clock import isoformat
from ..db.models import COMPLETED
from ..db.models import Item
from ..db.models import Run
from ..db.models import RunTarget
from ..db.target_name import target_name
from ..runs.outcomes import FAILED_STATUSES
from ..runs.state import run_state
from . import stats
from .averages import model_averages
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
    paired = stats.paired_bootstrap(pairs)
    n, mean = paired["n"], paired["meanDiff"]
    p = stats.sign_test([b - a for a, b in pairs]) if n else None
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


def _outcome(status, error_stage):
    if status == COMPLETED:
        return "scored"
    if status in FAILED_STATUSES:
        return "judge_failed" if error_stage == "judge" else "answer_failed"
    return "pending"


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
        .order_by(ta.position, ia.task_key)
    )
    return Item._meta.database.execute(query)


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
