"""JSON API: templates (saved run specs), starting and triggering them, their schedules."""

from flask import Blueprint
from flask import jsonify
from flask import request
from flask import url_for

from ..errors import ValidationError
from ..runs.state import run_state
from ..schedules.template_fields import clean_trigger
from ..schedules.template_start import get_template
from ..schedules.template_start import start_template
from ..schedules.templates import create_template
from ..schedules.templates import delete_template
from ..schedules.templates import list_templates
from ..schedules.templates import schedule_to_dict
from ..schedules.templates import template_to_dict
from ..schedules.templates import update_template
from .replies import created
from .replies import json_body

bp = Blueprint("templates", __name__)


def _optional_body():
    """The JSON body, or {} when none was sent."""
    if not request.data:
        return {}
    return json_body()


def queue_flag(body, default):
    """body["queue"] as a bool (400 naming `queue` for anything else)."""
    value = body.get("queue", default)
    if not isinstance(value, bool):
        raise ValidationError.field("queue", "must be true or false")
    return value


def accepted(run):
    """202 with the run's id and state (queued or running) and its URL in Location."""
    response = jsonify({"runId": run.run_id, "state": run_state(run)})
    response.headers["Location"] = url_for("api.runs.run_get", run_id=run.run_id)
    return response, 202


@bp.get("/templates")
def template_list():
    """Every template with its schedule and last run."""
    return jsonify([template_to_dict(t) for t in list_templates()])


@bp.post("/templates")
def template_create():
    """Create a template: {name, spec, schedule?, regressionThreshold?, webhookUrl?}."""
    template = create_template(json_body())
    return created(
        template_to_dict(template),
        url_for("api.templates.template_get", template_id=template.id),
    )


@bp.get("/templates/<int:template_id>")
def template_get(template_id):
    """One template (its webhook URL masked)."""
    return jsonify(template_to_dict(get_template(template_id)))


@bp.put("/templates/<int:template_id>")
def template_update(template_id):
    """Replace a template's fields; leave webhookUrl out to keep it, "" to remove it."""
    return jsonify(template_to_dict(update_template(template_id, json_body())))


@bp.delete("/templates/<int:template_id>")
def template_delete(template_id):
    """Delete a template (its runs stay)."""
    delete_template(template_id)
    return "", 204


@bp.post("/templates/<int:template_id>/run")
def template_run(template_id):
    """Start a run from the template: 202 {runId, state}; queued while another run is active
    (send {"queue": false} for the service API's 409 instead)."""
    body = _optional_body()
    run = start_template(template_id, queue=queue_flag(body, True), triggered_by="manual")
    return accepted(run)


@bp.post("/templates/<int:template_id>/trigger")
def template_trigger(template_id):
    """Trigger from outside: {"triggeredBy": "post-finetune", "note": "..."}
    -> 202 {runId, state}; the run records who triggered it and why."""
    who, note = clean_trigger(_optional_body())
    run = start_template(template_id, queue=True, triggered_by=who, note=note)
    return accepted(run)


@bp.get("/schedules")
def schedule_list():
    """Every template with a schedule: cron, time zone, enabled, next fire times."""
    return jsonify(
        [
            {"templateId": t.id, "templateName": t.name, **schedule_to_dict(t)}
            for t in list_templates()
            if t.cron
        ]
    )
