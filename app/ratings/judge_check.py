"""The judge check: does the judge order a task's own references, and does it agree with people?

Reference check: the run's judge scored each task's excellent, good and pass references as if
they were answers (runs/judge_jobs.py queues it, the engine makes the calls). A task is ordered
when its scores never rise from excellent to good to pass (ties allowed); only tasks with at
least two levels scored count. Agreement: on items that have both a person's rating and a judge
score, the score binned to Likert (agreement.LIKERT_BINS) against the rating: quadratic weighted
Cohen's kappa and Spearman's rho, with n, per judge model.
"""

from ..db.models import COMPLETED
from ..db.models import Item
from ..db.models import JudgeCall
from ..db.models import JudgeJob
from ..db.models import Rating
from ..db.models import Run
from ..runs.judge_jobs import LEVELS
from ..runs.judge_jobs import REFERENCE
from ..runs.judge_jobs import job_progress
from ..runs.judge_jobs import queue_reference_check
from ..runs.queries import get_run
from .agreement import LIKERT_BINS
from .agreement import score_to_likert
from .agreement import spearman
from .agreement import weighted_kappa

# Below this kappa the results page says the judge disagrees with the person's ratings
# (Landis and Koch: 0.61 starts "substantial" agreement).
KAPPA_WARNING = 0.6
BINS_TEXT = "judge score 0–19 → 1, 20–39 → 2, 40–59 → 3, 60–79 → 4, 80–100 → 5"
LEVEL_NAMES = [level for level, _column in LEVELS]


def start(run_id):
    """Queue a judge check of the run (202 in the API); Conflict while one is under way."""
    return queue_reference_check(get_run(run_id))


def latest_job(run):
    """The run's most recent reference-check job, or None."""
    return (
        JudgeJob.select()
        .where((JudgeJob.run == run) & (JudgeJob.kind == REFERENCE))
        .order_by(JudgeJob.id.desc())
        .first()
    )


def reference_report(job):
    """{"tasks", "ordered", "orderedRate", "meanByLevel", "nByLevel", "disordered"} of a job."""
    scores = {}
    for task_key, level, score in (
        JudgeCall.select(Item.task_key, JudgeCall.level, JudgeCall.score)
        .join(Item, on=(JudgeCall.item == Item.id))
        .where((JudgeCall.job == job) & (JudgeCall.status == COMPLETED))
        .tuples()
    ):
        scores.setdefault(task_key, {})[level] = score
    by_level = {level: [s[level] for s in scores.values() if level in s] for level in LEVEL_NAMES}
    counted, ordered, disordered = 0, 0, []
    for task_key, levels in sorted(scores.items()):
        values = [levels[level] for level in LEVEL_NAMES if level in levels]
        if len(values) < 2:
            continue
        counted += 1
        if all(a >= b for a, b in zip(values, values[1:], strict=False)):
            ordered += 1
        else:
            disordered.append({"taskId": task_key, **{k: levels.get(k) for k in LEVEL_NAMES}})
    return {
        "tasks": counted,
        "ordered": ordered,
        "orderedRate": ordered / counted if counted else None,
        "meanByLevel": {level: (sum(v) / len(v) if v else None) for level, v in by_level.items()},
        "nByLevel": {level: len(v) for level, v in by_level.items()},
        "disordered": disordered,
    }


def _agreement(pairs):
    """{"n", "weightedKappa", "spearman"} of (person's rating, judge score) pairs."""
    ratings = [r for r, _s in pairs]
    binned = [score_to_likert(s) for _r, s in pairs]
    return {
        "n": len(pairs),
        "weightedKappa": weighted_kappa(ratings, binned) if pairs else None,
        "spearman": spearman(ratings, [s for _r, s in pairs]),
    }


def _rated_scores(where):
    """(judge, rating, score) of the completed items matching `where` with a rating number."""
    return (
        Item.select(Run.judge_provider_name, Run.judge_model, Rating.rating, Item.evaluation_score)
        .join(Rating, on=(Rating.item == Item.id))
        .switch(Item)
        .join(Run, on=(Item.run == Run.id))
        .where(
            where
            & (Item.status == COMPLETED)
            & Item.evaluation_score.is_null(False)
            & Rating.rating.is_null(False)
        )
        .tuples()
    )


def agreement_by_judge(runs=None):
    """Per judge model (of `runs`, or of every run): agreement with people's ratings."""
    where = Item.run.in_([r.id for r in runs]) if runs is not None else (Item.id > 0)
    groups = {}
    for provider, model, rating, score in _rated_scores(where):
        groups.setdefault(f"{provider}/{model}", []).append((rating, score))
    out = []
    for judge, pairs in sorted(groups.items()):
        row = {"judge": judge, **_agreement(pairs)}
        row["disagrees"] = row["weightedKappa"] is not None and row["weightedKappa"] < KAPPA_WARNING
        out.append(row)
    return out


def human_agreement(run):
    """Agreement of the run's judge with people's ratings of the run's items."""
    pairs = [(rating, score) for _p, _m, rating, score in _rated_scores(Item.run == run.id)]
    result = _agreement(pairs)
    result["judge"] = f"{run.judge_provider_name}/{run.judge_model}"
    result["bins"] = BINS_TEXT
    result["likertBins"] = [list(b) for b in LIKERT_BINS]
    kappa = result["weightedKappa"]
    result["disagrees"] = kappa is not None and kappa < KAPPA_WARNING
    return result


def judge_check(run_id):
    """GET /api/runs/<id>/judge-check: the latest reference check and the human agreement."""
    run = get_run(run_id)
    job = latest_job(run)
    empty = {
        "tasks": 0,
        "ordered": 0,
        "orderedRate": None,
        "meanByLevel": dict.fromkeys(LEVEL_NAMES),
        "nByLevel": dict.fromkeys(LEVEL_NAMES, 0),
        "disordered": [],
    }
    result = {"runId": run.run_id, **(reference_report(job) if job else empty)}
    result["judge"] = f"{run.judge_provider_name}/{run.judge_model}"
    result["job"] = job_progress(job) if job else None
    result["humanAgreement"] = human_agreement(run)
    result["kappaWarning"] = KAPPA_WARNING
    return result
