"""A saved template found and started: what `llmbench run --template` and the scheduler's
firing need (its webhook URL is webhook_secret.py's). The schedule (cron, next fire times) is
templates.py's: APScheduler's CronTrigger is not imported by a run that has no schedule."""

from ..db.models import Template
from ..errors import NotFound
from ..ids import digits_number
from ..runs.lifecycle import create_run


def get_template(template_id):
    """The template with this id, or NotFound."""
    template = Template.get_or_none(Template.id == template_id)
    if template is None:
        raise NotFound(f"template {template_id} not found; GET /api/templates lists them")
    return template


def find_template(ref):
    """A template by name, or by id when `ref` is a number (the CLI's --template)."""
    template = Template.get_or_none(Template.name == str(ref))
    if template is None and digits_number(ref) is not None:
        template = Template.get_or_none(Template.id == digits_number(ref))
    if template is None:
        names = ", ".join(n for (n,) in Template.select(Template.name).tuples()) or "none yet"
        raise NotFound(f"no template named {ref!r} (templates: {names})")
    return template


def start_template(template_id, *, queue=True, triggered_by="manual", note=None, now=None):
    """Start a run from the template (queued when the engine is busy and `queue` is set)."""
    template = get_template(template_id)
    spec = {"name": template.name, **template.spec}
    return create_run(
        spec,
        source="template",
        now=now,
        queue=queue,
        template=template,
        triggered_by=triggered_by,
        trigger_note=note,
    )
