"""Runs: create, pause, stop, resume/continue, delete; run_id naming; the derived run state."""

import datetime as dt
import re

from peewee import fn

from . import templating
from .clock import utcnow
from .db import database
from .errors import Conflict
from .errors import NotFound
from .errors import ValidationError
from .judge import PROMPT_HASH
from .metrics import clean_params
from .metrics import context_hash
from .metrics import sha256_json
from .models import CONTROL_PAUSED
from .models import CONTROL_RUNNING
from .models import CONTROL_STOPPED
from .models import FAILED
from .models import FINISHED
from .models import JUDGING
from .models import NEW
from .models import PENDING
from .models import WAITING_FOR_JUDGE
from .models import Collection
from .models import CollectionTask
from .models import Item
from .models import Provider
from .models import Run
from .models import RunCollection
from .models import RunLog
from .models import RunTarget
from .models import Task
from .run_dto import item_to_dict  # noqa: F401  (part of this module's interface)
from .run_dto import run_state
from .run_dto import run_summary  # noqa: F401
from .run_spec import clean_spec

SNAPSHOT_FIELDS = ("category", "subcategory", "difficulty", "excellent", "good", "pass_answer",
                   "incorrect_direction", "rubric", "template_version")
INSERT_BATCH = 200


def active_run():
    """The run that is running or paused (at most one), or None."""
    run = (Run.select()
           .where((Run.status == PENDING) & (Run.control.in_([CONTROL_RUNNING, CONTROL_PAUSED])))
           .order_by(Run.created_at.desc()).first())
    if run is not None:
        run.state = run_state(run)
    return run


def get_run(run_id):
    """The run named `run_id`, or NotFound."""
    run = Run.get_or_none(Run.run_id == run_id)
    if run is None:
        raise NotFound(f"No run named {run_id!r}; GET /api/runs lists the runs that exist.")
    return run


def log_event(run, event, message, level="INFO", data=None, now=None):
    """Append one line to the run log; returns its id."""
    # Plain SQL: the engine writes a line per item, and building a model costs more than that.
    cursor = database.execute_sql(
        'INSERT INTO "runlog" ("run_id", "created_at", "level", "event", "message", "data") '
        "VALUES (?, ?, ?, ?, ?, ?)",
        (getattr(run, "id", run), RunLog.created_at.db_value(now or utcnow()), level, event,
         message, RunLog.data.db_value(data)))
    return cursor.lastrowid


def item_messages(system_prompt, question):
    """The chat messages sent to a target for one item."""
    messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
    messages.append({"role": "user", "content": question})
    return messages


def render_task(task):
    """(system_prompt, question) with `{vars}` filled; ValidationError naming task and variable."""
    return templating.render_task(task)


def _check_no_active_run(exclude=None):
    active = active_run()
    if active is not None and active.id != getattr(exclude, "id", None):
        raise Conflict(f"Run {active.run_id} is {active.state}; stop it or let it finish before "
                       "starting another (one run at a time).")


def _slug(name):
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-._") or "run"


def _new_run_id(name, now):
    base = f"{_slug(name)}-{now:%Y%m%d}-{now:%H%M%S}"
    run_id, n = base, 1
    while Run.select().where(Run.run_id == run_id).exists():
        n += 1
        run_id = f"{base}-{n}"
    return run_id


def _select_tasks(spec):
    """The tasks of the chosen collections plus taskIds, filtered and limited per settings."""
    pks = set(spec["task_ids"])
    if spec["collection_ids"]:
        pks.update(pk for (pk,) in CollectionTask.select(CollectionTask.task)
                   .where(CollectionTask.collection.in_(spec["collection_ids"])).tuples())
    query = Task.select().where(Task.id.in_(list(pks))).order_by(Task.id)
    categories = spec["settings"].get("categories")
    if categories:
        query = query.where(Task.category.in_(categories))
    tasks = list(query)
    limit = spec["settings"].get("questionLimit")
    return tasks[:limit] if limit else tasks


def _snapshot(task):
    system_prompt, question = render_task(task)
    snap = {f: getattr(task, f) for f in SNAPSHOT_FIELDS}
    snap.update(task_key=task.task_id, question=question, system_prompt=system_prompt,
                auto_fail_rules=task.auto_fail, task=task.id)
    return snap


def create_run(spec, source="web", now=None):
    """Validate a run spec, create the run with one item per task x target, and start it."""
    now = now or utcnow()
    spec = clean_spec(spec)
    tasks = _select_tasks(spec)
    if not tasks:
        raise ValidationError.field("collectionIds", "the chosen collections and tasks hold no "
                                    "task (after the category filter); pick others")
    errors, snapshots = [], []
    for task in tasks:
        try:
            snapshots.append(_snapshot(task))
        except ValidationError as exc:
            errors.extend({**e, "field": f"task {task.task_id}: {e['field']}"} for e in exc.errors)
    if errors:
        raise ValidationError(errors)
    dataset_hash = sha256_json(sorted(
        ({k: v for k, v in s.items() if k != "task"} for s in snapshots),
        key=lambda s: s["task_key"]))
    with database.atomic("IMMEDIATE"):
        _check_no_active_run()
        run_id = spec["run_id"] or _new_run_id(spec["name"] or "run", now)
        if spec["run_id"] and Run.select().where(Run.run_id == run_id).exists():
            raise ValidationError.field("runId", f"a run named {run_id!r} exists; pick another "
                                        "name or leave runId empty")
        judge = spec["judge_provider"]
        run = Run.create(run_id=run_id, name=spec["name"] or "", judge_provider=judge,
                         judge_provider_name=judge.name, judge_model=spec["judge_model"],
                         judge_params=spec["judge_params"] or None, settings=spec["settings"],
                         dataset_hash=dataset_hash, prompt_hash=PROMPT_HASH, source=source,
                         created_at=now, started_at=now, updated_at=now)
        for cid in spec["collection_ids"]:
            RunCollection.create(run=run, collection=cid,
                                 collection_name=Collection.get_by_id(cid).name)
        rows = []
        for position, target in enumerate(spec["targets"]):
            provider = target["provider"]
            rt = RunTarget.create(run=run, provider=provider, provider_name=provider.name,
                                  model=target["model"], params=target["params"] or None,
                                  position=position)
            params = clean_params(target["params"])
            for snap in snapshots:
                messages = item_messages(snap["system_prompt"], snap["question"])
                rows.append({**snap, "run": run.id, "target": rt.id, "status": NEW,
                             "context_hash": context_hash(provider.name, provider.base_url,
                                                          rt.model, params, messages,
                                                          snap["template_version"]),
                             "created_at": now, "updated_at": now})
        for start in range(0, len(rows), INSERT_BATCH):
            Item.insert_many(rows[start:start + INSERT_BATCH]).execute()
        targets = ", ".join(f"{t['provider'].name}/{t['model']}" for t in spec["targets"])
        log_event(run, "run_started",
                  f"Run {run_id} started: {len(snapshots)} tasks x {len(spec['targets'])} "
                  f"targets = {len(rows)} items; targets {targets}; judge "
                  f"{judge.name}/{spec['judge_model']}",
                  data={"items": len(rows), "tasks": len(snapshots), "source": source}, now=now)
    return run


def _set_control(run, control, reason, event, message, now=None, **extra):
    now = now or utcnow()
    Run.update(control=control, control_reason=reason, updated_at=now, **extra).where(
        Run.id == run.id).execute()
    log_event(run, event, message, now=now)
    return Run.get_by_id(run.id)


def pause_run(run_id, reason="paused by you", now=None):
    """Pause a running run: the item in flight finishes, then it halts."""
    run = get_run(run_id)
    if run_state(run) != "running":
        raise ValidationError.field("runId", f"run {run_id} is {run_state(run)}, not running; "
                                    "only a running run can be paused")
    return _set_control(run, CONTROL_PAUSED, reason, "paused",
                        f"Paused ({reason}); the item in flight finishes first", now)


def stop_run(run_id, reason="stopped by you", now=None):
    """Stop a running or paused run now: the in-flight request is abandoned, its item stays NEW."""
    run = get_run(run_id)
    if run_state(run) not in ("running", "paused"):
        raise ValidationError.field("runId", f"run {run_id} is {run_state(run)}; only a running "
                                    "or paused run can be stopped")
    run = _set_control(run, CONTROL_STOPPED, reason, "stopped",
                       f"Stopped ({reason}); continue it when ready", now)
    from . import orchestrator

    orchestrator.signal_stop(run.id)  # same process: abandon the request at once
    return run


def resume_run(run_id, now=None, max_budget_usd=None):
    """Continue a paused, stopped or interrupted run (409 while another run is active)."""
    run = get_run(run_id)
    state = run_state(run)
    if state not in ("paused", "stopped"):
        raise ValidationError.field("runId", f"run {run_id} is {state}; only a paused or "
                                    "stopped run can be resumed")
    extra = {}
    if max_budget_usd is not None:
        extra["settings"] = {**(run.settings or {}), "maxBudgetUsd": float(max_budget_usd)}
    with database.atomic("IMMEDIATE"):
        _check_no_active_run(exclude=run)
        return _set_control(run, CONTROL_RUNNING, None, "resumed",
                            f"Resumed (was {state}: {run.control_reason or 'no reason given'})",
                            now, **extra)


def delete_run(run_id):
    """Delete a run with its items and log (409 while it is running or paused)."""
    run = get_run(run_id)
    if run_state(run) in ("running", "paused"):
        raise Conflict(f"Run {run_id} is {run_state(run)}; stop it before deleting it.")
    with database.atomic():
        Run.delete().where(Run.id == run.id).execute()


def _reopen_for_judging(run, now):
    """A finished run with items to re-judge becomes pending again, in the JUDGING phase.

    An unfinished run keeps its control: a paused or stopped one judges them when continued.
    """
    if run.status == FINISHED:
        _check_no_active_run(exclude=run)
        Run.update(status=PENDING, phase=JUDGING, control=CONTROL_RUNNING, control_reason=None,
                   finished_at=None, updated_at=now).where(Run.id == run.id).execute()


def retry_judge(run_id, item_id, now=None):
    """Queue one item for judging again (it must hold an answer: WAITING/FAILED judge/COMPLETED)."""
    now = now or utcnow()
    run = get_run(run_id)
    item = Item.get_or_none((Item.id == item_id) & (Item.run == run))
    if item is None:
        raise NotFound(f"No item {item_id} in run {run_id}.")
    if item.answer is None or item.status == NEW or (
            item.status == FAILED and item.error_stage not in ("judge", None)):
        raise ValidationError.field("itemId", f"item {item_id} has no answer to judge "
                                    f"(status {item.status}); only answered items can be re-judged")
    with database.atomic("IMMEDIATE"):
        _reopen_for_judging(run, now)
        Item.update(status=WAITING_FOR_JUDGE, attempts=0, next_retry_at=None, error_msg=None,
                    error_stage=None, updated_at=now).where(Item.id == item.id).execute()
        log_event(run, "retry_judge", f"Item {item.id} ({item.task_key}) queued for judging again",
                  now=now)
    return Item.get_by_id(item.id)


def retry_failed_judgements(run_id, now=None):
    """Queue every item whose judgement failed for judging again; returns how many."""
    now = now or utcnow()
    run = get_run(run_id)
    failed = ((Item.run == run) & (Item.status == FAILED) & (Item.error_stage == "judge")
              & Item.answer.is_null(False))
    with database.atomic("IMMEDIATE"):
        count = Item.select().where(failed).count()
        if count:
            _reopen_for_judging(run, now)
            Item.update(status=WAITING_FOR_JUDGE, attempts=0, next_retry_at=None, error_msg=None,
                        error_stage=None, updated_at=now).where(failed).execute()
            log_event(run, "retry_judge", f"{count} items with a failed judgement queued again",
                      now=now)
    return count


def list_runs(status=None, state=None):
    """Runs newest first, filtered by persisted status (PENDING/FINISHED) or shown state."""
    query = Run.select().order_by(Run.created_at.desc(), Run.id.desc())
    if status:
        query = query.where(Run.status == status.upper())
    if state:
        conditions = {"finished": Run.status == FINISHED}
        for name, control in (("running", CONTROL_RUNNING), ("paused", CONTROL_PAUSED),
                              ("stopped", CONTROL_STOPPED)):
            conditions[name] = (Run.status == PENDING) & (Run.control == control)
        if state not in conditions:
            raise ValidationError.field("state", "use running, paused, stopped or finished")
        query = query.where(conditions[state])
    return list(query)


def list_logs(run_id, since=None, limit=200):
    """Run log lines oldest first; `since` is a log id (exclusive) or an ISO time."""
    run = get_run(run_id)
    query = RunLog.select().where(RunLog.run == run)
    if since not in (None, ""):
        if str(since).isdigit():
            query = query.where(RunLog.id > int(since))
        else:
            try:
                when = dt.datetime.fromisoformat(str(since).replace("Z", "+00:00"))
            except ValueError:
                raise ValidationError.field("since", "use a log id or an ISO 8601 time") from None
            if when.tzinfo is not None:
                when = when.astimezone(dt.UTC).replace(tzinfo=None)
            query = query.where(RunLog.created_at > when)
    try:
        limit = max(1, min(int(limit or 200), 1000))
    except (TypeError, ValueError):
        raise ValidationError.field("limit", "must be a whole number") from None
    return list(query.order_by(RunLog.id).limit(limit))


def spent_usd(run):
    """What the run's answers cost so far (USD)."""
    return Item.select(fn.COALESCE(fn.SUM(Item.cost_usd), 0.0)).where(Item.run == run).scalar()


def get_provider_or_none(pk):
    """A provider by id, or None."""
    return Provider.get_or_none(Provider.id == pk)


def list_items(run_id, status=None, model=None, target_id=None, page=1, per_page=50):
    """One page of a run's items (with their targets) and the total, filtered in SQL."""
    from .models import ITEM_STATUSES

    run = get_run(run_id)
    query = Item.select(Item, RunTarget).join(RunTarget).where(Item.run == run)
    if status:
        wanted = [s.strip().upper() for s in str(status).split(",") if s.strip()]
        bad = [s for s in wanted if s not in ITEM_STATUSES]
        if bad:
            raise ValidationError.field("status", f"unknown status {', '.join(bad)}; use "
                                        + ", ".join(ITEM_STATUSES))
        query = query.where(Item.status.in_(wanted))
    if model:
        query = query.where(RunTarget.model == model)
    if target_id:
        query = query.where(Item.target == target_id)
    try:
        page, per_page = max(1, int(page or 1)), max(1, min(int(per_page or 50), 500))
    except (TypeError, ValueError):
        raise ValidationError.field("page", "page and perPage must be whole numbers") from None
    total = query.count()
    items = list(query.order_by(Item.id).paginate(page, per_page))
    return {"items": items, "total": total, "page": page, "perPage": per_page,
            "pages": max(1, -(-total // per_page))}


def summaries(runs):
    """run_summary for many runs, their item counts in one query."""
    from .models import ITEM_STATUSES

    counts = {r.id: dict.fromkeys(ITEM_STATUSES, 0) for r in runs}
    if runs:
        rows = (Item.select(Item.run, Item.status, fn.COUNT(Item.id))
                .where(Item.run.in_([r.id for r in runs])).group_by(Item.run, Item.status).tuples())
        for run_pk, status, n in rows:
            counts[run_pk][status] = n
    return [run_summary(r, counts[r.id]) for r in runs]
