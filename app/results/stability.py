"""Stability of a run with repeats: how much a model's score for one task moves between its K
answers (settings.repeats), and how much the judge's score for one answer moves between its J
judgements (settings.judgeRepeats)."""

import statistics

from ..db.models import COMPLETED
from ..runs.outcomes import I
from ..runs.outcomes import T
from .kept import code_stamp
from .kept import kept_figures

# A task whose K scores lie further apart than this (score points) counts as unstable.
UNSTABLE_SPAN = 20.0
_CODE = code_stamp(__file__, ("stability.py",))  # in a kept stability's stamp


def spread(scores):
    """{n, mean, sd, span} of one task's (or one answer's) scores; sd is the sample SD."""
    scores = [s for s in scores if s is not None]
    if not scores:
        return {"n": 0, "mean": None, "sd": None, "span": None}
    return {
        "n": len(scores),
        "mean": statistics.fmean(scores),
        "sd": statistics.stdev(scores) if len(scores) > 1 else 0.0,
        "span": max(scores) - min(scores),
    }


def _summary(spreads):
    """Mean SD, mean span and the share of unstable entries over spreads of two or more."""
    repeated = [s for s in spreads if s["n"] > 1]
    if not repeated:
        return {"repeated": 0, "meanSd": None, "meanSpan": None, "unstableShare": None}
    return {
        "repeated": len(repeated),
        "meanSd": statistics.fmean(s["sd"] for s in repeated),
        "meanSpan": statistics.fmean(s["span"] for s in repeated),
        "unstableShare": sum(1 for s in repeated if s["span"] > UNSTABLE_SPAN) / len(repeated),
    }


def stability(run, limit=25):
    """Per target: task spreads (mean, SD, span over the K answers), the share of tasks whose
    scores span more than UNSTABLE_SPAN, and the judge's own spread; plus the `limit` least
    stable (task, target) rows. Only completed (scored) answers count."""
    settings = run.settings or {}
    targets = list(T.select().where(T.run == run).order_by(T.position, T.id))
    tasks = {t.id: {} for t in targets}
    judged = {t.id: [] for t in targets}
    query = (
        I.select(I.target, I.task_key, I.evaluation_score, I.judge_scores)
        .where((I.run == run) & (I.status == COMPLETED) & I.evaluation_score.is_null(False))
        .tuples()
    )
    for target_id, task_key, score, judge_scores in query:
        tasks[target_id].setdefault(task_key, []).append(score)
        if judge_scores:
            judged[target_id].append(spread(judge_scores))
    models, rows = [], []
    for t in targets:
        label = f"{t.provider_name}/{t.model}"
        per_task = {key: spread(scores) for key, scores in tasks[t.id].items()}
        models.append(
            {
                "targetId": t.id,
                "label": label,
                "tasks": len(per_task),
                **_summary(list(per_task.values())),
                "judge": _summary(judged[t.id]),
            }
        )
        rows += [{"label": label, "taskKey": key, **s} for key, s in per_task.items() if s["n"] > 1]
    rows.sort(key=lambda r: (-r["span"], -r["sd"], r["label"], r["taskKey"]))
    return {
        "repeats": int(settings.get("repeats") or 1),
        "judgeRepeats": int(settings.get("judgeRepeats") or 1),
        "unstableSpan": UNSTABLE_SPAN,
        "models": models,
        "tasks": rows[:limit],
        "tasksCount": len(rows),
    }


def kept_stability(run, limit=25):
    """stability(run, limit), kept while the run holds (kept.py): it reads every scored answer
    of the run, on every view of its results page before."""
    return kept_figures(run, f"stability:{limit}", lambda: stability(run, limit), also=_CODE)


def has_repeats(run):
    """Whether the run answered or judged anything more than once (a stability section)."""
    settings = run.settings or {}
    return int(settings.get("repeats") or 1) > 1 or int(settings.get("judgeRepeats") or 1) > 1
