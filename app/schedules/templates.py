"""Templates: saved run specs that can be started, triggered from outside or scheduled.

The webhook URL is a secret (it often carries a token): encrypted at rest with the row's AAD,
shown masked, never logged. Setting or changing the schedule computes the next fire time; an
edit that leaves the schedule as it was keeps it, so saving a template never skips or repeats a
fire. Finding and starting are template_start.py's, the webhook's secret webhook_secret.py's
(no cron in either).
"""

from .. import crypto
from ..clock import isoformat
from ..clock import utcnow
from ..db.connection import database
from ..db.models import Provider
from ..db.models import Run
from ..db.models import RunCollection
from ..db.models import RunTarget
from ..db.models import Template
from ..errors import ValidationError
from ..runs.state import run_state
from . import cron
from .template_fields import clean_template
from .template_start import get_template
from .webhook_secret import webhook_aad
from .webhook_secret import webhook_url


def list_templates():
    """Every template by name."""
    return list(Template.select().order_by(Template.name))


def masked_webhook(template):
    """The webhook URL as people see it: scheme://host/****abcd, or None."""
    url = webhook_url(template) if template.webhook_url else None
    if not url:
        return None
    scheme, _, rest = url.partition("://")
    host = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    return f"{scheme}://{host}/{crypto.mask(rest)}"


def _check_name_free(name, exclude=None):
    query = Template.select().where(Template.name == name)
    if exclude is not None:
        query = query.where(Template.id != exclude)
    if query.exists():
        raise ValidationError.field("name", f"a template named {name!r} exists; pick another name")


def _schedule_fields(schedule, template=None, now=None):
    """The schedule columns; the next fire time is kept when the schedule did not change."""
    if schedule is None:
        return {"cron": None, "timezone": "UTC", "schedule_enabled": False, "next_fire_at": None}
    fields = {
        "cron": schedule["cron"],
        "timezone": schedule["timezone"],
        "schedule_enabled": schedule["enabled"],
    }
    same = template is not None and (
        template.cron,
        template.timezone,
        template.schedule_enabled,
    ) == (schedule["cron"], schedule["timezone"], schedule["enabled"])
    if same:
        fields["next_fire_at"] = template.next_fire_at
    elif schedule["enabled"]:
        fields["next_fire_at"] = cron.next_fire(schedule["cron"], schedule["timezone"], now)
    else:
        fields["next_fire_at"] = None
    return fields


def create_template(data, now=None):
    """Create a template from an API/form body (name, spec, schedule, alert settings)."""
    now = now or utcnow()
    cleaned = clean_template(data)
    with database.atomic():
        _check_name_free(cleaned["name"])
        template = Template.create(
            name=cleaned["name"],
            description=cleaned["description"],
            spec=cleaned["spec"],
            regression_threshold=cleaned["threshold"],
            created_at=now,
            updated_at=now,
            **_schedule_fields(cleaned["schedule"], now=now),
        )
        if cleaned["webhook"]:
            template.webhook_url = crypto.encrypt(cleaned["webhook"], webhook_aad(template.id))
            template.save()
    return template


def update_template(template_id, data, now=None):
    """Replace a template's fields; a missing webhookUrl keeps the stored one, "" removes it."""
    now = now or utcnow()
    template = get_template(template_id)
    cleaned = clean_template(data)
    with database.atomic():
        _check_name_free(cleaned["name"], exclude=template.id)
        fields = {
            "name": cleaned["name"],
            "description": cleaned["description"],
            "spec": cleaned["spec"],
            "regression_threshold": cleaned["threshold"],
            "updated_at": now,
            "last_error": None,
            **_schedule_fields(cleaned["schedule"], template, now),
        }
        if cleaned["webhook"] == "":
            fields["webhook_url"] = None
        elif cleaned["webhook"]:
            fields["webhook_url"] = crypto.encrypt(cleaned["webhook"], webhook_aad(template.id))
        Template.update(**fields).where(Template.id == template.id).execute()
    return get_template(template.id)


def delete_template(template_id):
    """Delete a template; its runs stay (they only lose the link to it)."""
    template = get_template(template_id)
    Template.delete().where(Template.id == template.id).execute()


def spec_from_run(run):
    """A run's spec in the API's shape: what "Save as template" starts from."""
    targets = RunTarget.select().where(RunTarget.run == run).order_by(RunTarget.position)
    judge = (
        {"judgeProviderId": run.judge_provider_id, "judgeModel": run.judge_model}
        if run.judge_model
        else {}  # a run without a judge: so are the template's
    )
    spec = {
        **judge,
        "targets": [
            {"providerId": t.provider_id, "model": t.model, "params": t.params or {}}
            for t in targets
        ],
        "collectionIds": [
            c.collection_id
            for c in RunCollection.select().where(RunCollection.run == run)
            if c.collection_id is not None
        ],
    }
    if run.judge_params:
        spec["judgeParams"] = run.judge_params
    if run.settings:
        spec["settings"] = run.settings
    return spec  # no name: the template's runs are named after the template


def schedule_to_dict(template, now=None):
    """The template's schedule with its next fire times (UTC and local), or None."""
    if not template.cron:
        return None
    upcoming = []
    if template.schedule_enabled and template.next_fire_at is not None:
        upcoming = [template.next_fire_at] + cron.upcoming(
            template.cron, template.timezone, template.next_fire_at, 4
        )
    return {
        "cron": template.cron,
        "timezone": template.timezone,
        "enabled": template.schedule_enabled,
        "nextFireAt": isoformat(template.next_fire_at),
        "nextFireAtLocal": (
            cron.local(template.next_fire_at, template.timezone).isoformat()
            if template.next_fire_at
            else None
        ),
        "upcoming": [isoformat(t) for t in upcoming],
        "lastFiredAt": isoformat(template.last_fired_at),
    }


def last_run(template):
    """The newest run started from the template, or None."""
    return Run.select().where(Run.template == template).order_by(Run.created_at.desc()).first()


def template_to_dict(template):
    """A template as JSON: spec, schedule, alert settings (webhook masked), its last run."""
    run = last_run(template)
    return {
        "id": template.id,
        "name": template.name,
        "description": template.description,
        "spec": template.spec,
        "schedule": schedule_to_dict(template),
        "regressionThreshold": template.regression_threshold,
        "webhookUrl": masked_webhook(template),
        "lastError": template.last_error,
        "lastRun": (
            {
                "runId": run.run_id,
                "state": run_state(run),
                "triggeredBy": run.triggered_by,
                "createdAt": isoformat(run.created_at),
            }
            if run
            else None
        ),
        "createdAt": isoformat(template.created_at),
        "updatedAt": isoformat(template.updated_at),
    }


def template_runs(template, limit=50):
    """The runs started from the template, newest first, each with `.state`."""
    runs = list(
        Run.select().where(Run.template == template).order_by(Run.created_at.desc()).limit(limit)
    )
    for run in runs:
        run.state = run_state(run)
    return runs


def template_detail(template_id, now=None):
    """The template page: the template, its JSON view, its runs and its next fire times (UTC
    and in its zone)."""
    template = get_template(template_id)
    info = template_to_dict(template)
    upcoming = []
    if info["schedule"] and info["schedule"]["enabled"] and template.next_fire_at:
        times = [template.next_fire_at] + cron.upcoming(
            template.cron, template.timezone, template.next_fire_at, 4
        )
        upcoming = [(t, cron.local(t, template.timezone)) for t in times]
    providers = {p.id: p.name for p in Provider.select(Provider.id, Provider.name)}
    return {
        "template": template,
        "info": info,
        "providers": providers,
        "runs": template_runs(template),
        "upcoming": upcoming,
        "now": now or utcnow(),
    }
