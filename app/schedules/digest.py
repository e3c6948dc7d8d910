"""When a run finishes: store what Trends reads (per-run aggregates), check for regressions and
keep its speed figures (results/speed.py).

The scheduler thread runs digest_finished between ticks (and `llmbench run` after its run), so
a finished run is digested once, by whichever process sees it first: the RunDigest row is unique
per run and is inserted in the same transaction as the aggregates. A run that finished while no
process digested (a crash, an older version) is picked up on the next pass.
"""

import logging

from peewee import JOIN
from peewee import IntegrityError

from ..clock import utcnow
from ..db.connection import database
from ..db.models import FINISHED
from ..db.models import Run
from ..db.models import RunAggregate
from ..db.models import RunDigest
from ..hashing import canonical_params
from ..hashing import sha256_json
from ..heap import give_back
from ..results.aggregates import OVERALL
from ..results.aggregates import run_aggregates
from ..results.composite import DEFAULT_SETTINGS
from ..results.speed import keep_speed
from ..runs.dto import judge_label
from ..sysmetrics.series import peaks
from ..sysmetrics.store import run_samples
from .alerts import evaluate_run

log = logging.getLogger(__name__)

BATCH = 20  # runs digested per pass at most (older versions' runs catch up over a few passes)


def judge_key(run):
    """What makes two runs' scores comparable on the judge's side: provider, model, params and
    the judge prompt's hash."""
    return sha256_json(
        [
            run.judge_provider_name,
            run.judge_model,
            canonical_params(run.judge_params or {}),
            run.prompt_hash,
        ]
    )


def pending_runs(limit=BATCH):
    """Finished runs without a digest, the earliest finished first."""
    return list(
        Run.select()
        .join(RunDigest, JOIN.LEFT_OUTER, on=(RunDigest.run == Run.id))
        .where((Run.status == FINISHED) & RunDigest.id.is_null())
        .order_by(Run.finished_at, Run.id)
        .limit(limit)
    )


def digest_run(run, now=None, composite_settings=DEFAULT_SETTINGS):
    """Store one finished run's digest and aggregates, then raise its alerts (the composite
    score's with `composite_settings`); returns the digest, or None when another process
    digested it first."""
    now = now or utcnow()
    aggregates = run_aggregates(run)
    samples = run_samples(run)
    system_peaks = peaks(samples) if samples else None
    finished = run.finished_at or now
    overall = [a for a in aggregates if a["category"] == OVERALL]
    try:
        with database.atomic():
            digest = RunDigest.create(
                run=run,
                finished_at=finished,
                judge_key=judge_key(run),
                # A judge-free run reads "— (checks only)" on trends, not a bare "/".
                judge_label=judge_label(run.judge_provider_name, run.judge_model),
                tasks_key=run.dataset_hash,
                task_count=max((a["tasks"] for a in overall), default=0),
                repeats=int((run.settings or {}).get("repeats") or 1),
                system_peaks=system_peaks,
                created_at=now,
            )
            rows = [
                {
                    "run": run.id,
                    "target": a["target_id"],
                    "series": a["series"],
                    "provider_name": a["provider_name"],
                    "model": a["model"],
                    "category": a["category"],
                    "finished_at": finished,
                    "judge_key": digest.judge_key,
                    "judge_label": digest.judge_label,
                    "tasks_key": digest.tasks_key,
                    **{k: a[k] for k in AGGREGATE_FIELDS},
                }
                for a in aggregates
            ]
            for start in range(0, len(rows), 200):
                RunAggregate.insert_many(rows[start : start + 200]).execute()
    except IntegrityError:  # digested by another process meanwhile
        return None
    try:
        evaluate_run(run, digest, overall, now, composite_settings)
    except Exception:  # the aggregates stay; Trends shows the run even without its check
        log.exception("regression check of run %s failed", run.run_id)
    # What the aggregates read and freed goes back first: the speed figures read every answer
    # again and otherwise grew on top of it (a 60k-call run's peak, heap.py).
    give_back()
    try:
        # Its speed figures, worked out now so that the first view of its speed page (any
        # process's) reads one row, not every item.
        keep_speed(run)
    except Exception:  # the page works them out itself then
        log.exception("speed figures of run %s not stored", run.run_id)
    return digest


AGGREGATE_FIELDS = (
    "items",
    "n",
    "tasks",
    "failed",
    "score",
    "ci_low",
    "ci_high",
    "tokens_per_second",
    "ttft_p50_ms",
    "time_p50_ms",
    "cost_usd",
)


def digest_finished(now=None, limit=BATCH, composite_settings=DEFAULT_SETTINGS):
    """Digest every finished run that has no digest yet (at most `limit`); returns them."""
    done = []
    for run in pending_runs(limit):
        try:
            digest = digest_run(run, now, composite_settings)
        except Exception:  # one broken run must not block the others; logged, tried again
            log.exception("could not digest run %s", run.run_id)
            continue
        if digest is not None:
            done.append(digest)
    return done
