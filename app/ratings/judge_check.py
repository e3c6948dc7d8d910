"""The judge check: does the judge order a task's own references, and does it agree with people?

Reference check: the run's judge scored each task's excellent, good and pass references as if
they were answers (runs/judge_jobs.py queues it, the engine makes the calls). A task is ordered
when its scores strictly fall from excellent to good to pass, tied when they never rise but two
are equal, inverted when one rises; only tasks with at least two levels scored count. A judge
that gives the three references one score has told nothing apart: when tied tasks are half or
more, the check says so instead of calling them ordered. It also warns when the judge is one of
the run's targets (it grades its own answers) or very small (1B parameters or fewer, by name).
Agreement: on items that have both a person's rating (one rater's, or everyone's pooled) and a
judge score, the score binned to Likert (agreement.LIKERT_BINS) against the rating: quadratic
weighted Cohen's kappa and Spearman's rho, with n, per judge model.
"""

import re

from ..db.models import COMPLETED
from ..db.models import Item
from ..db.models import JudgeCall
from ..db.models import JudgeJob
from ..db.models import Rating
from ..db.models import Run
from ..db.models import RunTarget
from ..runs.judge_jobs import LEVELS
from ..runs.judge_jobs import REFERENCE
from ..runs.judge_jobs import job_progress
from ..runs.judge_jobs import queue_reference_check
from ..runs.queries import get_run
from .agreement import LIKERT_BINS
from .agreement import score_to_likert
from .agreement import spearman
from .agreement import weighted_kappa
from .between_people import people_agreement

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


# Ties dominate from this share of tasks: the judge cannot tell the references apart.
TIES_DOMINATE = 0.5
# A model name's size: "1.5b", "0.5B", "135m", "360M" (a number right before b or m).
_SIZE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*([bm])(?![a-z])", re.IGNORECASE)
SMALL_PARAMS = 1e9  # 1B parameters or fewer: too small to judge reliably


def classify(values):
    """ "ordered" (strictly falling), "tied" (never rising, two equal) or "inverted"."""
    steps = list(zip(values, values[1:], strict=False))
    if any(a < b for a, b in steps):
        return "inverted"
    if any(a == b for a, b in steps):
        return "tied"
    return "ordered"


def reference_report(job):
    """{"tasks", "ordered", "tied", "inverted", "orderedRate", "tiedRate", "invertedRate",
    "cannotTell", "meanByLevel", "nByLevel", "disordered", "tiedTasks"} of a job."""
    scores = {}
    for task_key, level, score in (
        JudgeCall.select(Item.task_key, JudgeCall.level, JudgeCall.score)
        .join(Item, on=(JudgeCall.item == Item.id))
        .where((JudgeCall.job == job) & (JudgeCall.status == COMPLETED))
        .tuples()
    ):
        scores.setdefault(task_key, {})[level] = score
    by_level = {level: [s[level] for s in scores.values() if level in s] for level in LEVEL_NAMES}
    counts = {"ordered": 0, "tied": 0, "inverted": 0}
    disordered, tied = [], []
    for task_key, levels in sorted(scores.items()):
        values = [levels[level] for level in LEVEL_NAMES if level in levels]
        if len(values) < 2:
            continue
        kind = classify(values)
        counts[kind] += 1
        row = {"taskId": task_key, **{k: levels.get(k) for k in LEVEL_NAMES}}
        if kind == "inverted":
            disordered.append(row)
        elif kind == "tied":
            tied.append(row)
    counted = sum(counts.values())

    def rate(n):
        return n / counted if counted else None

    return {
        "tasks": counted,
        **counts,
        "orderedRate": rate(counts["ordered"]),
        "tiedRate": rate(counts["tied"]),
        "invertedRate": rate(counts["inverted"]),
        "cannotTell": bool(counted) and counts["tied"] / counted >= TIES_DOMINATE,
        "meanByLevel": {level: (sum(v) / len(v) if v else None) for level, v in by_level.items()},
        "nByLevel": {level: len(v) for level, v in by_level.items()},
        "disordered": disordered,
        "tiedTasks": tied,
    }


def parameters(model):
    """The parameter count a model's name states ("qwen2.5:0.5b" -> 5e8, "smollm-135m" ->
    1.35e8), or None when it states none."""
    found = _SIZE.findall(model or "")
    if not found:
        return None
    number, unit = found[-1]
    return float(number) * (1e9 if unit.lower() == "b" else 1e6)


def judge_warnings(run):
    """Why the run's judge may not be trusted: it is one of the targets, or it is very small."""
    warnings = []
    judge = (run.judge_model or "").strip().lower()
    if not judge:
        return warnings
    targets = RunTarget.select(RunTarget.label, RunTarget.model).where(RunTarget.run == run.id)
    same = [t.label for t in targets if (t.model or "").strip().lower() == judge]
    if same:
        warnings.append(
            f"The judge ({run.judge_model}) is also a target ({', '.join(same)}): it grades its "
            "own answers and may favour them."
        )
    size = parameters(run.judge_model)
    if size is not None and size <= SMALL_PARAMS:
        warnings.append(
            f"The judge ({run.judge_model}) is very small (its name says {size / 1e9:g}B "
            "parameters; 1B or fewer): its scores are often noise. Check it against people."
        )
    return warnings


def _agreement(pairs):
    """{"n", "weightedKappa", "spearman"} of (person's rating, judge score) pairs."""
    ratings = [r for r, _s in pairs]
    binned = [score_to_likert(s) for _r, s in pairs]
    return {
        "n": len(pairs),
        "weightedKappa": weighted_kappa(ratings, binned) if pairs else None,
        "spearman": spearman(ratings, [s for _r, s in pairs]),
    }


def _rated_scores(where, rater=None):
    """(judge, rating, score) of the completed items matching `where` with a rating number (of
    one rater, or of every person: each person's rating is one pair)."""
    if rater is not None:
        where &= Rating.rater == rater
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


def agreement_by_judge(runs=None, rater=None):
    """Per judge model (of `runs`, or of every run): agreement with people's ratings (one
    rater's, or everyone's pooled)."""
    where = Item.run.in_([r.id for r in runs]) if runs is not None else (Item.id > 0)
    groups = {}
    for provider, model, rating, score in _rated_scores(where, rater):
        groups.setdefault(f"{provider}/{model}", []).append((rating, score))
    out = []
    for judge, pairs in sorted(groups.items()):
        row = {"judge": judge, **_agreement(pairs)}
        row["disagrees"] = row["weightedKappa"] is not None and row["weightedKappa"] < KAPPA_WARNING
        out.append(row)
    return out


def human_agreement(run, rater=None):
    """Agreement of the run's judge with people's ratings of the run's items (one rater's, or
    everyone's pooled)."""
    # By the ratings' own run column: a few rows by index, not every item of the run probed
    # for a rating (a rating's run is its item's).
    ratings = _rated_scores(Rating.run == run.id, rater)
    pairs = [(rating, score) for _p, _m, rating, score in ratings]
    result = _agreement(pairs)
    result["judge"] = f"{run.judge_provider_name}/{run.judge_model}"
    result["bins"] = BINS_TEXT
    result["likertBins"] = [list(b) for b in LIKERT_BINS]
    kappa = result["weightedKappa"]
    result["disagrees"] = kappa is not None and kappa < KAPPA_WARNING
    return result


def judge_check(run_id, rater=None):
    """GET /api/runs/<id>/judge-check: the latest reference check, the judge's agreement with
    people (one rater, or everyone pooled) and people's agreement with each other."""
    run = get_run(run_id)
    job = latest_job(run)
    empty = {
        "tasks": 0,
        "ordered": 0,
        "tied": 0,
        "inverted": 0,
        "orderedRate": None,
        "tiedRate": None,
        "invertedRate": None,
        "cannotTell": False,
        "meanByLevel": dict.fromkeys(LEVEL_NAMES),
        "nByLevel": dict.fromkeys(LEVEL_NAMES, 0),
        "disordered": [],
        "tiedTasks": [],
    }
    result = {"runId": run.run_id, **(reference_report(job) if job else empty)}
    result["judge"] = f"{run.judge_provider_name}/{run.judge_model}"
    result["job"] = job_progress(job) if job else None
    result["warnings"] = judge_warnings(run)
    result["humanAgreement"] = human_agreement(run, rater)
    result["rater"] = rater
    result["peopleAgreement"] = people_agreement([run])
    result["kappaWarning"] = KAPPA_WARNING
    return result
