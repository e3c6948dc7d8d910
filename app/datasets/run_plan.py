"""A validated run plan: describe it for a dry run (no writes), or apply it and create the run."""

from ..models import Collection
from . import importer


def apply(plan, source="cli"):
    """Save the config's providers and dataset, then create the run; returns the Run."""
    from .. import provider_store
    from .. import runs

    ids = {}
    for provider in plan.providers.values():
        if provider.data is None:
            ids[provider.name] = provider.pk
        elif provider.pk is None:
            created = provider_store.create_provider({**provider.data, "name": provider.name})
            ids[provider.name] = created.id
        else:
            provider_store.update_provider(provider.pk, {**provider.data, "name": provider.name})
            ids[provider.name] = provider.pk
    names = list(plan.collections)
    if plan.dataset_path:
        importer.import_tasks(
            plan.dataset_path,
            plan.dataset_format,
            collection=plan.dataset_collection,
            on_duplicate=plan.on_duplicate,
        )
        names.append(plan.dataset_collection)
    by_name = {c.name: c.id for c in Collection.select().where(Collection.name.in_(names))}
    spec = {
        "runId": plan.run_id,
        "name": plan.name,
        "judgeProviderId": ids[plan.judge["provider"]],
        "judgeModel": plan.judge["model"],
        "judgeParams": plan.judge["params"] or None,
        "targets": [
            {"providerId": ids[t["provider"]], "model": t["model"], "params": t["params"] or None}
            for t in plan.targets
        ],
        "collectionIds": list(dict.fromkeys(by_name[n] for n in names)),
        "settings": plan.settings,
    }
    return runs.create_run(spec, source=source)


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
    if plan.settings:
        lines.append("Settings: " + ", ".join(f"{k}={v}" for k, v in plan.settings.items()))
    lines.append(f"Items: {len(plan.task_ids)} tasks x {len(plan.targets)} targets = {plan.items}")
    lines.append(
        f"Estimated calls: {plan.estimated_calls} ({len(plan.targets)} warm-ups, "
        f"{plan.items} answers, {plan.items} judgements; retries not counted)"
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
        "settings": plan.settings,
        "tasks": len(plan.task_ids),
        "items": plan.items,
        "estimatedCalls": plan.estimated_calls,
    }
