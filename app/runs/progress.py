"""The live view's progress: counts per status and phase, the ETA and the recent tokens/s."""

import functools

from ..clock import utcnow
from ..db.connection import database
from ..db.connection import tuples_once
from ..db.models import CANT_BE_FINISHED
from ..db.models import COMPLETED
from ..db.models import FAILED
from ..db.models import NEW
from ..db.models import WAITING_FOR_JUDGE
from ..db.models import Item
from ..db.models import RunTarget
from .counts import tally
from .outages import waiting_for
from .state import run_state
from .state import state_label

RATE_WINDOW = 20  # items used for the ETA and the recent tokens/s
ESTIMATE = "stream.estimate"  # the tps_source of a rate whose token count was guessed


def progress_fraction(counts):
    """The one progress figure (0..1) the live view, history, API and CLI all show.

    Two steps per item, its answer and its judgement: an answer waiting for the judge has done
    one, a completed, failed or can't-be-finished item both (failed ones are shown apart, never
    as answered).
    """
    total = sum(counts.values())
    if not total:
        return 0.0
    settled = counts.get(COMPLETED, 0) + counts.get(FAILED, 0) + counts.get(CANT_BE_FINISHED, 0)
    return (2 * settled + counts.get(WAITING_FOR_JUDGE, 0)) / (2 * total)


def progress(run, now=None):
    """Counts per status and per phase, the ETA (both phases) and recent tokens/s."""
    now = now or utcnow()
    # The kept counts (runs/counts.py): a few rows whatever the run's size.
    kept = tally(run)
    counts = dict(kept.by_status)
    answer_failed, judge_failed = kept.answer_failed, kept.judge_failed
    total = sum(counts.values())
    benchmarked = total - counts[NEW]
    judged = counts[COMPLETED] + judge_failed
    judge_total = total - answer_failed  # every answer gets judged
    state = run_state(run)
    judging = run.phase == "JUDGING"
    labels, answered = _latest_answers(run)
    left_per_target, answer_paces = _answer_paces(
        kept, labels, answered, now if not judging else None
    )
    known = [pace for pace in answer_paces.values() if pace is not None]
    # A target not started yet is assumed to go at the average pace of those measured.
    typical = sum(known) / len(known) if known else None
    judge_every = _interval(_recent(run, Item.judged_at), now if judging else None)
    # Judging time is unknown until two judgements are in: assume it is like answering.
    judge_every = judge_every if judge_every is not None else typical
    eta = None
    left_to_answer, left_to_judge = counts[NEW], judge_total - judged
    if state == "running" and (left_to_answer or left_to_judge):
        if (typical is not None or not left_to_answer) and judge_every is not None:
            eta = left_to_judge * judge_every + sum(
                left * (answer_paces.get(target) or typical)
                for target, left in left_per_target.items()
            )
    # Measured rates only (an estimate, its token count guessed from chunks, stays out), and
    # only the model that answered last: an average across models describes none of them.
    rate_target = answered[0][4] if answered else None
    tps = [
        t
        for _, _, t, source, target in answered[:10]
        if t and source != ESTIMATE and target == rate_target
    ]
    label, tone = state_label(state, counts[COMPLETED], answer_failed + judge_failed)
    return {
        "total": total,
        "counts": counts,
        "benchmarked": benchmarked,
        "answer_failed": answer_failed,
        "judged": judged,
        "judge_failed": judge_failed,
        "judge_total": judge_total,
        "bench_pct": pct(benchmarked, total),
        "judge_pct": pct(judged, judge_total),
        "overall_pct": round(100.0 * progress_fraction(counts), 1),
        # Answered means an answer came back; failed answers are counted apart.
        "answered": benchmarked - answer_failed,
        "answered_pct": pct(benchmarked - answer_failed, total),
        "answer_failed_pct": pct(answer_failed, total),
        "judge_failed_pct": pct(judge_failed, judge_total),
        "completed_pct": pct(counts[COMPLETED], judge_total),
        "eta_seconds": eta,
        "recent_tps": sum(tps) / len(tps) if tps else None,
        "recent_tps_target": labels.get(rate_target) if tps else None,
        # The items whose request is out now, with how long each has been running.
        "in_flight": in_flight(run, now) if state == "running" else [],
        "state": state,
        "state_label": label,
        "state_tone": tone,
        "phase": run.phase,
        # Servers that cannot be reached now: their items wait (engine/breaker.py).
        "waiting": waiting_for(run) if state == "running" else [],
    }


def in_flight(run, now, limit=5):
    """The items an orchestrator works on now, oldest first: task, target, step, seconds."""
    rows = tuples_once(
        "in flight",
        lambda: (
            Item.select(Item.task_key, Item.status, Item.last_attempt_at, RunTarget.label)
            .join(RunTarget)
            .where((Item.run == 0) & Item.in_flight(now))
            .order_by(Item.last_attempt_at)
            .limit(limit)
        ),
        (getattr(run, "id", run), Item.claimed_until.db_value(now), limit),
    )
    return [
        {
            "task": task,
            "target": label,
            "step": "judging" if status == WAITING_FOR_JUDGE else "answering",
            "seconds": max(0.0, (now - since).total_seconds()) if since else None,
        }
        for task, status, since, label in rows
    ]


def _latest_answers(run):
    """({target id: label}, rows): the run's targets, and each one's latest RATE_WINDOW answers
    as (answered_at, time_taken_ms, tokens/s, tps_source, target id), newest first. The run's
    latest RATE_WINDOW answers are the first RATE_WINDOW rows (each is among its target's)."""
    pk = getattr(run, "id", run)
    labels = dict(
        tuples_once(
            "target labels",
            lambda: RunTarget.select(RunTarget.id, RunTarget.label).where(RunTarget.run == 0),
            (pk,),
        )
    )
    if not labels:
        return labels, []
    params = [value for target in labels for value in (pk, target, RATE_WINDOW)]
    rows = sorted(
        database.execute_sql(_latest_answers_sql(len(labels)), params),
        key=lambda row: (row[0], row[5]),
        reverse=True,
    )
    to_datetime = Item.answered_at.python_value
    return labels, [
        (to_datetime(at), ms, tps, source, target) for at, ms, tps, source, target, _ in rows
    ]


@functools.cache
def _latest_answers_sql(targets):
    """Each of `targets` targets' latest RATE_WINDOW answers in one statement: one seek of the
    (run, target, answered_at) index per target, whatever the run's size. One statement, not
    one per target: on PostgreSQL each is a round trip (the poll's largest cost there)."""
    one = (
        "SELECT * FROM (SELECT answered_at, time_taken_ms, tokens_per_second, tps_source, "
        "target_id, id FROM item WHERE run_id = ? AND target_id = ? AND answered_at IS NOT NULL "
        "ORDER BY answered_at DESC, id DESC LIMIT ?) AS latest{}"
    )
    return " UNION ALL ".join(one.format(i) for i in range(targets))


def _answer_paces(kept, targets, latest, now=None):
    """({target id: items left to answer}, {target id: seconds per answer or None}) from the
    run's kept counts, its targets and their latest answers (_latest_answers).

    Each target's pace is its own: the spacing of its recent answers, else their average answer
    time. With `now`, the target answering last has its window run to now, so a stall shows.
    """
    left = {target: n for target, n in kept.new_by_target.items() if n}
    windows = {target: [] for target in targets}  # a target with no answer yet keeps []
    for answered_at, ms, _, _, target in latest:
        windows[target].append((answered_at, ms))
    started = [(w[0][0], t) for t, w in windows.items() if w]
    last = max(started)[1] if started else None
    paces = {}
    for target, window in windows.items():
        pace = _interval(window, now if target == last else None)
        times = [ms for _, ms in window if ms]
        if pace is None and times:
            pace = sum(times) / len(times) / 1000.0
        paces[target] = pace
    return left, paces


def _recent(run, column, *extra):
    """The latest RATE_WINDOW (time, *extra) rows of the run where `column` is set."""
    return tuples_once(
        ("recent", column.name, *(f.name for f in extra)),
        lambda: (
            Item.select(column, *extra)
            .where((Item.run == 0) & column.is_null(False))
            .order_by(column.desc())
            .limit(RATE_WINDOW)
        ),
        (getattr(run, "id", run), RATE_WINDOW),
    )


def _interval(recent, now=None):
    """Seconds per item over the recent window (None with fewer than two items).

    With `now`, the window ends now rather than at the last item, so a stall makes it grow.
    """
    if len(recent) < 2:
        return None
    span = (recent[0][0] - recent[-1][0]).total_seconds()
    if now is not None:
        span += max(0.0, (now - recent[0][0]).total_seconds())
    return span / (len(recent) - 1) if span > 0 else None


def pct(part, whole):
    """`part` as a percentage of `whole`, one decimal (0.0 when there is no whole)."""
    return round(100.0 * part / whole, 1) if whole else 0.0
