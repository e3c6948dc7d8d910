"""Who a request is and whether their role allows it: one check before every request.

Every endpoint of the app has a role here (tests/test_access.py walks the url_map and fails
for one that has none); an endpoint missing from the map needs admin, never nothing. On
loopback with no account no login is needed and `g.account` is None: nothing changes."""

from flask import current_app
from flask import g
from flask import jsonify
from flask import redirect
from flask import render_template
from flask import request
from flask import session
from flask import url_for

from ..accounts import access
from ..accounts import audit
from ..accounts.roles import ADMIN
from ..accounts.roles import RATER
from ..accounts.roles import RUNNER
from ..accounts.roles import VIEWER
from ..accounts.roles import allows
from ..accounts.store import add_proxy_account
from ..accounts.store import principal
from ..accounts.store import session_account
from ..accounts.tokens import token_principal
from ..db.models import ROLES
from ..db.models import Account

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
PUBLIC = "public"  # reachable without a login: the login page, static files, the health check

# What each endpoint needs. Reading is viewer; rating and voting rater; runs, tasks,
# collections, templates, schedules and task files runner; providers (their secrets), prices,
# settings, accounts, the audit log and deletions admin.
ENDPOINT_ROLES = {
    "static": PUBLIC,
    "auth.login": PUBLIC,
    "auth.login_post": PUBLIC,
    "auth.logout": PUBLIC,
    "audit.index": ADMIN,
    "api.audit.audit_export": ADMIN,
    "accounts.index": ADMIN,
    "accounts.show": ADMIN,
    "accounts.create": ADMIN,
    "accounts.change_role": ADMIN,
    "accounts.remove": ADMIN,
    # pages
    "dashboard.index": VIEWER,
    "dashboard.machine": VIEWER,
    "dashboard.judge_models": RUNNER,
    "dashboard.start_run": RUNNER,
    "dashboard.target_models": RUNNER,
    "runs.index": VIEWER,
    "runs.show": VIEWER,
    "runs.events": VIEWER,
    "runs.items": VIEWER,
    "runs.log": VIEWER,
    "runs.progress": VIEWER,
    "runs.system_metrics": VIEWER,
    "runs.pause": RUNNER,
    "runs.resume": RUNNER,
    "runs.stop": RUNNER,
    "results.show": VIEWER,
    "results.averages": VIEWER,
    "results.chart": VIEWER,
    "results.speed_chart": VIEWER,
    "results.table": VIEWER,
    "results.item": VIEWER,
    "results.export_average_csv": VIEWER,
    "results.export_detailed_csv": VIEWER,
    "results.export_markdown": VIEWER,
    "results.export_report": VIEWER,
    "results.export_summary": VIEWER,
    "results.rejudge": RUNNER,
    "results.retry_answers": RUNNER,
    "results.retry_judge": RUNNER,
    "results.retry_judgements": RUNNER,
    "results.delete": ADMIN,
    "compare.show": VIEWER,
    "compare.chart": VIEWER,
    "compare.markdown": VIEWER,
    "evaluate.index": VIEWER,
    "evaluate.card": VIEWER,
    "evaluate.save": RATER,
    "evaluate.tag_options": VIEWER,
    "ab.index": VIEWER,
    "ab.judge_job": VIEWER,
    "ab.vote": RATER,
    "ab.undo": RATER,
    "ab.change": RATER,
    "ab.judge": RUNNER,  # judge calls cost like a run's
    "labels.index": VIEWER,
    "labels.import_file": RATER,
    "leaderboard.index": VIEWER,
    "reports.show": VIEWER,
    "reports.chart": VIEWER,
    "reports.export_csv": VIEWER,
    "reports.judge_check_fragment": VIEWER,
    "reports.view_html": VIEWER,
    "reports.judge_check_start": RUNNER,
    "trends.index": VIEWER,
    "trends.radar": VIEWER,
    "trends.pin": RUNNER,
    "trends.unpin": RUNNER,
    "alerts.dismiss": RUNNER,
    "queue.cancel": RUNNER,
    "templates.index": VIEWER,
    "templates.show": VIEWER,
    "templates.new": RUNNER,
    "templates.edit": RUNNER,
    "templates.draft": RUNNER,
    "templates.create": RUNNER,
    "templates.update": RUNNER,
    "templates.run": RUNNER,
    "templates.delete": ADMIN,
    "settings.index": VIEWER,
    "settings.composite": VIEWER,
    "settings.prices": VIEWER,
    "settings.defaults": ADMIN,
    "settings.reset_defaults": ADMIN,
    "settings.price_models": ADMIN,
    "settings.prices_save": ADMIN,
    "settings.prices_delete": ADMIN,
    "providers.index": VIEWER,
    "providers.show": VIEWER,
    "providers.models_fragment": RUNNER,
    "providers.new": ADMIN,
    "providers.create": ADMIN,
    "providers.edit": ADMIN,
    "providers.update": ADMIN,
    "providers.test_inference": ADMIN,
    "providers.test_inference_fragment": ADMIN,
    "providers.delete": ADMIN,
    "tasks.index": VIEWER,
    "tasks.table": VIEWER,
    "tasks.new": RUNNER,
    "tasks.edit": RUNNER,
    "tasks.preview": RUNNER,
    "tasks.create": RUNNER,
    "tasks.update": RUNNER,
    "tasks.delete": ADMIN,
    "collections.index": VIEWER,
    "collections.show": VIEWER,
    "collections.candidates": RUNNER,
    "collections.create": RUNNER,
    "collections.rename": RUNNER,
    "collections.add_tasks": RUNNER,
    "collections.add_all_shown": RUNNER,
    "collections.remove_task": RUNNER,
    "collections.delete": ADMIN,
    "datasets.index": RUNNER,
    "datasets.upload": RUNNER,
    "datasets.export": VIEWER,
    "patterns.index": VIEWER,
    # the JSON API
    "api.status.status": PUBLIC,  # the health check: {"status": "ok"} only, without a login
    "api.system.metrics_now": VIEWER,
    "api.system.run_metrics": VIEWER,
    "api.system.run_stability": VIEWER,
    "api.runs.run_list": VIEWER,
    "api.runs.run_get": VIEWER,
    "api.runs.run_items": VIEWER,
    "api.runs.run_item": VIEWER,
    "api.runs.run_logs": VIEWER,
    "api.runs.run_create": RUNNER,
    "api.runs.run_pause": RUNNER,
    "api.runs.run_resume": RUNNER,
    "api.runs.run_stop": RUNNER,
    "api.runs.run_retry_failed": RUNNER,
    "api.runs.run_retry_failed_answers": RUNNER,
    "api.runs.run_item_rejudge": RUNNER,
    "api.runs.run_item_retry_judge": RUNNER,
    "api.runs.run_delete": ADMIN,
    "api.exports.compare_runs": VIEWER,
    "api.exports.run_results": VIEWER,
    "api.exports.run_speed_figures": VIEWER,
    # A POST only for its JSON body: it streams the same files as the pages' downloads.
    "api.exports.export_run": VIEWER,
    "api.datasets.tasks_export": VIEWER,
    "api.datasets.tasks_import": RUNNER,
    "api.pairwise.leaderboard_get": VIEWER,
    "api.pairwise.leaderboard_details": VIEWER,
    "api.pairwise.pairwise_next": VIEWER,
    "api.pairwise.pairwise_judge_get": VIEWER,
    "api.pairwise.pairwise_votes_export": VIEWER,
    "api.pairwise.pairwise_vote": RATER,
    "api.pairwise.pairwise_vote_change": RATER,
    "api.pairwise.pairwise_vote_undo": RATER,
    "api.pairwise.pairwise_vote_history": VIEWER,
    "api.pairwise.pairwise_votes_import": RATER,
    "api.pairwise.pairwise_judge": RUNNER,
    "api.ratings.ratings_export": VIEWER,
    "api.ratings.judge_check_get": VIEWER,
    "api.ratings.rating_put": RATER,
    "api.ratings.rating_delete": RATER,
    "api.ratings.rating_history_get": VIEWER,
    "api.ratings.ratings_import": RATER,
    "api.ratings.judge_check_start": RUNNER,
    "api.providers.provider_list": VIEWER,
    "api.providers.provider_get": VIEWER,
    "api.providers.price_list": VIEWER,
    "api.providers.provider_models": RUNNER,
    "api.providers.provider_create": ADMIN,
    "api.providers.provider_update": ADMIN,
    "api.providers.provider_delete": ADMIN,
    "api.providers.provider_test_inference": ADMIN,
    "api.providers.provider_test_models": ADMIN,
    "api.providers.price_put": ADMIN,
    "api.providers.price_delete": ADMIN,
    "api.queue.queue_list": VIEWER,
    "api.queue.queue_cancel": RUNNER,
    "api.tasks.task_list": VIEWER,
    "api.tasks.task_get": VIEWER,
    "api.tasks.collection_list": VIEWER,
    "api.tasks.collection_get": VIEWER,
    "api.tasks.task_create": RUNNER,
    "api.tasks.task_update": RUNNER,
    "api.tasks.collection_create": RUNNER,
    "api.tasks.collection_update": RUNNER,
    "api.tasks.collection_add_tasks": RUNNER,
    "api.tasks.collection_remove_task": RUNNER,
    "api.tasks.task_delete": ADMIN,
    "api.tasks.collection_delete": ADMIN,
    "api.templates.template_list": VIEWER,
    "api.templates.template_get": VIEWER,
    "api.templates.schedule_list": VIEWER,
    "api.templates.template_create": RUNNER,
    "api.templates.template_update": RUNNER,
    "api.templates.template_run": RUNNER,
    "api.templates.template_trigger": RUNNER,
    "api.templates.template_delete": ADMIN,
    "api.trends.trend_series": VIEWER,
    "api.trends.summary": VIEWER,
    "api.trends.alert_list": VIEWER,
    "api.trends.alert_dismiss": RUNNER,
    "api.trends.baseline_pin": RUNNER,
    "api.trends.baseline_unpin": RUNNER,
}


def needed_role(endpoint):
    """The role an endpoint needs (PUBLIC for none); unknown endpoints need admin."""
    return ENDPOINT_ROLES.get(endpoint, ADMIN)


def actor():
    """How the audit log names who made this request ("local" when no login is needed)."""
    account = g.get("account")
    return account.actor if account is not None else audit.LOCAL


def can(role):
    """Whether this request's person may do what needs `role` (always, with no login)."""
    if not g.get("login_needed"):
        return True
    account = g.get("account")
    return account is not None and allows(account.role, role)


def _bearer():
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer":
        return None, False
    return token_principal(token.strip()), True


def _proxy(config):
    header = str(config.get("AUTH_PROXY_HEADER") or "").strip()
    if not header:
        return None
    name = (request.headers.get(header) or "").strip()
    networks = access.trusted_networks(config.get("TRUSTED_PROXIES"))
    if not name or not access.is_trusted(request.remote_addr, networks):
        return None  # a header from anyone but the proxy names no one
    account = Account.get_or_none(Account.name == name)
    create = str(config.get("AUTH_PROXY_CREATE") or "").strip().lower()
    if account is None and create in ROLES:
        account = add_proxy_account(name, create)
        audit.record(f"proxy:{name}", "account.add", f"account {name}", {"role": create})
    return principal(account, "proxy") if account is not None else None


def _session():
    name = session.get("account")
    if not name:
        return None
    return session_account(name, session.get("account_version"))


def wants_json():
    return request.path.startswith("/api/") or request.accept_mimetypes.best == "application/json"


def _unauthorized(message):
    if wants_json():
        reply = jsonify({"error": message})
        reply.status_code = 401
        reply.headers["WWW-Authenticate"] = 'Bearer realm="llmbench"'
        return reply
    # Back to the page after signing in; a form's POST cannot be repeated by a redirect.
    back = request.full_path.rstrip("?") if request.method == "GET" else None
    target = url_for("auth.login", next=back)
    if request.headers.get("HX-Request"):
        reply = current_app.response_class("", status=401)
        reply.headers["HX-Redirect"] = target
        return reply
    return redirect(target, code=303)


def _forbidden(account, needed):
    message = (
        f"This needs the {needed} role; you are signed in as {account.name} ({account.role}). "
        "Ask an admin to change your role."
    )
    if wants_json():
        return jsonify({"error": message, "needed": needed}), 403
    return render_template("errors/error.html", status=403, message=message, error=None), 403


def check_request():
    """Set g.account and refuse what the role does not allow (None: go on)."""
    g.account = None
    config = current_app.config
    g.login_needed = access.login_needed(config, fresh=request.method not in SAFE_METHODS)
    if not g.login_needed or request.endpoint is None:
        return None  # open (loopback, no account), or a 404/405 werkzeug answers itself
    account, bearer = _bearer()
    if bearer and account is None:
        return _unauthorized("The token is unknown or was revoked.")
    account = account or _proxy(config) or _session()
    g.account = account
    needed = needed_role(request.endpoint)
    if needed == PUBLIC:
        return None
    if account is None:
        return _unauthorized(
            "Sign in first: this server needs a login (a session, or Authorization: Bearer "
            "<token> from `llmbench tokens create`)."
        )
    if not allows(account.role, needed):
        return _forbidden(account, needed)
    return None


def init_app(app):
    """Check every request before its route; give templates `can` and `current_account`."""
    # The session cookie is not sent with another site's requests (forms still carry CSRF).
    if app.config.get("SESSION_COOKIE_SAMESITE") is None:
        app.config["SESSION_COOKIE_SAMESITE"] = "Lax"
    app.before_request(check_request)

    @app.context_processor
    def _access_globals():
        return {"can": can, "current_account": g.get("account")}
