"""Template pages: list, create (also from a run or the new-run form), show, edit, run, delete."""

import json

from flask import Blueprint
from flask import flash
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for

from .. import jsontext
from ..errors import LlmbenchError
from ..errors import ValidationError
from ..runs.queries import get_run
from ..runs.state import run_state
from ..schedules.template_start import get_template
from ..schedules.template_start import start_template
from ..schedules.templates import create_template
from ..schedules.templates import delete_template
from ..schedules.templates import list_templates
from ..schedules.templates import masked_webhook
from ..schedules.templates import spec_from_run
from ..schedules.templates import template_detail
from ..schedules.templates import template_to_dict
from ..schedules.templates import update_template
from .dashboard import parse_form

bp = Blueprint("templates", __name__, url_prefix="/templates")
ZONES = (
    "UTC",
    "Europe/London",
    "Europe/Berlin",
    "Europe/Moscow",
    "America/New_York",
    "America/Chicago",
    "America/Los_Angeles",
    "Asia/Kolkata",
    "Asia/Shanghai",
    "Asia/Tokyo",
    "Australia/Sydney",
)


# A run spec's judge, in every spelling runs/spec.py reads.
JUDGE_KEYS = (
    "judgeProviderId",
    "judgeProviderConfigId",
    "judgeModel",
    "judgeModelName",
    "judgeParams",
    "judgeCheck",
)


def _pretty(spec):
    return json.dumps(spec, indent=2, ensure_ascii=False)


def form_state(template=None, spec=None, name=""):
    """The form's values: from a template, or a spec to start from."""
    if template is not None:
        return {
            "name": template.name,
            "description": template.description,
            "spec": _pretty(template.spec),
            "noJudge": not (template.spec or {}).get("judgeModel"),
            "cron": template.cron or "",
            "timezone": template.timezone or "UTC",
            "enabled": template.schedule_enabled or not template.cron,
            "regressionThreshold": f"{template.regression_threshold:g}",
            "webhook": masked_webhook(template),
        }
    return {
        "name": name,
        "description": "",
        "spec": _pretty(spec or {}),
        "noJudge": bool(spec) and not spec.get("judgeModel"),
        "cron": "",
        "timezone": "UTC",
        "enabled": True,
        "regressionThreshold": "5",
        "webhook": None,
    }


def parse(form):
    """(form state, API-shaped body, errors so far) from the template form."""
    state = {
        "name": form.get("name", "").strip(),
        "description": form.get("description", "").strip(),
        "spec": form.get("spec", ""),
        "noJudge": form.get("noJudge") == "on",
        "cron": form.get("cron", "").strip(),
        "timezone": form.get("timezone", "").strip() or "UTC",
        "enabled": form.get("enabled") == "on",
        "regressionThreshold": form.get("regressionThreshold", "").strip(),
    }
    errors = []
    try:
        spec = jsontext.loads(state["spec"]) if state["spec"].strip() else None
    except ValueError as exc:
        spec = None
        errors.append(
            {"field": "spec", "message": f"not valid JSON (line {exc.lineno}): {exc.msg}"}
        )
    if state["noJudge"] and isinstance(spec, dict):
        # "No judge": whatever judge the spec names is left out; the checks score its runs.
        spec = {k: v for k, v in spec.items() if k not in JUDGE_KEYS}
    body = {
        "name": state["name"],
        "description": state["description"],
        "spec": spec,
        "regressionThreshold": state["regressionThreshold"] or None,
        "schedule": (
            {"cron": state["cron"], "timezone": state["timezone"], "enabled": state["enabled"]}
            if state["cron"]
            else None
        ),
    }
    if form.get("removeWebhook") == "on":
        body["webhookUrl"] = ""
    elif form.get("webhookUrl", "").strip():
        body["webhookUrl"] = form["webhookUrl"].strip()
    return state, body, errors


def _errors_by_field(errors):
    """{field: message}; the spec's own problems gather under the spec, naming their path."""
    shown = {}
    for e in errors:
        field = e.get("field") or "general"
        if field.startswith("spec."):
            key, message = "spec", f"{field[5:]}: {e['message']}"
        else:
            key, message = field, e["message"]
        shown[key] = f"{shown[key]}; {message}" if key in shown else message
    return shown


def _render_form(state, errors=None, template=None, status=200):
    return render_template(
        "run_templates/form.html",
        form=state,
        errors=_errors_by_field(errors or []),
        template=template,
        zones=ZONES,
    ), status


def _save(save, template=None):
    state, body, errors = parse(request.form)
    state["webhook"] = masked_webhook(template) if template else None
    try:
        # Unparsable JSON leaves the spec empty: the other fields are still checked, so the
        # form shows every problem at once (the JSON error standing for the spec's).
        saved = save(body)
    except ValidationError as exc:
        found = errors + [e for e in exc.errors if not (errors and e.get("field") == "spec")]
        return _render_form(state, found, template, 400)
    flash(f"Template {saved.name} was saved.", "success")
    return redirect(url_for("templates.show", template_id=saved.id))


@bp.get("/")
def index():
    """Every template with its schedule, next fire time and last run."""
    return render_template(
        "run_templates/index.html", templates=[template_to_dict(t) for t in list_templates()]
    )


@bp.get("/new")
def new():
    """The template form, empty or filled from a run (?from_run=<run id>)."""
    run_id = request.args.get("from_run")
    if run_id:
        run = get_run(run_id)
        return _render_form(form_state(spec=spec_from_run(run), name=run.name or run.run_id))
    return _render_form(form_state())


@bp.post("/draft")
def draft():
    """The template form filled from the new-run form ("Save as template…"); nothing saved."""
    state, spec = parse_form(request.form)
    return _render_form(form_state(spec=spec, name=state["name"]))


@bp.post("/")
def create():
    """Save a new template."""
    return _save(create_template)


@bp.get("/<int:template_id>")
def show(template_id):
    """A template: what it runs, its schedule and next fire times, its runs."""
    return render_template("run_templates/show.html", **template_detail(template_id))


@bp.get("/<int:template_id>/edit")
def edit(template_id):
    """The form filled with the template."""
    template = get_template(template_id)
    return _render_form(form_state(template), template=template)


@bp.post("/<int:template_id>")
def update(template_id):
    """Save the edited template."""
    template = get_template(template_id)
    return _save(lambda body: update_template(template_id, body), template)


@bp.post("/<int:template_id>/run")
def run(template_id):
    """Start a run from the template now (it waits in the queue while another run is active)."""
    try:
        started = start_template(template_id, queue=True, triggered_by="manual")
    except LlmbenchError as exc:
        flash(exc.message, "error")
        return redirect(url_for("templates.show", template_id=template_id))
    if run_state(started) == "queued":
        flash(f"Run {started.run_id} is queued: it starts when the engine is free.", "info")
    return redirect(url_for("runs.show", run_id=started.run_id))


@bp.post("/<int:template_id>/delete")
def delete(template_id):
    """Delete the template (its runs stay)."""
    name = get_template(template_id).name
    delete_template(template_id)
    flash(f"Template {name} was deleted; its runs are kept.", "success")
    return redirect(url_for("templates.index"))
