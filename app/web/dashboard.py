"""Dashboard: the new-run form, runs to continue and recent results."""

from flask import Blueprint
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for

from ..catalog.provider_models import list_models
from ..catalog.providers import get_provider
from ..errors import Conflict
from ..errors import LlmbenchError
from ..errors import ValidationError
from ..errors import format_error
from ..ids import SQLITE_INT_MAX
from ..ids import digits_number
from ..providers.interface import ProviderError
from ..results.system import system_metrics_now
from ..runs import live
from ..runs import spec
from ..runs.history import history
from ..runs.lifecycle import create_run
from ..runs.live import collections_with_counts
from ..runs.live import continuable_runs
from ..runs.queries import running_run
from ..runs.queue import queued_runs

bp = Blueprint("dashboard", __name__)

# The form's settings inputs are named as the spec's settings (runs/spec.py SETTINGS).
SETTINGS = tuple(spec.SETTINGS)
# The few SLO inputs the form offers (settings.slo; the API and run configs take all four),
# named "slo.<key>".
SLO_FIELDS = ("ttftP90Ms", "e2eP95Ms", "minScore")
PARAMS = spec.PARAM_NAMES
# Form fields that carry the spec's own names: an error on one is shown beside it.
SPEC_FIELDS = ("name", "judgeProviderId", "judgeModel", "targets", "collectionIds")


def target_key(provider_id, model, copy=1):
    """The checkbox value naming one target; its inputs are named '<key>#<param>' and
    '<key>#label'. Another params profile of the same model is copy 2, 3, ...: 'pid~2:model'."""
    return f"{provider_id}:{model}" if copy == 1 else f"{provider_id}~{copy}:{model}"


def parse_key(key):
    """(provider id, model, copy) from a target key, or None when it is not one."""
    pid_text, _, model = key.partition(":")
    pid_text, _, copy_text = pid_text.partition("~")
    pid, copy = _int_or_none(pid_text), _int_or_none(copy_text or "1")
    if pid is None or not model or copy is None or copy < 1:
        return None
    return pid, model, copy


def extra_params_prefix(provider_id):
    """Name prefix of the params inputs shared by the models typed for one provider."""
    return f"extra_params_{provider_id}"


def _copies(form):
    """{(provider id, model): profiles shown}: the highest copy any submitted input names."""
    copies = {}
    names = [name.partition("#")[0] for name in form if "#" in name] + form.getlist("target")
    for name in names:
        parsed = parse_key(name)
        if parsed:
            pid, model, copy = parsed
            copies[(pid, model)] = max(copy, copies.get((pid, model), 1))
    return copies


def parse_form(form):
    """Read the new-run form (POST or the no-JS refresh GET) into (state, spec).

    The form's inputs carry the spec's names; every value goes to runs/spec.py as typed, and
    its rules alone decide what is valid. A model may be picked more than once, each profile
    (copy) with its own params and label (compares parameter profiles).
    """
    state = {
        "name": form.get("name", "").strip(),
        "judgeModel": form.get("judgeModel", "").strip(),
        # "No judge": the checks alone score; the judge inputs are then ignored.
        "noJudge": form.get("noJudge") == "1",
        "judgeProviderId": _int_or_none(form.get("judgeProviderId")),
        "slo": {name: form.get(f"slo.{name}", "").strip() for name in SLO_FIELDS},
        "targets": [],  # (provider id, model, copy), in form order
        "params": {},  # target key -> params
        "labels": {},  # target key -> label typed
        "prefixes": {},  # target key -> name prefix of its params inputs
        "copies": _copies(form),
        "extra_params": {},
        "collectionIds": {c for c in map(_int_or_none, form.getlist("collectionIds")) if c},
        "settings": {name: form.get(name, "").strip() for name in SETTINGS},
        # Load steps: "1, 2, 4, 8" and their mode; runs/spec.py clean_load reads the text.
        "load": {
            "steps": form.get("loadSteps", "").strip(),
            "mode": form.get("loadMode", "").strip() or "concurrency",
        },
    }
    # (target key, name prefix of its param inputs): a listed model has its own params row;
    # the models typed by name share their provider's "params for typed models" row.
    keys = [(key, key) for key in form.getlist("target")]
    added = parse_key(form.get("copy", ""))
    if added:  # "another profile": one more copy of that model, picked
        pid, model, _ = added
        copy = state["copies"].get((pid, model), 1) + 1
        state["copies"][(pid, model)] = copy
        keys.append((target_key(pid, model, copy), target_key(pid, model, copy)))
    for field in sorted(k for k in form if k.startswith("extra_models_")):
        pid_text = field[len("extra_models_") :]
        prefix = extra_params_prefix(pid_text)
        state["extra_params"][pid_text] = {
            name: form.get(f"{prefix}#{name}", "").strip() for name in PARAMS
        }
        for model in form.get(field, "").replace("\n", ",").split(","):
            if model.strip():
                keys.append((target_key(pid_text, model.strip()), prefix))
    for key, prefix in keys:
        parsed = parse_key(key)
        if parsed is None or key in state["params"]:
            continue  # a model picked twice (listed and typed) is one target
        state["targets"].append(parsed)
        state["params"][key] = _params(form, prefix)
        state["labels"][key] = form.get(f"{key}#label", "").strip() if prefix == key else ""
        state["prefixes"][key] = prefix
    targets = []
    for pid, model, copy in state["targets"]:
        key = target_key(pid, model, copy)
        target = {"providerId": pid, "model": model, "params": state["params"][key]}
        if state["labels"][key]:
            target["label"] = state["labels"][key]
        targets.append(target)
    no_judge = state["noJudge"]
    spec = {
        "judgeProviderId": None if no_judge else state["judgeProviderId"],
        "judgeModel": None if no_judge else state["judgeModel"],
        "targets": targets,
        "collectionIds": sorted(state["collectionIds"]),
        "settings": {name: value for name, value in state["settings"].items() if value},
    }
    if state["load"]["steps"]:
        spec["settings"]["load"] = dict(state["load"])
    if state["name"]:
        spec["name"] = state["name"]
    slo = {name: value for name, value in state["slo"].items() if value}
    if slo:
        spec["settings"]["slo"] = slo
    return state, spec


def _params(form, prefix):
    """The generation params typed in inputs named '<prefix>#<param>' (stop: comma list)."""
    params = {}
    for name in PARAMS:
        raw = form.get(f"{prefix}#{name}", "").strip()
        if raw:
            params[name] = (
                [x.strip() for x in raw.split(",") if x.strip()] if name == "stop" else raw
            )
    return params


def _int_or_none(value):
    try:
        number = int(value)
    except (TypeError, ValueError):  # ValueError: also past Python's int-string limit
        return None
    return number if abs(number) <= SQLITE_INT_MAX else None  # no row has a larger id


def served_models(provider_id, refresh=False):
    """(model names, error message, unreachable) from the provider's server; never raises.

    `unreachable` is True when nothing answers at all (connection refused, host not found,
    connect timeout): a server that is not running, said calmly rather than as an error."""

    try:
        models = list_models(provider_id, refresh=refresh)
    except (ProviderError, LlmbenchError) as exc:
        return [], getattr(exc, "message", str(exc)), bool(getattr(exc, "unreachable", None))
    names = [m["id"] if isinstance(m, dict) else str(m) for m in models]
    return sorted(dict.fromkeys(names)), None, False


def target_group(provider, state, listed=None, error=None, unreachable=False):
    """Context for one provider's target-model group (its picked models plus listed ones),
    each model with as many params profiles as the form holds."""
    picked = [(m, c) for pid, m, c in state["targets"] if pid == provider.id]
    models = list(dict.fromkeys([m for m, _ in picked] + list(listed or [])))
    copies = state.get("copies", {})
    return {
        "provider": provider,
        "models": models,
        "profiles": {m: range(1, copies.get((provider.id, m), 1) + 1) for m in models},
        "picked": {target_key(provider.id, m, c) for m, c in picked},
        "listed": listed,
        "error": error,
        "unreachable": unreachable,
        "params": state["params"],
        "labels": state.get("labels", {}),
        "key": target_key,
    }


def render_dashboard(
    state=None, errors=None, status=200, general=None, conflict=None, refresh=None
):
    """Render the dashboard with the form filled from `state` (and errors, if any)."""
    providers = live.providers()
    if state is None:
        state, _ = parse_form(request.args)
        if state["judgeProviderId"] is None and providers:
            state["judgeProviderId"] = providers[0].id
    judge_models, judge_error, judge_unreachable = None, None, False
    if refresh == "judge" and state["judgeProviderId"] is not None:
        judge_models, judge_error, judge_unreachable = served_models(
            state["judgeProviderId"], refresh=True
        )
    groups = []
    for p in providers:
        found = served_models(p.id, True) if refresh == str(p.id) else (None, None, False)
        groups.append(target_group(p, state, *found))
    open_ids = {pid for pid, _, _ in state["targets"]} | (
        {digits_number(refresh)} if digits_number(refresh or "") is not None else set()
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
        "judge_unreachable": judge_unreachable,
        "params_names": PARAMS,
        "settings_fields": SETTINGS,
        "slo_fields": SLO_FIELDS,
        "key": target_key,
        "extra_prefix": extra_params_prefix,
        "continue_runs": continuable_runs(),
        "recent": history(per_page=8)["runs"],
        "queued": queued_runs(),
    }
    return render_template("dashboard/index.html", **context), status


def form_errors(errors, state):
    """Place the spec's errors beside the inputs that caused them (by each error's path)."""
    by_field, general = {}, []
    for e in errors:
        path = e.get("path") or [e.get("field")]
        field = None
        if path[0] == "targets" and len(path) == 4 and path[1] < len(state["targets"]):
            key = target_key(*state["targets"][path[1]])
            prefix = state.get("prefixes", {}).get(key, key)
            field = f"{prefix}#{path[3]}"
        elif path[:1] == ["targets"] and path[2:] == ["label"] and path[1] < len(state["targets"]):
            field = f"{target_key(*state['targets'][path[1]])}#label"
        elif path[0] == "settings" and len(path) == 2 and path[1] in SETTINGS:
            field = path[1]
        elif path[:2] == ["settings", "load"]:
            field = "loadSteps"
        elif path[0] in SPEC_FIELDS and (len(path) == 1 or path[0] == "targets"):
            field = path[0]
            if state.get("noJudge") and field == "judgeModel":
                field = "noJudge"  # tasks without checks: said beside the choice made
        elif path[:2] == ["settings", "slo"] and len(path) == 3 and path[2] in SLO_FIELDS:
            field = f"slo.{path[2]}"
        if field and field not in by_field:
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
    """Start a run from the form, then go to its live view (400/409 re-render the form); with
    "Queue it" (queue=1) it waits in the queue while another run is active."""
    state, spec = parse_form(request.form)
    try:
        run = create_run(spec, source="web", queue=request.form.get("queue") == "1")
    except ValidationError as exc:
        field_errors, general = form_errors(exc.errors, state)
        return render_dashboard(state, field_errors, 400, general=general)
    except Conflict as exc:
        return render_dashboard(state, {}, 409, general=[exc.message], conflict=running_run())
    return redirect(url_for("runs.show", run_id=run.run_id))


@bp.get("/new-run/judge-models")
def judge_models():
    """Fragment: the judge provider's models as a datalist (#judge-models)."""
    pid = _int_or_none(request.args.get("judgeProviderId"))
    if pid is None:
        models, error, unreachable = [], "Pick a provider first.", False
    else:
        models, error, unreachable = served_models(pid, refresh=bool(request.args.get("refresh")))
    return render_template(
        "dashboard/_judge_models.html",
        judge_models=models,
        judge_error=error,
        judge_unreachable=unreachable,
        judge_provider=get_provider(pid) if unreachable else None,
    )


@bp.get("/new-run/providers/<int:provider_id>/models")
def target_models(provider_id):
    """Fragment: one provider's models as checkboxes, keeping what was picked (#target-models-N)."""
    provider = get_provider(provider_id)
    state, _ = parse_form(request.args)
    found = served_models(provider_id, refresh=bool(request.args.get("refresh")))
    return render_template(
        "dashboard/_target_models.html",
        g=target_group(provider, state, *found),
        params_names=PARAMS,
        errors={},
        oob=True,
    )


@bp.get("/machine")
def machine():
    """Fragment #machine: CPU, RAM, GPU memory and loaded models now (/api/system/metrics)."""
    return render_template("dashboard/_machine.html", m=system_metrics_now())
