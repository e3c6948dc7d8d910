"""Dashboard: the new-run form, runs to continue and recent results."""

import re

from flask import Blueprint
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for

from ..catalog.providers import get_provider
from ..catalog.providers import list_models
from ..errors import Conflict
from ..errors import LlmbenchError
from ..errors import ValidationError
from ..errors import format_error
from ..providers.interface import ProviderError
from ..runs import live
from ..runs import spec as spec_mod
from ..runs.history import history
from ..runs.lifecycle import create_run
from ..runs.live import collections_with_counts
from ..runs.live import continuable_runs
from ..runs.queries import active_run

bp = Blueprint("dashboard", __name__)

# Bounds of the per-target generation params: {name: (type, min, max)}, as the API checks them.
PARAM_RULES = spec_mod.PARAMS
PARAMS = (*spec_mod.PARAMS, "stop")
SETTINGS = {
    "max_attempts": ("maxAttempts", int, 1, 20),
    "question_limit": ("questionLimit", int, 1, 1_000_000),
    "max_budget_usd": ("maxBudgetUsd", float, 0.0, None),
}
SETTING_FIELDS = {api: field for field, (api, *_rest) in SETTINGS.items()}
# create_run's field names -> the form field that shows the message.
API_FIELDS = {
    "judgeProviderId": "judge_provider",
    "judgeProviderConfigId": "judge_provider",
    "judgeModel": "judge_model",
    "judgeModelName": "judge_model",
    "targets": "targets",
    "targetModels": "targets",
    "collectionIds": "collections",
    "name": "name",
    "runId": "name",
    "settings": "settings",
}


def _number(raw, kind, low, high):
    """Parse a number within bounds; raise ValueError with a readable message."""
    try:
        value = kind(raw)
    except ValueError:
        raise ValueError("must be a whole number" if kind is int else "must be a number") from None
    if low is not None and value < low:
        raise ValueError(f"must be at least {low}")
    if high is not None and value > high:
        raise ValueError(f"must be at most {high}")
    return value


def target_key(provider_id, model):
    """The checkbox value naming one target; param inputs are named '<key>#<param>'."""
    return f"{provider_id}:{model}"


def parse_form(form):
    """Read the new-run form (POST or the no-JS refresh GET) into (state, spec, errors)."""
    errors = {}
    state = {
        "name": form.get("name", "").strip(),
        "judge_model": form.get("judge_model", "").strip(),
        "judge_provider": _int_or_none(form.get("judge_provider")),
        "targets": [],
        "params": {},
        "extra_params": {},
        "collections": set(),
        "settings": {},
    }
    seen = set()
    # (target key, name prefix of its param inputs): a listed model has its own params row;
    # the models typed by name share their provider's "params for typed models" row.
    keys = [(key, key) for key in form.getlist("target")]
    extra_fields = sorted(k for k in form if k.startswith("extra_models_"))
    for field in extra_fields:
        pid_text = field[len("extra_models_") :]
        prefix = extra_params_prefix(pid_text)
        state["extra_params"][pid_text] = {
            name: form.get(f"{prefix}#{name}", "").strip() for name in PARAMS
        }
        for model in form.get(field, "").replace("\n", ",").split(","):
            if model.strip():
                keys.append((target_key(pid_text, model.strip()), prefix))
    for key, prefix in keys:
        pid_text, _, model = key.partition(":")
        pid = _int_or_none(pid_text)
        if pid is None or not model:
            continue
        if (pid, model) in seen:  # a model picked twice (listed and typed) is one target
            continue
        seen.add((pid, model))
        params = _params(form, prefix, errors)
        state["targets"].append((pid, model))
        state["params"][(pid, model)] = params
    for raw in form.getlist("collection"):
        cid = _int_or_none(raw)
        if cid is not None:
            state["collections"].add(cid)
    settings = {}
    for field, (api_name, kind, low, high) in SETTINGS.items():
        raw = form.get(field, "").strip()
        state["settings"][field] = raw
        if raw:
            try:
                settings[api_name] = _number(raw, kind, low, high)
            except ValueError as exc:
                errors[field] = f"{field.replace('_', ' ').capitalize()} {exc}"
    if state["judge_provider"] is None:
        errors["judge_provider"] = "Pick the judge's provider."
    if not state["judge_model"]:
        errors["judge_model"] = "Name the judge model (Refresh lists the provider's models)."
    if not state["targets"]:
        errors["targets"] = "Pick at least one target model."
    if not state["collections"]:
        errors["collections"] = "Pick at least one collection."
    spec = {
        "judgeProviderId": state["judge_provider"],
        "judgeModel": state["judge_model"],
        "targets": [
            {"providerId": pid, "model": model, "params": state["params"][(pid, model)]}
            for pid, model in state["targets"]
        ],
        "collectionIds": sorted(state["collections"]),
    }
    if settings:
        spec["settings"] = settings
    if state["name"]:
        spec["name"] = state["name"]
    return state, spec, errors


def extra_params_prefix(provider_id):
    """Name prefix of the params inputs shared by the models typed for one provider."""
    return f"extra_params_{provider_id}"


def _params(form, prefix, errors):
    """The generation params in inputs named '<prefix>#<param>'; bad ones go into `errors`."""
    params = {}
    for name in PARAMS:
        raw = form.get(f"{prefix}#{name}", "").strip()
        if not raw:
            continue
        if name == "stop":
            params[name] = [s.strip() for s in raw.split(",") if s.strip()]
            continue
        try:
            params[name] = _number(raw, *PARAM_RULES[name])
        except ValueError as exc:
            errors.setdefault(f"{prefix}#{name}", f"{name} {exc}")
            params[name] = raw
    return params


def _int_or_none(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def served_models(provider_id, refresh=False):
    """(model names, error message) from the provider's server; never raises."""

    try:
        models = list_models(provider_id, refresh=refresh)
    except (ProviderError, LlmbenchError) as exc:
        return [], getattr(exc, "message", str(exc))
    names = [m["id"] if isinstance(m, dict) else str(m) for m in models]
    return sorted(dict.fromkeys(names)), None


def target_group(provider, state, listed=None, error=None):
    """Context for one provider's target-model group (its picked models plus listed ones)."""
    picked = [m for pid, m in state["targets"] if pid == provider.id]
    models = list(dict.fromkeys(picked + list(listed or [])))
    return {
        "provider": provider,
        "models": models,
        "picked": set(picked),
        "listed": listed,
        "error": error,
        "params": state["params"],
        "key": target_key,
    }


def render_dashboard(
    state=None, errors=None, status=200, general=None, conflict=None, refresh=None
):
    """Render the dashboard with the form filled from `state` (and errors, if any)."""
    providers = live.providers()
    if state is None:
        state, _, _ = parse_form(request.args)
        if state["judge_provider"] is None and providers:
            state["judge_provider"] = providers[0].id
    judge_models, judge_error = None, None
    if refresh == "judge" and state["judge_provider"] is not None:
        judge_models, judge_error = served_models(state["judge_provider"], refresh=True)
    groups = []
    for p in providers:
        listed, error = served_models(p.id, True) if refresh == str(p.id) else (None, None)
        groups.append(target_group(p, state, listed, error))
    open_ids = {pid for pid, _ in state["targets"]} | (
        {int(refresh)} if (refresh or "").isdigit() else set()
    )
    if not open_ids and providers:
        open_ids = {providers[0].id}
    context = {
        "providers": providers,
        "collections": collections_with_counts(),
        "form": state,
        "errors": errors or {},
        "general": general or [],
        "conflict": conflict,
        "groups": groups,
        "open_ids": open_ids,
        "judge_models": judge_models,
        "judge_error": judge_error,
        "params_names": PARAMS,
        "key": target_key,
        "extra_prefix": extra_params_prefix,
        "continue_runs": continuable_runs(),
        "recent": history(per_page=8)["runs"],
    }
    return render_template("dashboard/index.html", **context), status


def form_errors(errors, state):
    """Map create_run's errors (API field names) onto the form's fields; the rest are general."""
    by_field, general = {}, []
    for e in errors:
        name = e.get("field") or ""
        field = API_FIELDS.get(re.split(r"[.\[]", name)[0])
        param = re.fullmatch(r"targets\[(\d+)\]\.params\.(\w+)", name)
        setting = re.fullmatch(r"settings\.(\w+)", name)
        if param and int(param[1]) < len(state["targets"]):
            field = target_key(*state["targets"][int(param[1])]) + "#" + param[2]
        elif setting:
            field = SETTING_FIELDS.get(setting[1])
        if field and field not in by_field and field != "settings":
            by_field[field] = e["message"]
        else:
            general.append(format_error(e))
    return by_field, general


@bp.get("/")
def index():
    """Dashboard: new run, continue run, recent results."""
    return render_dashboard(refresh=request.args.get("refresh"))


@bp.post("/runs")
def start_run():
    """Start a run from the form, then go to its live view (400/409 re-render the form)."""
    state, spec, errors = parse_form(request.form)
    if errors:
        return render_dashboard(state, errors, 400)
    try:
        run = create_run(spec, source="web")
    except ValidationError as exc:
        field_errors, general = form_errors(exc.errors, state)
        return render_dashboard(state, field_errors, 400, general=general)
    except Conflict as exc:
        return render_dashboard(state, {}, 409, general=[exc.message], conflict=active_run())
    return redirect(url_for("runs.show", run_id=run.run_id))


@bp.get("/new-run/judge-models")
def judge_models():
    """Fragment: the judge provider's models as a datalist (#judge-models)."""
    pid = _int_or_none(request.args.get("judge_provider"))
    if pid is None:
        models, error = [], "Pick a provider first."
    else:
        models, error = served_models(pid, refresh=bool(request.args.get("refresh")))
    return render_template("dashboard/_judge_models.html", judge_models=models, judge_error=error)


@bp.get("/new-run/providers/<int:provider_id>/models")
def target_models(provider_id):
    """Fragment: one provider's models as checkboxes, keeping what was picked (#target-models-N)."""
    provider = get_provider(provider_id)
    state, _, _ = parse_form(request.args)
    listed, error = served_models(provider_id, refresh=bool(request.args.get("refresh")))
    return render_template(
        "dashboard/_target_models.html",
        g=target_group(provider, state, listed, error),
        params_names=PARAMS,
        errors={},
    )
