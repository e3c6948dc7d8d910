"""The web layer: extensions, blueprints and the one place errors become HTTP responses."""

from flask import abort
from flask import g
from flask import jsonify
from flask import render_template
from flask import request
from flask_wtf.csrf import CSRFError
from peewee import OperationalError
from werkzeug.exceptions import HTTPException
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.local import LocalProxy

from ..api import AREAS as api_areas
from ..api import bp as api_bp
from ..db.connection import storage_full
from ..errors import LlmbenchError
from ..errors import StorageFull
from ..results import kept
from ..runs.queries import active_run
from . import ab
from . import access
from . import accounts
from . import alerts
from . import audit
from . import audit_trail
from . import auth
from . import collections
from . import compare
from . import dashboard
from . import datasets
from . import evaluate
from . import labels
from . import leaderboard
from . import masking
from . import memory
from . import patterns
from . import providers
from . import queue
from . import reports
from . import results
from . import runs
from . import security
from . import settings
from . import tasks
from . import templates
from . import trends
from .extensions import csrf
from .extensions import htmx
from .hosts import allowed_hosts
from .hosts import host_name


def _active_run():
    """The running or paused run (or None), looked up once per request."""
    if "_active_run" not in g:
        g._active_run = active_run()
    return g._active_run


def init_app(app):
    """Bind extensions, register blueprints and error handlers."""
    htmx.init_app(app)
    csrf.init_app(app)
    security.init_app(app)
    masking.init_app(app)
    auth.init_app(app)
    memory.init_app(app)

    # The JSON API takes application/json only, which a cross-site form cannot send
    # without a CORS preflight we never grant; CSRF tokens guard the HTML forms.
    csrf.exempt(api_bp)
    for area in api_areas:  # flask-wtf looks the exemption up by the nested blueprint
        csrf.exempt(area.bp)
    app.register_blueprint(api_bp)
    for module in (dashboard, providers, tasks, collections, settings, datasets, runs, results):
        app.register_blueprint(module.bp)
    for module in (templates, trends, alerts, queue, evaluate, ab, leaderboard, reports, labels):
        app.register_blueprint(module.bp)
    for module in (compare, auth, audit, accounts):
        app.register_blueprint(module.bp)
    if app.debug or app.config.get("TESTING"):
        app.register_blueprint(patterns.bp)

    hosts = allowed_hosts(app.config)
    limit_mb = float(app.config.get("MAX_UPLOAD_MB") or 64)
    app.config["MAX_CONTENT_LENGTH"] = int(limit_mb * 1024 * 1024)
    # A dataset typed into a form field is as big as an upload of it (werkzeug's default for
    # form fields is 500 kB).
    app.config["MAX_FORM_MEMORY_SIZE"] = int(limit_mb * 1024 * 1024)

    @app.before_request
    def _known_host():
        # DNS rebinding: a page on evil.example resolved to 127.0.0.1 reaches us with its own
        # name in Host (and a matching Origin, so the API's same-origin check passes).
        if hosts is not None and host_name(request.host) not in hosts:
            abort(
                400,
                description=(
                    f"This server does not answer to the host {request.host!r}; open it as "
                    "http://127.0.0.1, or add the name to LLMBENCH_ALLOWED_HOSTS."
                ),
            )

    # After the host check: a request to an unknown host is refused before anyone is looked up.
    access.init_app(app)
    audit_trail.init_app(app)

    @app.before_request
    def _one_stamp_per_run():
        # A GET changes no run: each run's kept-figures stamp is read once for the whole page,
        # not once per figure it shows (results/kept.py).
        if request.method in ("GET", "HEAD"):
            g._kept_stamps = kept.one_stamp_per_run()

    @app.teardown_request
    def _stamps_as_read(exc):
        token = g.pop("_kept_stamps", None)
        if token is not None:
            kept.stamps_as_read(token)

    @app.context_processor
    def _globals():
        # Lazy: only a template that reads active_run queries it, at most once per request.
        return {"active_run": LocalProxy(_active_run)}

    def wants_json():
        return (
            request.path.startswith("/api/") or request.accept_mimetypes.best == "application/json"
        )

    @app.errorhandler(LlmbenchError)
    def _domain_error(exc):
        if wants_json():
            return jsonify(exc.to_dict()), exc.status
        return render_template("errors/error.html", error=exc, status=exc.status), exc.status

    @app.errorhandler(OperationalError)
    def _database_error(exc):
        if not storage_full(exc):
            raise exc  # a fault of ours: the 500 it is
        return _domain_error(StorageFull())

    @app.errorhandler(CSRFError)
    def _csrf_error(exc):
        message = "The form expired or came from another site; reload the page and try again."
        if wants_json():
            return jsonify({"error": message}), 400
        return render_template("errors/error.html", error=exc, message=message, status=400), 400

    @app.errorhandler(RequestEntityTooLarge)
    def _too_large(exc):
        message = (
            f"The upload is larger than {limit_mb:g} MiB, the most this server takes "
            "(LLMBENCH_MAX_UPLOAD_MB); split the file, or raise the limit."
        )
        if wants_json():
            return jsonify({"error": message, "limitBytes": int(limit_mb * 1024 * 1024)}), 413
        return render_template("errors/error.html", error=exc, message=message, status=413), 413

    @app.errorhandler(HTTPException)
    def _http_error(exc):
        if wants_json():
            return jsonify({"error": exc.description}), exc.code
        return render_template(
            "errors/error.html", error=exc, message=exc.description, status=exc.code
        ), exc.code
