"""A whole run spec checked (clean_spec): every field by spec.py's rules, then each target's
and the judge's model asked of its provider's server (catalog/provider_models.py, the HTTP
adapters). Apart from the field rules, which reading or resuming a run needs without an HTTP
client."""

from ..catalog.provider_models import list_models
from ..db.models import Collection
from ..db.models import Task
from ..errors import ValidationError
from .spec import RUN_ID_RE
from .spec import _error
from .spec import _first
from .spec import _ids
from .spec import _model
from .spec import _provider
from .spec import _targets
from .spec import clean_params
from .spec import clean_score_weights
from .spec import clean_settings

MODEL_CHECK_TIMEOUT = 5.0  # seconds: a server that cannot list its models this fast is skipped
MODELS_SHOWN = 20  # how many served models a "not served" message names


def clean_spec(spec):
    """A normalised run spec, or ValidationError listing every problem."""
    if not isinstance(spec, dict):
        raise ValidationError("the request body must be a JSON object describing the run")
    errors = []
    run_id = _first(spec, "runId", "run_id")
    if run_id is not None and (not isinstance(run_id, str) or not RUN_ID_RE.match(run_id)):
        _error(
            errors,
            ("runId",),
            "use letters, digits, '.', '_' and '-' (at most 200, starting with a letter or digit)",
        )
    name = _first(spec, "name")
    if name is not None and not isinstance(name, str):
        _error(errors, ("name",), "must be text")
        name = None
    judge_id = _first(spec, "judgeProviderId", "judgeProviderConfigId")
    judge_model = _first(spec, "judgeModel", "judgeModelName")
    if isinstance(judge_id, list) or isinstance(judge_model, list):
        _error(errors, ("judgeModel",), "exactly one judge: give one provider and one model")
        judge_provider = judge_model = None
    elif judge_id is None and judge_model is None:
        # No judge: allowed when every task has checks (create_run looks at the tasks).
        judge_provider = judge_model = None
    else:
        judge_provider = _provider(judge_id, ("judgeProviderId",), errors)
        judge_model = _model(judge_model, ("judgeModel",), errors)
    judge_params = clean_params(spec.get("judgeParams"), ("judgeParams",), errors)
    raw_targets = spec.get("targets")
    targets = _targets(spec.get("targetModels") if raw_targets is None else raw_targets, errors)
    collection_ids = _ids(spec.get("collectionIds"), "collectionIds", errors)
    task_ids = _ids(spec.get("taskIds"), "taskIds", errors)
    if not collection_ids and not task_ids:
        _error(errors, ("collectionIds",), "pick at least one collection")
    known = {
        pk
        for (pk,) in Collection.select(Collection.id)
        .where(Collection.id.in_(collection_ids))
        .tuples()
    }
    for cid in collection_ids:
        if cid not in known:
            _error(errors, ("collectionIds",), f"no collection with id {cid}")
    known_tasks = {pk for (pk,) in Task.select(Task.id).where(Task.id.in_(task_ids)).tuples()}
    for tid in task_ids:
        if tid not in known_tasks:
            _error(errors, ("taskIds",), f"no task with id {tid}")
    settings = clean_settings(spec.get("settings"), errors)
    raw_weights = spec.get("scoreWeights")
    if raw_weights is None and isinstance(spec.get("settings"), dict):
        raw_weights = spec["settings"].get("scoreWeights")  # where a stored run keeps them
    weights = clean_score_weights(raw_weights, errors)
    if weights:
        settings["scoreWeights"] = weights
    judge_check = spec.get("judgeCheck", False)
    if judge_check in (None, ""):
        judge_check = False
    if not isinstance(judge_check, bool):
        _error(errors, ("judgeCheck",), "must be true or false")
    elif judge_check and judge_model is None and not _has_error(errors, "judgeModel"):
        _error(errors, ("judgeCheck",), "a judge check needs a judge: give judgeModel")
    notes = []
    if not errors:  # only a valid spec is worth asking the servers about
        check_models(judge_provider, judge_model, targets, errors, notes)
    if errors:
        raise ValidationError(errors)
    return {
        "run_id": run_id,
        "name": name,
        "judge_provider": judge_provider,
        "judge_model": judge_model,
        "judge_params": judge_params,
        "targets": targets,
        "collection_ids": collection_ids,
        "task_ids": task_ids,
        # Only these of the chosen tasks (pks; a CLI run's --filter-* options), None for all.
        "only_task_ids": spec.get("onlyTaskIds"),
        "settings": settings,
        "judge_check": judge_check is True,
        "notes": notes,
    }


def _has_error(errors, field):
    return any(e["field"] == field for e in errors)


def _served(provider, refresh=False):
    """The model ids the provider lists, or (None, why) when they cannot be fetched now."""
    try:
        models = list_models(provider.id, refresh=refresh, timeout=MODEL_CHECK_TIMEOUT)
    except Exception as exc:  # down, slow, odd answer: the warm-up will tell
        return None, getattr(exc, "message", None) or repr(exc)
    return [str(m["id"]) for m in models], None


def _is_served(model, ids):
    # Ollama answers "llama3" with "llama3:latest", which is what it lists.
    return model in ids or (":" not in model and f"{model}:latest" in ids)


def check_models(judge_provider, judge_model, targets, errors, notes):
    """Every target and the judge must be a model its provider lists; a provider whose list
    cannot be fetched is accepted with a note (its warm-up decides)."""
    wanted = [(("judgeModel",), judge_provider, judge_model)] if judge_provider else []
    wanted += [(("targets", i, "model"), t["provider"], t["model"]) for i, t in enumerate(targets)]
    served = {}
    for path, provider, model in wanted:
        if provider.id not in served:
            served[provider.id] = [*_served(provider), False]
        ids, why, refreshed = served[provider.id]
        if ids is not None and not _is_served(model, ids) and not refreshed:
            ids, why = _served(provider, refresh=True)  # the cached list may be stale
            served[provider.id] = [ids, why, True]
        if ids is None:
            note = (
                f"Could not check the models of provider {provider.name} ({why}); "
                "its warm-up will tell whether they answer"
            )
            if note not in notes:
                notes.append(note)
        elif not _is_served(model, ids):
            shown = ", ".join(ids[:MODELS_SHOWN]) + (", ..." if len(ids) > MODELS_SHOWN else "")
            _error(
                errors,
                path,
                f"model {model!r} is not served by "
                f"provider {provider.name!r} (it serves: {shown or 'no model'})",
            )
