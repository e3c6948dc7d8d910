"""Two runs compared from their files (CI artifacts: results.jsonl or summary.json), and the
gates `llmbench diff` holds a comparison to. Pure: no database; the same verdict as compare.py.

results.jsonl has a score per task, so the paired verdict is worked out as for two runs in one
database; summary.json has each target's means only, so its comparison states the changes and
leaves the verdict out ("no per-task scores")."""

import json
from collections import defaultdict
from pathlib import Path

from ..errors import ValidationError
from .compare import LIST_RULE
from .compare import split_changes
from .compare import verdict

COMPLETED = "COMPLETED"  # an item's status in results.jsonl
INCONCLUSIVE = ("too few shared tasks", "no shared scored tasks")
NO_TASKS = "no per-task scores"
WORSE = "worse"
FILE_SPEED = {"figures": [], "why": "no speed figures compared from files"}


def load_results(path):
    """{runId, items} from results.jsonl, or {runId, models} from summary.json (a JSON object
    with "models"); a ValidationError naming the file (and line) otherwise."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValidationError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    stripped = text.lstrip()
    if stripped.startswith("{") and "\n{" not in stripped.rstrip():
        try:
            whole = json.loads(text)
        except json.JSONDecodeError:
            whole = None
        if isinstance(whole, dict) and isinstance(whole.get("models"), list):
            return {"runId": whole.get("runId") or path.name, "models": whole["models"]}
    items = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValidationError(
                f"{path} line {number}: not JSON ({exc.msg}); diff takes results.jsonl or "
                "summary.json"
            ) from None
        if not isinstance(row, dict) or "taskId" not in row or "target" not in row:
            raise ValidationError(
                f"{path} line {number}: not a results.jsonl row (taskId and target expected); "
                "diff takes results.jsonl or summary.json"
            )
        items.append(row)
    if not items:
        raise ValidationError(f"{path}: no results in it (results.jsonl or summary.json)")
    return {"runId": path.parent.name or path.name, "items": items}


def _side_from_items(rows):
    scores = [
        r["score"] for r in rows if r.get("status") == "COMPLETED" and r.get("score") is not None
    ]
    failed = [r for r in rows if r.get("status") in ("FAILED", "CANT_BE_FINISHED")]
    judge_failed = [r for r in failed if (r.get("error") or {}).get("stage") == "judge"]
    return {
        "items": len(rows),
        "completed": sum(1 for r in rows if r.get("status") == "COMPLETED"),
        "failedAnswer": len(failed) - len(judge_failed),
        "failedJudge": len(judge_failed),
        "avgScore": sum(scores) / len(scores) if scores else None,
        "compositeScore": None,
    }


def _side_from_model(m):
    return {
        "items": m.get("items"),
        "completed": m.get("completed") or 0,
        "failedAnswer": m.get("failedAnswer") or 0,
        "failedJudge": m.get("failedJudge") or 0,
        "avgScore": m.get("avgScore"),
        "compositeScore": m.get("compositeScore"),
    }


def _task_scores(rows):
    """{task id: mean score} of the scored rows (repeats of a task averaged)."""
    scores = defaultdict(list)
    for r in rows:
        if r.get("status") == "COMPLETED" and r.get("score") is not None:
            scores[r["taskId"]].append(r["score"])
    return {task: sum(v) / len(v) for task, v in scores.items()}


def _by_target(results):
    if "items" in results:
        rows = defaultdict(list)
        for r in results["items"]:
            rows[r["target"]].append(r)
        return {label: (_side_from_items(v), _task_scores(v)) for label, v in rows.items()}
    return {
        m.get("label") or f"{m.get('providerName')}/{m.get('model')}": (_side_from_model(m), None)
        for m in results["models"]
    }


def compare_results(results_a, results_b, limit=10):
    """compare_runs' shape (the parts files hold) for two loaded results files."""
    a_targets, b_targets = _by_target(results_a), _by_target(results_b)
    models, changes = [], []
    for label, (side_a, tasks_a) in a_targets.items():
        if label not in b_targets:
            continue
        side_b, tasks_b = b_targets[label]
        delta = (
            None
            if side_a["avgScore"] is None or side_b["avgScore"] is None
            else side_b["avgScore"] - side_a["avgScore"]
        )
        if tasks_a is None or tasks_b is None:
            shared, word, why = 0, NO_TASKS, "summary.json holds each target's means only"
            paired, alert = {"n": 0}, False
        else:
            keys = sorted(k for k in tasks_a if k in tasks_b)
            pairs = [(tasks_a[k], tasks_b[k]) for k in keys]
            outcome = verdict(pairs)
            shared, word, why = len(keys), outcome["verdict"], outcome["why"]
            paired = {k: outcome[k] for k in ("n", "meanDiff", "ciLow", "ciHigh", "significant")}
            alert = outcome["regression"]
            for k, (sa, sb) in zip(keys, pairs, strict=True):
                if sa != sb:
                    changes.append(
                        {"label": label, "taskKey": k, "scoreA": sa, "scoreB": sb, "delta": sb - sa}
                    )
        models.append(
            {
                "label": label,
                "a": side_a,
                "b": side_b,
                "scoreDelta": delta,
                "compositeDelta": None,
                "sharedTasks": shared,
                "pairedScore": paired,
                "verdict": word,
                "verdictWhy": why,
                "regressionAlert": alert,
                "speed": FILE_SPEED,
            }
        )
    # The same lists as a compare of two runs: the verdict's rule, never a contradiction of it.
    lists = split_changes(changes, {m["label"]: m["verdict"] for m in models})
    regressions, improvements, below = lists["regressions"], lists["improvements"], lists["below"]
    return {
        "a": {"runId": results_a["runId"]},
        "b": {"runId": results_b["runId"]},
        "models": models,
        "compositeNote": "",
        "onlyInA": [label for label in a_targets if label not in b_targets],
        "onlyInB": [label for label in b_targets if label not in a_targets],
        "regressionsCount": len(regressions),
        "improvementsCount": len(improvements),
        "regressions": regressions[:limit],
        "improvements": improvements[:limit],
        "listRule": LIST_RULE,
        "belowThresholdCount": len(below),
        "belowThreshold": below[:limit],
        "warnings": [],
    }


def _failed(side):
    return (side.get("failedAnswer") or 0) + (side.get("failedJudge") or 0)


def diff_failures(
    models,
    *,
    fail_on_regression=False,
    max_drop=None,
    fail_on_inconclusive=False,
    names=("A", "B"),
):
    """What fails `llmbench diff`'s gates, one {gate, target, message} per reason:
    --fail-on-regression: a target significantly worse, with no scored task in B, or failing
    more items in B than in A; --max-drop: the mean fell by more than POINTS (significant or
    not); --fail-on-inconclusive: too few (or no) shared scored tasks for a verdict. `names`:
    what the messages call run A and run B (their run ids or files)."""
    failures = []
    name_a, name_b = names

    def fail(gate, m, message):
        failures.append(
            {
                "gate": gate,
                "target": m["label"],
                "detail": message,
                "message": f"{m['label']}: {message}",
            }
        )

    for m in models:
        a, b = m["a"], m["b"]
        if fail_on_regression:
            if m["verdict"] == WORSE:
                fail(
                    "--fail-on-regression",
                    m,
                    f"is worse in {name_b} than in {name_a} "
                    f"({_num(a['avgScore'])} -> {_num(b['avgScore'])}, "
                    f"{m['pairedScore']['n']} shared tasks)",
                )
            if b.get("avgScore") is None:
                fail("--fail-on-regression", m, f"has no scored task in {name_b}")
            if _failed(b) > _failed(a):
                fail(
                    "--fail-on-regression",
                    m,
                    f"fails more items in {name_b} ({_failed(b)}) than in {name_a} ({_failed(a)})",
                )
        if max_drop is not None and a.get("avgScore") is not None:
            drop = a["avgScore"] - (b["avgScore"] if b.get("avgScore") is not None else 0.0)
            if drop > max_drop:
                fail(
                    "--max-drop",
                    m,
                    f"its mean score fell {drop:.1f} points ({_num(a['avgScore'])} -> "
                    f"{_num(b.get('avgScore'))}), more than {max_drop:g}",
                )
        if fail_on_inconclusive and m["verdict"] in INCONCLUSIVE:
            fail("--fail-on-inconclusive", m, f"{m['verdict']}: {m['verdictWhy']}")
    return failures


def _num(value):
    return "-" if value is None else f"{value:.1f}"
