"""Reading runs: get one, the active one, lists, items (paginated in SQL), logs, spending."""

import datetime as dt

from peewee import SQL
from peewee import Case
from peewee import fn

from ..db.connection import built_once
from ..db.models import CONTROL_PAUSED
from ..db.models import CONTROL_QUEUED
from ..db.models import CONTROL_RUNNING
from ..db.models import CONTROL_STOPPED
from ..db.models import FINISHED
from ..db.models import ITEM_STATUSES
from ..db.models import PENDING
from ..db.models import Item
from ..db.models import JudgeCall
from ..db.models import Run
from ..db.models import RunCollection
from ..db.models import RunLog
from ..db.models import RunTarget
from ..errors import Conflict
from ..errors import NotFound
from ..errors import ValidationError
from ..ids import SQLITE_INT_MAX
from ..ids import digits_number
from ..ids import whole_number
from .counts import count_items
from .counts import tallies
from .counts import tally
from .dto import run_summary
from .state import run_state

RUN_STATUSES = (PENDING, FINISHED)
RUN_STATES = ("queued", "running", "paused", "stopped", "finished")


def get_run(run_id):
    """The run named `run_id`, or NotFound."""
    sql = built_once("run by name", lambda: Run.select().where(Run.run_id == "").limit(1))
    run = next(iter(Run.raw(sql, run_id, 1)), None)
    if run is None:
        raise NotFound(
            f"No run named {run_id!r}; the run history (Runs in the web app, "
            "or GET /api/runs) lists the runs that exist."
        )
    return run


def get_item(run_id, item_id):
    """Item `item_id` of the run named `run_id` (with its target), or NotFound."""
    run = get_run(run_id)
    item = (
        Item.select(Item, RunTarget)
        .join(RunTarget)
        .where((Item.run == run) & (Item.id == item_id))
        .first()
    )
    if item is None:
        raise NotFound(f"No item {item_id} in run {run_id}.")
    return item


def state_condition(state):
    """A WHERE expression selecting runs in the shown state (running/paused/stopped/finished)."""
    if state == "finished":
        return Run.status == FINISHED
    control = {
        "queued": CONTROL_QUEUED,
        "running": CONTROL_RUNNING,
        "paused": CONTROL_PAUSED,
        "stopped": CONTROL_STOPPED,
    }[state]
    return (Run.status == PENDING) & (Run.control == control)


def _active_query():
    """The running run first, else the newest paused one: values bound in the order status,
    running, paused, running (the order's), limit."""
    running_first = Case(None, [(Run.control == "", SQL("0"))], SQL("1"))
    return (
        Run.select()
        .where((Run.status == "") & Run.control.in_(["", ""]))
        .order_by(running_first, Run.created_at.desc())
        .limit(1)
    )


def active_run():
    """The run that is running, else the newest paused one (several may wait), or None. One
    statement, built once: every page's status pill asks (two, built anew, before)."""
    sql = built_once("active run", _active_query)
    values = (PENDING, CONTROL_RUNNING, CONTROL_PAUSED, CONTROL_RUNNING, 1)
    run = next(iter(Run.raw(sql, *values)), None)
    if run is not None:
        run.state = run_state(run)
    return run


def running_run():
    """The run the engine works on (at most one), or None. A run left running by an
    orchestrator that died shows stopped (runs/state.py) and is no longer it."""
    run = (
        Run.select()
        .where((Run.status == PENDING) & (Run.control == CONTROL_RUNNING))
        .order_by(Run.created_at.desc())
        .first()
    )
    if run is None:
        return None
    run.state = run_state(run)
    return run if run.state == "running" else None


def waiting_runs():
    """Paused and stopped runs that have not finished (resumable), newest first."""
    runs = list(
        Run.select()
        .where((Run.status == PENDING) & (Run.control.in_([CONTROL_PAUSED, CONTROL_STOPPED])))
        .order_by(Run.created_at.desc(), Run.id.desc())
    )
    for run in runs:
        run.state = run_state(run)
    return runs


def latest_unfinished(name):
    """The newest run named `name` that has not finished, or None (`resume: true`)."""
    return (
        Run.select()
        .where((Run.name == name) & (Run.status == PENDING))
        .order_by(Run.created_at.desc(), Run.id.desc())
        .first()
    )


def check_no_active_run(exclude=None):
    """Conflict when a run other than `exclude` is running (one run at a time). A paused or
    stopped run never blocks another: it waits, resumable."""
    active = running_run()
    if active is not None and active.id != getattr(exclude, "id", None):
        raise Conflict(
            f"Run {active.run_id} is {active.state}; stop it or let it finish before "
            "starting another (one run at a time)."
        )


# The most runs one page of GET /api/runs returns.
RUNS_LIMIT_MAX = 1000


def _count(value, field, low, high=None):
    """A whole number from a query string within [low, high], or ValidationError naming it."""
    text = str(value).strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 12:
        raise ValidationError.field(field, "must be a whole number")
    number = int(text)
    if number < low or (high is not None and number > high):
        bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise ValidationError.field(field, f"must be {bounds}")
    return number


def list_runs(status=None, state=None, limit=None, offset=None):
    """Runs newest first, filtered by persisted status (PENDING/FINISHED) or shown state;
    `limit` (1-RUNS_LIMIT_MAX) and `offset` page them (strings from a query string are fine)."""
    query = Run.select().order_by(Run.created_at.desc(), Run.id.desc())
    if limit not in (None, ""):
        query = query.limit(_count(limit, "limit", 1, RUNS_LIMIT_MAX))
    if offset not in (None, ""):
        query = query.offset(_count(offset, "offset", 0))
    if status:
        if str(status).upper() not in RUN_STATUSES:
            raise ValidationError.field(
                "status", f"unknown status {status!r}; use " + " or ".join(RUN_STATUSES)
            )
        query = query.where(Run.status == str(status).upper())
    if state:
        if state not in RUN_STATES:
            raise ValidationError.field("state", "use " + ", ".join(RUN_STATES))
        query = query.where(state_condition(state))
    return list(query)


def list_logs(run_id, since=None, limit=200):
    """Run log lines oldest first; `since` is a log id (exclusive) or an ISO time."""
    run = get_run(run_id)
    query = RunLog.select().where(RunLog.run == run)
    if since not in (None, ""):
        text = str(since).strip()
        if text.isascii() and text.isdigit():
            number = digits_number(text)
            query = query.where(RunLog.id > (SQLITE_INT_MAX if number is None else number))
        else:
            try:
                when = dt.datetime.fromisoformat(str(since).replace("Z", "+00:00"))
            except ValueError:
                raise ValidationError.field("since", "use a log id or an ISO 8601 time") from None
            if when.tzinfo is not None:
                when = when.astimezone(dt.UTC).replace(tzinfo=None)
            query = query.where(RunLog.created_at > when)
    limit = max(1, min(whole_number(limit or 200, "limit"), 1000))
    return list(query.order_by(RunLog.id).limit(limit))


def spent_usd(run):
    """What the run's answers, judgements and judge calls (checks, pairwise) cost so far (USD)."""
    kept = tally(run).sums
    items = kept["cost_usd"] + kept["judge_cost_usd"]
    calls = (
        JudgeCall.select(fn.COALESCE(fn.SUM(JudgeCall.cost_usd), 0.0))
        .where(JudgeCall.run == run)
        .scalar()
    )
    return items + calls


def list_items(run_id, status=None, model=None, target_id=None, page=1, per_page=50, after=None):
    """One page of a run's items (with their targets) and the total, filtered in SQL.

    `after` (an item id) continues after that item: an index seek at any depth, where `page`
    skips rows. The total comes from the kept counts (counts.py)."""
    run = get_run(run_id)
    query = Item.select(Item, RunTarget).join(RunTarget).where(Item.run == run)
    statuses = None
    if status:
        statuses = [s.strip().upper() for s in str(status).split(",") if s.strip()]
        bad = [s for s in statuses if s not in ITEM_STATUSES]
        if bad:
            raise ValidationError.field(
                "status", f"unknown status {', '.join(bad)}; use " + ", ".join(ITEM_STATUSES)
            )
        query = query.where(Item.status.in_(statuses))
    targets = None
    if model:
        targets = RunTarget.select(RunTarget.id).where(
            (RunTarget.run == run) & (RunTarget.model == model)
        )
        targets = [t for (t,) in targets.tuples()]
    if target_id not in (None, ""):
        wanted = whole_number(target_id, "target", low=1)
        targets = [t for t in targets if t == wanted] if targets is not None else [wanted]
    if targets is not None:
        query = query.where(Item.target.in_(targets))
    page = max(1, whole_number(page or 1, "page", high=10**9))  # no OFFSET overflow
    per_page = max(1, min(whole_number(per_page or 50, "perPage"), 500))
    total = count_items(run, targets, statuses)
    if after not in (None, ""):
        query = query.where(Item.id > whole_number(after, "after", low=1))
        items = list(query.order_by(Item.id).limit(per_page + 1))
    else:
        skip = (page - 1) * per_page
        items = list(query.order_by(Item.id).limit(per_page + 1).offset(skip))
    # (per_page + 1 rows read: the extra one only says whether there is more.)
    found = {
        "items": items[:per_page],
        "total": total,
        "page": page,
        "perPage": per_page,
        "pages": max(1, -(-total // per_page)),
    }
    found["nextAfter"] = items[per_page - 1].id if len(items) > per_page else None
    return found


def summaries(runs):
    """run_summary for many runs; their item counts, targets and collections one query each."""
    counts = {r.id: dict.fromkeys(ITEM_STATUSES, 0) for r in runs}
    targets = {r.id: [] for r in runs}
    collections = {r.id: [] for r in runs}
    if runs:
        pks = [r.id for r in runs]
        for run_pk, kept in tallies(pks).items():
            counts[run_pk] = dict(kept.by_status)
        query = RunTarget.select().where(RunTarget.run.in_(pks))
        for t in query.order_by(RunTarget.position, RunTarget.id):
            targets[t.run_id].append(t)
        for c in (
            RunCollection.select().where(RunCollection.run.in_(pks)).order_by(RunCollection.id)
        ):
            collections[c.run_id].append(c)
    return [run_summary(r, counts[r.id], targets[r.id], collections[r.id]) for r in runs]
