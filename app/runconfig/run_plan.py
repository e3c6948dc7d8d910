"""A validated run plan: what it holds and the tasks it selects; describe it for a dry run (no
writes), or apply it and create the run."""

from dataclasses import dataclass
from dataclasses import field

from ..catalog.prices import set_price
from ..catalog.providers import create_provider
from ..catalog.providers import update_provider
from ..datasets import importer
from ..db.models import Collection
from ..db.models import CollectionTask
from ..db.models import Task
from ..errors import ValidationError
from ..runs.lifecycle import create_run
from .filters import TaskFilters


def is_no_judge(value):
    """Whether a config's judge says "no judge": left out, null, or the word none (the run is
    scored by the tasks' checks; every task needs some)."""
    return value is None or (isinstance(value, str) and value.strip().lower() in ("", "none"))


@dataclass
class ProviderPlan:
    """A provider the run uses: existing (pk) and/or defined in the config (data to save)."""

    name: str
    pk: int | None = None
    data: dict | None = None  # provider_store fields to create/update; None: use as is
    secret_keys: list = field(default_factory=list)


@dataclass
class RunPlan:
    """Everything a run needs, validated; nothing written yet."""

    name: str
    run_id: str | None
    providers: dict  # name -> ProviderPlan
    judge: dict  # {provider, model, params}; {} for no judge (a promptfoo suite of checks)
    targets: list  # [{provider, model, params}]
    collections: list  # existing collection names
    dataset: object = None  # importer.DatasetSurvey: task ids and categories, not the tasks
    dataset_path: str | None = None
    dataset_format: str | None = None
    dataset_collection: str | None = None
    on_duplicate: str = "update"
    settings: dict = field(default_factory=dict)  # create_run settings (camelCase)
    out_dir: str | None = None
    task_ids: list = field(default_factory=list)  # task_id of the tasks the run will hold
    prices: list = field(default_factory=list)  # [(provider, model, input/1M, output/1M)]
    resume: bool = False  # continue this name's latest unfinished run instead
    judge_check: bool = False  # the judge scores the tasks' references before answering
    config_file: str | None = None  # the config it was read from (errors name it)
    skip_unsupported: bool = False  # --skip-unsupported: the import leaves the same out
    filters: TaskFilters = field(default_factory=TaskFilters)  # --filter-*, --sample

    @property
    def per_target(self):
        """Items per target as the run makes them (runs/lifecycle.py): each task `repeats`
        times; with load steps, `requestsPerStep` requests (default: every task) per step."""
        repeats = int(self.settings.get("repeats") or 1)
        load = self.settings.get("load")
        if not load or not self.task_ids:
            return len(self.task_ids) * repeats
        wanted = load.get("requestsPerStep") or len(self.task_ids)
        return len(load["steps"]) * repeats * wanted

    @property
    def items(self):
        return self.per_target * len(self.targets)

    @property
    def judged_items(self):
        """The items the judge scores: all, or the first load step's (judgeSteps "first")."""
        load = self.settings.get("load")
        if load and load.get("judgeSteps") == "first":
            return self.items // len(load["steps"])
        return self.items

    @property
    def warmups(self):
        """Warm-up calls: one per target and one for the judge, plus a load's own warm-up
        requests (not kept) before each step of each target."""
        load = self.settings.get("load") or {}
        per_step = int(load.get("warmup") or 0) * len(load.get("steps") or [])
        return len(self.targets) * (1 + per_step) + (1 if self.judge else 0)

    @property
    def judgements(self):
        if not self.judge:
            return 0
        return self.judged_items * int(self.settings.get("judgeRepeats") or 1)

    @property
    def estimated_calls(self):
        """The warm-ups, an answer per item and the judgements (retries not counted)."""
        return self.warmups + self.items + self.judgements


def select_tasks(plan):
    """task_ids the run will hold: collections plus dataset, category filter, question limit."""
    categories = plan.settings.get("categories")
    chosen = {}
    if plan.collections:
        query = (
            Task.select(Task.id, Task.task_id, Task.category)
            .join(CollectionTask)
            .join(Collection)
            .where(Collection.name.in_(plan.collections))
            .order_by(Task.id)
        )
        for task in query:
            chosen[task.task_id] = (task.id, task.category)
    if plan.dataset is not None:
        for n, (task_id, category) in enumerate(plan.dataset.tasks):
            pk = plan.dataset.existing.get(task_id)
            chosen.setdefault(task_id, (pk if pk else 10**12 + n, category))
    ordered = sorted(chosen.items(), key=lambda kv: kv[1][0])
    ids = [
        task_id for task_id, (_, category) in ordered if not categories or category in categories
    ]
    if plan.filters:
        ids = plan.filters.keep(ids, _matching(plan, ids))
    limit = plan.settings.get("questionLimit")
    return ids[:limit] if limit else ids


def _matching(plan, ids):
    """The task ids --filter-pattern finds (in the id or the question): a dataset's tasks as
    its file gives them, the collections' others as stored."""
    regex = plan.filters.regex()
    if regex is None:
        return set()
    found = set(plan.dataset.matching) if plan.dataset is not None else set()
    from_file = {t for t, _ in plan.dataset.tasks} if plan.dataset is not None else set()
    stored = [t for t in ids if t not in from_file]
    for start in range(0, len(stored), 500):
        query = Task.select(Task.task_id, Task.question).where(
            Task.task_id.in_(stored[start : start + 500])
        )
        for task_id, question in query.tuples():
            if regex.search(task_id) or regex.search(question or ""):
                found.add(task_id)
    return found


def apply(plan, source="cli", reuse=False, outputs=None, queue=False):
    """Save the config's providers, prices and dataset, then create the run; returns the Run.

    `reuse` takes earlier answers and judgements with the same context (runs/reuse.py);
    `outputs` says where the CLI writes the run's files (kept for `llmbench resume`); `queue`
    queues it while another run is running (a run handed to a server's orchestrator)."""

    for provider_name, model, input_price, output_price in plan.prices:
        set_price(provider_name, model, input_price, output_price)
    ids = {}
    for provider in plan.providers.values():
        if provider.data is None:
            ids[provider.name] = provider.pk
        elif provider.pk is None:
            created = create_provider({**provider.data, "name": provider.name})
            ids[provider.name] = created.id
        else:
            update_provider(provider.pk, {**provider.data, "name": provider.name})
            ids[provider.name] = provider.pk
    names = list(plan.collections)
    if plan.dataset_path:
        if not plan.dataset.stored:  # stored: read_plan imported it as it checked it
            importer.import_tasks(
                plan.dataset_path,
                plan.dataset_format,
                collection=plan.dataset_collection,
                on_duplicate=plan.on_duplicate,
                skip_unsupported=plan.skip_unsupported,
            )
        names.append(plan.dataset_collection)
    by_name = {c.name: c.id for c in Collection.select().where(Collection.name.in_(names))}
    judge = {}
    if plan.judge:
        judge = {
            "judgeProviderId": ids[plan.judge["provider"]],
            "judgeModel": plan.judge["model"],
            "judgeParams": plan.judge["params"] or None,
        }
    spec = {
        "runId": plan.run_id,
        "name": plan.name,
        **judge,
        "targets": [
            {
                "providerId": ids[t["provider"]],
                "model": t["model"],
                "params": t["params"] or None,
                "label": t.get("label"),
            }
            for t in plan.targets
        ],
        "judgeCheck": plan.judge_check,
        "collectionIds": list(dict.fromkeys(by_name[n] for n in names)),
        # The filters' choice: only these of the collections' tasks (None: all of them).
        "onlyTaskIds": _task_pks(plan.task_ids) if plan.filters else None,
        "settings": plan.settings,
    }
    try:
        return create_run(spec, source=source, reuse=reuse, outputs=outputs, queue=queue)
    except ValidationError as exc:
        if plan.judge:
            raise
        raise _named_in_config(exc, plan.config_file) from None


def _task_pks(task_ids):
    pks = []
    for start in range(0, len(task_ids), 500):
        chunk = task_ids[start : start + 500]
        pks += [pk for (pk,) in Task.select(Task.id).where(Task.task_id.in_(chunk)).tuples()]
    return pks


def _named_in_config(exc, file):
    """A run without a judge whose tasks lack checks, said of the config's `judge` key (the
    run spec calls it judgeModel)."""
    errors = [
        {**e, "field": "judge", "file": file} if e.get("field") == "judgeModel" and file else e
        for e in exc.errors
    ]
    return ValidationError(errors)


def left_out(plan):
    """One line per part of the dataset --skip-unsupported leaves out (file, line, assert)."""
    unsupported = plan.dataset.unsupported if plan.dataset is not None else []
    lines = []
    for entry in unsupported:
        place = ":".join(str(p) for p in (entry.get("file"), entry.get("line")) if p)
        lines.append(f"Left out {place}: {entry.get('field')}: {entry['message']}")
    return lines


def describe(plan):
    """The plan as plain lines for --dry-run (secrets masked, nothing looked up on a server)."""
    lines = [f"Run: {plan.run_id or plan.name + '-<YYYYMMDD>-<HHMMSS>'}"]
    for provider in plan.providers.values():
        if provider.data is None:
            lines.append(f"Provider {provider.name}: existing (id {provider.pk}), used as is")
            continue
        action = "update" if provider.pk else "create"
        shown = {k: v for k, v in provider.data.items() if k != "headers"}
        headers = [
            f"{h['key']}: {'****' if h['isSecret'] else h['value']}"
            for h in provider.data.get("headers") or []
        ]
        detail = ", ".join(f"{k}={v}" for k, v in sorted(shown.items()))
        if headers:
            detail += ("; " if detail else "") + "headers " + ", ".join(headers)
        lines.append(f"Provider {provider.name}: will {action} ({detail})")
    judge = plan.judge
    if not judge:
        lines.append("Judge: none (the tasks' checks score every answer)")
    else:
        lines.append(
            f"Judge: {judge['provider']}/{judge['model']}"
            + (f" params {judge['params']}" if judge["params"] else "")
        )
    for target in plan.targets:
        lines.append(
            f"Target: {target['provider']}/{target['model']}"
            + (f" params {target['params']}" if target["params"] else "")
        )
    if plan.collections:
        lines.append("Collections: " + ", ".join(plan.collections))
    if plan.dataset is not None:
        existing = len(plan.dataset.existing)
        new = len(plan.dataset.tasks) - existing
        lines.append(
            f"Dataset: {plan.dataset_path} -> collection {plan.dataset_collection!r}: "
            f"{len(plan.dataset.tasks)} tasks ({new} new, {existing} already stored, "
            f"on duplicate: {plan.on_duplicate})"
        )
        lines += left_out(plan)
    for provider_name, model, input_price, output_price in plan.prices:
        lines.append(
            f"Price {provider_name}/{model}: ${input_price:g} in, ${output_price:g} out "
            "per 1M tokens (saved to the price table)"
        )
    if plan.settings:
        lines.append("Settings: " + ", ".join(f"{k}={v}" for k, v in plan.settings.items()))
    if plan.filters:
        lines.append(f"Filters: {_filters_text(plan.filters)}: {len(plan.task_ids)} tasks")
    lines.append(f"Items: {_items_text(plan)} = {plan.items}")
    lines.append(
        f"Estimated calls: {plan.estimated_calls} ({plan.warmups} warm-ups "
        f"incl. the judge, {plan.items} answers, {plan.judgements} judgements; retries not "
        "counted)"
        if plan.judge
        else f"Estimated calls: {plan.estimated_calls} ({plan.warmups} warm-ups, "
        f"{plan.items} answers; retries not counted)"
    )
    if plan.out_dir:
        lines.append(f"Reports: {plan.out_dir}/<run_id>/summary.json, report.html")
    return lines


def _filters_text(filters):
    """'--filter-pattern fire, --filter-failing RUN (2 tasks), --sample 3 --seed 7'."""
    parts = []
    if filters.pattern is not None:
        parts.append(f"--filter-pattern {filters.pattern}")
    if filters.failing is not None:
        parts.append(f"--filter-failing {filters.failing_from} ({len(filters.failing)} tasks)")
    if filters.sample is not None:
        parts.append(f"--sample {filters.sample} --seed {filters.seed}")
    return ", ".join(parts)


def _items_text(plan):
    """'4 tasks x 2 targets x 3 repeats' (and the load steps), as the run makes them."""
    repeats = int(plan.settings.get("repeats") or 1)
    load = plan.settings.get("load")
    if load:
        wanted = load.get("requestsPerStep") or len(plan.task_ids)
        text = f"{len(load['steps'])} load steps x {wanted} requests x {len(plan.targets)} targets"
    else:
        text = f"{len(plan.task_ids)} tasks x {len(plan.targets)} targets"
    return text + (f" x {repeats} repeats" if repeats > 1 else "")


def plan_to_dict(plan):
    """The plan as JSON for `--dry-run --json` (secrets masked)."""
    providers = []
    for provider in plan.providers.values():
        data = dict(provider.data or {})
        if "headers" in data:
            data["headers"] = [
                {
                    "key": h["key"],
                    "isSecret": h["isSecret"],
                    "value": "****" if h["isSecret"] else h["value"],
                }
                for h in data["headers"]
            ]
        providers.append(
            {
                "name": provider.name,
                "id": provider.pk,
                "action": "use"
                if provider.data is None
                else ("update" if provider.pk else "create"),
                "fields": data,
            }
        )
    return {
        "event": "plan",
        "runId": plan.run_id,
        "name": plan.name,
        "providers": providers,
        "judge": plan.judge,
        "targets": plan.targets,
        "collections": plan.collections,
        "dataset": plan.dataset_path,
        "datasetCollection": plan.dataset_collection,
        "datasetTasks": len(plan.dataset.tasks) if plan.dataset is not None else 0,
        "leftOut": plan.dataset.unsupported if plan.dataset is not None else [],
        "settings": plan.settings,
        "prices": [
            {"providerName": p, "model": m, "inputPer1m": i, "outputPer1m": o}
            for p, m, i, o in plan.prices
        ],
        "tasks": len(plan.task_ids),
        "items": plan.items,
        "warmups": plan.warmups,
        "judgements": plan.judgements,
        "estimatedCalls": plan.estimated_calls,
    }
