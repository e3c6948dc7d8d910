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

    @property
    def items(self):
        return len(self.task_ids) * len(self.targets)

    @property
    def estimated_calls(self):
        """A warm-up per target and one for the judge, an answer and a judgement per item."""
        if not self.judge:
            return len(self.targets) + self.items
        return len(self.targets) + 1 + 2 * self.items


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
    limit = plan.settings.get("questionLimit")
    return ids[:limit] if limit else ids


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
        "settings": plan.settings,
    }
    try:
        return create_run(spec, source=source, reuse=reuse, outputs=outputs, queue=queue)
    except ValidationError as exc:
        if plan.judge:
            raise
        raise _named_in_config(exc, plan.config_file) from None


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
    lines.append(f"Items: {len(plan.task_ids)} tasks x {len(plan.targets)} targets = {plan.items}")
    lines.append(
        f"Estimated calls: {plan.estimated_calls} ({len(plan.targets) + 1} warm-ups "
        f"incl. the judge, {plan.items} answers, {plan.items} judgements; retries not counted)"
        if plan.judge
        else f"Estimated calls: {plan.estimated_calls} ({len(plan.targets)} warm-ups, "
        f"{plan.items} answers; retries not counted)"
    )
    if plan.out_dir:
        lines.append(f"Reports: {plan.out_dir}/<run_id>/summary.json, report.html")
    return lines


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
        "estimatedCalls": plan.estimated_calls,
    }
