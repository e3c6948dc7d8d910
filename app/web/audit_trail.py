"""What goes into the audit log: every request that started, paused, stopped, deleted or
changed something and succeeded, recorded after it from one map (endpoint -> action), so no
route can forget. Details name the fields sent, never their values (a secret's included)."""

from flask import request

from ..accounts import audit
from .access import actor

# endpoint -> action; the subject is the action's noun and the route's ids ("run r1").
AUDITED = {
    "dashboard.start_run": "run.start",
    "api.runs.run_create": "run.start",
    "runs.pause": "run.pause",
    "api.runs.run_pause": "run.pause",
    "runs.resume": "run.resume",
    "api.runs.run_resume": "run.resume",
    "runs.stop": "run.stop",
    "api.runs.run_stop": "run.stop",
    "results.delete": "run.delete",
    "api.runs.run_delete": "run.delete",
    "results.retry_answers": "run.retry",
    "results.retry_judgements": "run.retry",
    "api.runs.run_retry_failed": "run.retry",
    "api.runs.run_retry_failed_answers": "run.retry",
    "queue.cancel": "run.unqueue",
    "api.queue.queue_cancel": "run.unqueue",
    "templates.run": "template.run",
    "api.templates.template_run": "template.run",
    "api.templates.template_trigger": "template.trigger",
    "templates.create": "template.add",
    "api.templates.template_create": "template.add",
    "templates.update": "template.change",
    "api.templates.template_update": "template.change",
    "templates.delete": "template.delete",
    "api.templates.template_delete": "template.delete",
    "providers.create": "provider.add",
    "api.providers.provider_create": "provider.add",
    "providers.update": "provider.change",
    "api.providers.provider_update": "provider.change",
    "providers.delete": "provider.delete",
    "api.providers.provider_delete": "provider.delete",
    "settings.prices_save": "price.set",
    "api.providers.price_put": "price.set",
    "settings.prices_delete": "price.delete",
    "api.providers.price_delete": "price.delete",
    "settings.reset_defaults": "settings.reset_defaults",
    "tasks.create": "task.add",
    "api.tasks.task_create": "task.add",
    "tasks.update": "task.change",
    "api.tasks.task_update": "task.change",
    "tasks.delete": "task.delete",
    "api.tasks.task_delete": "task.delete",
    "collections.create": "collection.add",
    "api.tasks.collection_create": "collection.add",
    "collections.rename": "collection.change",
    "api.tasks.collection_update": "collection.change",
    "collections.delete": "collection.delete",
    "api.tasks.collection_delete": "collection.delete",
    "datasets.upload": "tasks.import",
    "api.datasets.tasks_import": "tasks.import",
    "labels.import_file": "labels.import",
    "api.ratings.ratings_import": "labels.import",
    "api.pairwise.pairwise_votes_import": "labels.import",
    "accounts.create": "account.add",
    "accounts.change_role": "account.role",
    "accounts.remove": "account.remove",
}


def _new_id(response):
    """The id a create answered with: its JSON's runId/id, or the Location it points to."""
    if response.is_json:
        body = response.get_json(silent=True)
        if isinstance(body, dict):
            found = body.get("runId") or body.get("id")
            if found is not None:
                return str(found)
    location = response.headers.get("Location", "")
    return location.rstrip("/").rsplit("/", 1)[-1] if location else None


def _fields():
    """The names of the fields sent (form or JSON object), never their values."""
    names = set(request.form.keys())
    body = request.get_json(silent=True) if request.is_json else None
    if isinstance(body, dict):
        names |= set(body)
    return sorted(n for n in names if n != "csrf_token")


def subject(action, view_args, response):
    noun = action.split(".", 1)[0]
    ids = [str(v) for v in (view_args or {}).values()]
    if not ids and action.endswith((".start", ".add")):
        ids = [_new_id(response) or "?"]
    return " ".join([noun, *ids])


def init_app(app):
    @app.after_request
    def _record(response):
        action = AUDITED.get(request.endpoint)
        if action is None or response.status_code >= 400:
            return response
        fields = _fields()
        details = {"fields": fields} if fields else None
        audit.record(actor(), action, subject(action, request.view_args, response), details)
        return response
