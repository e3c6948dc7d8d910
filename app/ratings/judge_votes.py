"""Asking a judge model to vote on an A/B scope: check the request, queue the pairwise job.

The job's calls run through the engine as the first target's run's work (runs/judge_jobs.py,
engine/calls.py): each pair in both orders, claims, retries, budget and pause as for any judge
call. Progress reads like a run's; the judge's position consistency comes from its votes.
"""

from ..db.models import JudgeJob
from ..db.models import Provider
from ..db.models import RunTarget
from ..errors import NotFound
from ..errors import ValidationError
from ..ids import is_db_id
from ..ids import whole_number
from ..runs.judge_jobs import PAIRWISE
from ..runs.judge_jobs import job_progress
from ..runs.judge_jobs import judge_voter
from ..runs.judge_jobs import queue_pairwise
from ..runs.spec import clean_params
from ..runs.spec_check import check_models
from .leaderboard import consistency
from .votes import scope

BODY_KEYS = (
    "runA",
    "targetA",
    "runB",
    "targetB",
    "judgeProviderConfigId",
    "judgeProviderId",
    "judgeModelName",
    "judgeModel",
    "judgeParams",
)


def _judge(body):
    errors = []
    raw_id = body.get("judgeProviderConfigId", body.get("judgeProviderId"))
    model = body.get("judgeModelName", body.get("judgeModel"))
    provider = None
    if raw_id in (None, ""):
        errors.append({"field": "judgeProviderConfigId", "message": "is required"})
    else:
        try:
            pk = whole_number(raw_id, "judgeProviderConfigId", low=1)
            provider = Provider.get_or_none(Provider.id == pk)
            if provider is None:
                errors.append({"field": "judgeProviderConfigId", "message": f"no provider {pk}"})
        except ValidationError as exc:
            errors += exc.errors
    if not isinstance(model, str) or not model.strip():
        errors.append({"field": "judgeModelName", "message": "is required (a model name)"})
        model = None
    params = clean_params(body.get("judgeParams"), ("judgeParams",), errors)
    if not errors:
        check_models(provider, model.strip(), [], errors, [])
    if errors:
        raise ValidationError(errors)
    return provider, model.strip(), params


def ask_judge(body):
    """Queue a judge's pairwise votes on the scope's unvoted pairs; the job, or None when this
    judge already voted on every pair."""
    if not isinstance(body, dict):
        raise ValidationError.field("body", "send a JSON object")
    unknown = sorted(set(body) - set(BODY_KEYS))
    if unknown:
        raise ValidationError.field(unknown[0], "unknown field; use " + ", ".join(BODY_KEYS[:6]))
    pair_scope = scope(body.get("runA"), body.get("targetA"), body.get("runB"), body.get("targetB"))
    provider, model, params = _judge(body)
    return queue_pairwise(pair_scope.target_a, pair_scope.target_b, provider, model, params)


def get_job(job_id):
    """A pairwise job by id, or NotFound."""
    job = JudgeJob.get_or_none(JudgeJob.id == job_id) if is_db_id(job_id) else None
    if job is None or job.kind != PAIRWISE:
        raise NotFound(f"No pairwise judging job {job_id}.")
    return job


def job_status(job):
    """A pairwise job's progress and its judge's position consistency on the job's targets."""
    out = job_progress(job)
    targets = [job.target_a_id, job.target_b_id]
    labels = dict(
        RunTarget.select(RunTarget.id, RunTarget.label).where(RunTarget.id.in_(targets)).tuples()
    )
    out["targetA"], out["targetB"] = labels.get(job.target_a_id), labels.get(job.target_b_id)
    voter = judge_voter(job.judge_provider_name, job.judge_model).removeprefix("judge:")
    mine = [row for row in consistency(targets) if row["judge"] == voter]
    out["consistency"] = (
        mine[0] if mine else {"judge": voter, "pairs": 0, "consistent": 0, "rate": None}
    )
    return out


def latest_job(pair_scope):
    """The newest pairwise job on this scope's two targets (either order), or None."""
    a, b = pair_scope.target_a.id, pair_scope.target_b.id
    return (
        JudgeJob.select()
        .where(
            (JudgeJob.kind == PAIRWISE)
            & (
                ((JudgeJob.target_a == a) & (JudgeJob.target_b == b))
                | ((JudgeJob.target_a == b) & (JudgeJob.target_b == a))
            )
        )
        .order_by(JudgeJob.id.desc())
        .first()
    )
