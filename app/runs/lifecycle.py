"""Runs: create; run_id naming.

Pausing, stopping, resuming and deleting a run live in control.py, retrying items in
retries.py, reading runs in queries.py, the spec's rules in spec.py and spec_check.py and the
state people see in state.py.
"""

import re
from itertools import islice

from ..catalog import templating
from ..clock import utcnow
from ..db.connection import database
from ..db.connection import in_values
from ..db.connection import insert_rows
from ..db.models import CANT_BE_FINISHED
from ..db.models import CONTROL_QUEUED
from ..db.models import CONTROL_RUNNING
from ..db.models import FINISHED
from ..db.models import NEW
from ..db.models import Collection
from ..db.models import CollectionTask
from ..db.models import Item
from ..db.models import PendingItems
from ..db.models import Run
from ..db.models import RunCollection
from ..db.models import RunTarget
from ..db.models import Task
from ..errors import Conflict
from ..errors import ValidationError
from ..hashing import canonical_params
from ..hashing import context_hash
from ..hashing import sha256_json_list
from ..runlog import log_event
from ..scoring.rubric import PROMPT_HASH
from .judge_jobs import queue_reference_check
from .queries import check_no_active_run
from .queries import running_run
from .records import tool_version
from .reuse import reuse_earlier
from .spec_check import clean_spec

SNAPSHOT_FIELDS = (
    "category",
    "subcategory",
    "difficulty",
    "excellent",
    "good",
    "pass_answer",
    "incorrect_direction",
    "rubric",
    "template_version",
    "checks",
    "tools",
)
# Snapshot fields left out of the dataset hash while empty: a task without checks or tools
# keeps the hash it had before tasks could carry them (trends follow a dataset by its hash).
HASHED_WHEN_SET = ("checks", "tools")
# What an item is made from, read as dicts: a Task instance per row cost more than making
# the item's row (a run's tasks are read three times: for the dataset hash and per target).
TASK_COLUMNS = (
    Task.id,
    Task.task_id,
    Task.vars,
    Task.system_prompt,
    Task.question,
    Task.auto_fail,
    *(getattr(Task, name) for name in SNAPSHOT_FIELDS),
)
INSERT_BATCH = 200
TASK_CHUNK = 500  # tasks read per query while items are made (well under SQLite's variables)
# A run of more tasks than this makes the items of its first FIRST_TASKS tasks (on its first
# target) when it is created and the rest as the engine claims them (creation.py): a 15 000-task
# run's first call waited seconds for 30 000 items to be written.
FIRST_TASKS = 200


def item_messages(system_prompt, question):
    """The chat messages sent to a target for one item."""
    messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
    messages.append({"role": "user", "content": question})
    return messages


def render_task(task):
    """(system_prompt, question) with `{vars}` filled; ValidationError naming task and variable."""
    return templating.render_task(task)


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
    """(pk, task_id) of the tasks of the chosen collections plus taskIds, filtered and limited
    per settings, in the run's order."""
    members = CollectionTask.select(CollectionTask.task).where(
        CollectionTask.collection.in_(spec["collection_ids"])
    )
    if spec["collection_ids"] and not spec["task_ids"] and spec.get("only_task_ids") is None:
        # Only whole collections: the database picks their tasks (a list of every pk, bound
        # as 15 000 parameters, cost a tenth of a 60k-call run's start).
        chosen = Task.id.in_(members)
    else:
        pks = set(spec["task_ids"])
        if spec["collection_ids"]:
            pks.update(pk for (pk,) in members.tuples())
        if spec.get("only_task_ids") is not None:
            pks &= set(spec["only_task_ids"])
        chosen = Task.id.in_(list(pks))
    query = Task.select(Task.id, Task.task_id).where(chosen).order_by(Task.id)
    categories = spec["settings"].get("categories")
    if categories:
        query = query.where(Task.category.in_(categories))
    limit = spec["settings"].get("questionLimit")
    if limit:
        query = query.limit(limit)
    return query.tuples()


def _snapshot(task):
    """The item fields a task (a dict of TASK_COLUMNS) gives; a task whose variables cannot be
    filled is kept as it is, with `cant` saying why (its items can never be asked as
    configured)."""
    snap = {f: task[f] for f in SNAPSHOT_FIELDS}
    snap.update(task_key=task["task_id"], auto_fail_rules=task["auto_fail"], task=task["id"])
    try:
        system_prompt, question = render_task(task)
        cant = None
    except ValidationError as exc:
        system_prompt, question = task["system_prompt"], task["question"]
        cant = "; ".join(f"{e['field']}: {e['message']}" for e in exc.errors)
    snap.update(question=question, system_prompt=system_prompt)
    return snap, cant


def _tasks_by_id(pks):
    """The tasks (dicts of TASK_COLUMNS) with these pks in the order given, read a chunk at a
    time (a run's tasks are never all held in memory at once: a 15 000-task run held 30 MiB of
    snapshots)."""
    for start in range(0, len(pks), TASK_CHUNK):
        chunk = pks[start : start + TASK_CHUNK]
        query = Task.select(*TASK_COLUMNS).where(in_values(Task.id, chunk)).dicts()
        found = {task["id"]: task for task in query}
        yield from (found[pk] for pk in chunk if pk in found)


def _snapshots(pks):
    """(snapshot, why it cannot be rendered) of each task in `pks`, in that order."""
    return map(_snapshot, _tasks_by_id(pks))


def insert_items(rows):
    """Insert item rows (an iterator) INSERT_BATCH at a time; returns how many."""
    made = 0
    while batch := list(islice(rows, INSERT_BATCH)):
        insert_rows(Item, batch)
        made += len(batch)
    return made


def _must_render_one(keys):
    """ValidationError naming every task when none of them can be rendered (nothing is
    created); reads the tasks only up to the first that can (mostly the first)."""
    bad = []
    for snap, cant in _snapshots(list(keys)):
        if not cant:
            return
        bad.append({"field": f"task {snap['task_key']}", "message": cant})
    raise ValidationError(bad)


def _dataset_hash(keys):
    """(hash of the run's task snapshots sorted by task key, [(task key, why)] of the tasks
    that cannot be rendered, in the run's order), reading the tasks a chunk at a time."""
    by_key = sorted(keys, key=keys.get)
    cant_by_pk = {}

    def snapshots():
        for snap, cant in map(_snapshot, _tasks_by_id(by_key)):
            if cant:
                cant_by_pk[snap["task"]] = (snap["task_key"], cant)
            yield {
                k: v
                for k, v in snap.items()
                if k != "task" and not (k in HASHED_WHEN_SET and v is None)
            }

    digest = sha256_json_list(snapshots())
    return digest, [cant_by_pk[pk] for pk in keys if pk in cant_by_pk]


def _item_rows(run, rt, target, snapshots, repeats, now, step=0, first_repeat=0, seeds=None):
    """The item rows of one target: one per task (x repeats), each with its context hash;
    `step` the load step they belong to, `first_repeat` the repeat index of the first of them
    and `seeds` every repeat's seed (a load step cycling through its tasks again)."""
    provider = target["provider"]
    seeds = seeds or repeat_seeds(target["params"], repeats)
    for snap, cant in snapshots:
        messages = item_messages(snap["system_prompt"], snap["question"])
        for repeat in range(first_repeat, first_repeat + repeats):
            seed = seeds[repeat]
            params = target["params"] if seed is None else {**target["params"], "seed": seed}
            row = {
                **snap,
                "run": run.id,
                "target": rt.id,
                "status": NEW,
                "repeat": repeat,
                "step": step,
                "seed": seed,
                "context_hash": context_hash(
                    provider.name,
                    provider.base_url,
                    rt.model,
                    canonical_params(params),
                    messages,
                    snap["template_version"],
                    tools=snap.get("tools"),
                ),
                "created_at": now,
                "updated_at": now,
                # every row the same keys: insert_rows takes its columns from the first
                "error_stage": None,
                "error_msg": None,
            }
            if cant:
                row.update(
                    status=CANT_BE_FINISHED,
                    error_stage="answer",
                    error_msg=f"can't be finished: the task cannot be rendered: {cant}",
                )
            yield row


def _target_rows(run, rt, target, pks, repeats, load, now):
    """The item rows of one target, one iterator per load step (a single step without a load):
    step by step, so the claims (in id order) meet a step's items together. A load step asks
    `requestsPerStep` tasks: the first N, or all of them again as further repeats past them."""
    if not load:
        yield _item_rows(run, rt, target, map(_snapshot, _tasks_by_id(pks)), repeats, now)
        return
    wanted = load.get("requestsPerStep") or len(pks)
    cycles = -(-wanted // len(pks))  # rounds through the tasks
    seeds = repeat_seeds(target["params"], repeats * cycles)
    for step in range(len(load["steps"])):
        for cycle in range(cycles):
            chunk = pks[: min(len(pks), wanted - cycle * len(pks))]
            snapshots = map(_snapshot, _tasks_by_id(chunk))
            yield _item_rows(run, rt, target, snapshots, repeats, now, step, cycle * repeats, seeds)


def _load_text(load):
    """'concurrency 1, 2, 4' or 'rate 0.5, 1 requests/s': a load's steps as the log says them."""
    steps = ", ".join(f"{s:g}" for s in load["steps"])
    return f"rate {steps} requests/s" if load["mode"] == "rate" else f"concurrency {steps}"


def _log_unrenderable(run, bad, per_target, now):
    shown = 10  # a broken dataset must not flood the log
    for task_key, why in bad[:shown]:
        log_event(
            run,
            "cant_be_finished",
            f"Task {task_key} cannot be rendered ({why}); its "
            f"{per_target} items are CANT_BE_FINISHED",
            level="WARNING",
            data={"taskId": task_key, "error": why},
            now=now,
        )
    if len(bad) > shown:
        log_event(
            run,
            "cant_be_finished",
            f"... and {len(bad) - shown} more tasks that cannot be rendered",
            level="WARNING",
            now=now,
        )


def _must_all_have_checks(pks):
    """A run without a judge scores by checks alone: every task must have some (400 naming
    judgeModel and the first tasks without)."""
    missing = []
    for start in range(0, len(pks), TASK_CHUNK):
        query = Task.select(Task.task_id, Task.checks).where(
            in_values(Task.id, pks[start : start + TASK_CHUNK])
        )
        missing += [key for key, checks in query.tuples() if not _has_checks(checks)]
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        shown = ", ".join(missing[:5]) + more
        raise ValidationError.field(
            "judgeModel",
            f"a run needs a judge unless every task has checks ({len(missing)} "
            f"{'task has' if len(missing) == 1 else 'tasks have'} none: {shown}); "
            "pick a judge model, or give those tasks checks",
        )


def _has_checks(checks):
    """Whether a task's stored checks hold any check."""
    return isinstance(checks, list) and bool(checks)


def repeat_seeds(params, repeats):
    """The seed of each repeat: None for a single answer (the target's params as they are),
    else the target's seed (or 0) plus the repeat's index, so every answer is drawn anew."""
    if repeats <= 1:
        return [None]
    base = (params or {}).get("seed") or 0
    return [base + r for r in range(repeats)]


def _must_queue(queue):
    """Whether a new run waits in the queue: asked to, and the engine is busy or others wait.

    Without `queue`, another active run is a Conflict (409)."""
    if not queue:
        check_no_active_run()
        return False
    waiting = Run.select().where((Run.status != FINISHED) & (Run.control == CONTROL_QUEUED))
    return running_run() is not None or waiting.exists()


def create_run(
    spec,
    source="web",
    now=None,
    *,
    queue=False,
    template=None,
    triggered_by=None,
    trigger_note=None,
    reuse=False,
    outputs=None,
):
    """Validate a run spec, create the run with one item per task x target (x repeats), and
    start it, or queue it when `queue` is set and the engine is busy.

    Items of a task whose variables cannot be filled are CANT_BE_FINISHED with the reason; when
    no task can be rendered nothing is created (ValidationError naming each task). `reuse`
    takes earlier answers and judgements with the same context (reuse.py), logged as "reused";
    `outputs` is where the CLI writes the run's files (Run.outputs), never set from a form.
    """
    now = now or utcnow()
    spec = clean_spec(spec)
    keys = dict(_select_tasks(spec))  # {pk: task key} in the run's order
    pks = list(keys)
    if not pks:
        raise ValidationError.field(
            "collectionIds",
            "the chosen collections and tasks hold no "
            "task (after the category filter); pick others",
        )
    if spec["judge_model"] is None:
        _must_all_have_checks(pks)
    repeats = int(spec["settings"].get("repeats") or 1)
    load = spec["settings"].get("load")
    # A big run makes its first tasks' items here and the engine the rest as it claims them
    # (creation.py); its dataset hash and the tasks that cannot be rendered come with the last
    # item. What needs every item at the start (reused answers, load steps, a judge check of
    # the references) or a small run makes them all now.
    lazy = len(pks) > FIRST_TASKS and not (reuse or load or spec["judge_check"])
    if lazy:
        dataset_hash, bad = None, []
        _must_render_one(keys)
    else:
        dataset_hash, bad = _dataset_hash(keys)
        if len(bad) == len(pks):
            raise ValidationError([{"field": f"task {key}", "message": why} for key, why in bad])
    if load and reuse:
        # Every step asks the same tasks: earlier answers would fill every step, load unseen.
        raise ValidationError.field(
            "settings.load",
            "a run with load steps asks every answer anew; start it without reusing answers",
        )
    with database.atomic("IMMEDIATE"):
        queued = _must_queue(queue)
        run_id = spec["run_id"] or _new_run_id(spec["name"] or "run", now)
        if spec["run_id"] and Run.select().where(Run.run_id == run_id).exists():
            raise Conflict(
                f"runId: a run named {run_id!r} exists; pick another name or leave runId empty"
            )
        judge = spec["judge_provider"]
        run = Run.create(
            run_id=run_id,
            name=spec["name"] or "",
            judge_provider=judge,
            # A run without a judge keeps empty names: its tasks' checks score every answer.
            judge_provider_name=judge.name if judge else "",
            judge_model=spec["judge_model"] or "",
            judge_params=spec["judge_params"] or None,
            settings=spec["settings"],
            dataset_hash=dataset_hash,
            prompt_hash=PROMPT_HASH,
            tool_version=tool_version(),
            source=source,
            outputs=outputs or None,
            template=template,
            triggered_by=triggered_by or "manual",
            trigger_note=trigger_note,
            control=CONTROL_QUEUED if queued else CONTROL_RUNNING,
            queued_at=now if queued else None,
            created_at=now,
            started_at=None if queued else now,
            updated_at=now,
        )
        for cid in spec["collection_ids"]:
            RunCollection.create(
                run=run, collection=cid, collection_name=Collection.get_by_id(cid).name
            )
        items = 0
        for position, target in enumerate(spec["targets"]):
            provider = target["provider"]
            rt = RunTarget.create(
                run=run,
                provider=provider,
                provider_name=provider.name,
                model=target["model"],
                params=target["params"] or None,
                position=position,
                label=target["label"],
            )
            if lazy:
                if position == 0:
                    first = pks[:FIRST_TASKS]
                    items += insert_items(
                        _item_rows(run, rt, target, _snapshots(first), repeats, now)
                    )
                continue
            # Inserted as they are made, a batch at a time: a list of every item's row first
            # held the whole run in memory (the CLI's peak RSS grew with the run's size).
            for rows in _target_rows(run, rt, target, pks, repeats, load, now):
                items += insert_items(rows)
        if lazy:
            total = len(pks) * len(spec["targets"]) * repeats
            PendingItems.create(
                run=run,
                tasks=pks,
                next_task=FIRST_TASKS,
                remaining=total - items,
                per_target=len(pks) * repeats,
                created_at=now,
            )
            items = total
        targets = ", ".join(f"{t['provider'].name}/{t['label']}" for t in spec["targets"])
        times = f" x {repeats} repeats" if repeats > 1 else ""
        if load:
            times += f" x {len(load['steps'])} load steps ({_load_text(load)})"
        origin = f" ({triggered_by}{': ' + trigger_note if trigger_note else ''})"
        log_event(
            run,
            "run_queued" if queued else "run_started",
            f"Run {run_id} {'queued' if queued else 'started'}: {len(pks)} tasks x "
            f"{len(spec['targets'])} targets{times} = {items} items; targets {targets}; "
            + (f"judge {judge.name}/{spec['judge_model']}" if judge else "no judge (checks only)")
            + (origin if triggered_by else ""),
            data={
                "items": items,
                "tasks": len(pks),
                "source": source,
                "repeats": repeats,
                **({"loadSteps": load["steps"]} if load else {}),
                "triggeredBy": triggered_by or "manual",
            },
            now=now,
        )
        for note in spec["notes"]:
            log_event(run, "model_check", note, level="WARNING", now=now)
        if spec["judge_check"]:
            # Before any answer: the judge scores the tasks' own references first.
            queue_reference_check(run, now, reopen_run=False)
        _log_unrenderable(
            run, bad, len(spec["targets"]) * repeats * len(load["steps"] if load else [0]), now
        )
        if reuse:
            hits = reuse_earlier(run, now)
            log_event(
                run,
                "reused",
                f"Reused {hits['answers']} answers and {hits['judgements']} judgements from "
                f"earlier runs with the same context (of {items} items)",
                data=hits,
                now=now,
            )
    return run
