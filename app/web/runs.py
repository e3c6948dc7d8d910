"""Run pages: history, the live run view with its polled fragments, and the run controls."""

import json

from flask import Blueprint
from flask import current_app
from flask import make_response
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for

from ..clock import utcnow
from ..db.models import ITEM_STATUSES
from ..errors import LlmbenchError
from ..results.composite import settings_from
from ..results.composite_figures import target_composites
from ..results.system import system_view
from ..runs.control import pause_run
from ..runs.control import resume_run
from ..runs.control import stop_run
from ..runs.history import RUN_STATES
from ..runs.history import history
from ..runs.history import judge_models
from ..runs.history import parse_date
from ..runs.live import budget_halt
from ..runs.live import items_mark
from ..runs.live import latest_items
from ..runs.live import latest_log_id
from ..runs.live import latest_marks
from ..runs.live import raised_budget
from ..runs.live import recent_logs
from ..runs.live import run_models
from ..runs.progress import progress as run_progress
from ..runs.queries import get_run
from ..runs.state import run_state
from .extensions import htmx

bp = Blueprint("runs", __name__, url_prefix="/runs")


def _int_arg(name, default=None):
    try:
        return int(request.args.get(name, ""))
    except ValueError:
        return default


def item_filters(run, with_targets=True):
    """The latest-items filter from the query string: (the run's targets, target id or None,
    status or None). Without `with_targets` (the poll) the targets are read only to check a
    model filter, and not returned."""
    target = _int_arg("model")
    targets = run_models(run) if with_targets or target is not None else []
    if target not in {t.id for t in targets}:
        target = None
    if not with_targets:
        targets = None
    status = request.args.get("status") or None
    if status not in ITEM_STATUSES:
        status = None
    return targets, target, status


def live_context(run):
    """Everything the live view and its fragments render."""
    targets, target, status = item_filters(run)
    logs = recent_logs(run)
    items = latest_items(run, target=target, status=status)
    return {
        "run": run,
        "p": run_progress(run),
        "budget_halt": budget_halt(run),
        "logs": logs,
        "items": items,
        # What the page shows now; the poll sends them back so unchanged regions are not resent.
        "log_mark": logs[0].id if logs else 0,
        "items_mark": items_mark(items, target, status),
        "targets": targets,
        "filter_model": target,
        "filter_status": status,
        "statuses": ITEM_STATUSES,
        "now": utcnow(),
    }


@bp.get("/")
def index():
    """Run history: filter by state, judge model and dates; sort; paginate (all in the URL)."""
    args = request.args
    filters = {
        "state": args.get("state") if args.get("state") in RUN_STATES else None,
        "judge": args.get("judge") or None,
        "date_from": parse_date(args.get("from")),
        "date_to": parse_date(args.get("to")),
    }
    result = history(sort=args.get("sort", "-created"), page=_int_arg("page", 1), **filters)
    return render_template(
        "runs/index.html",
        result=result,
        filters=filters,
        states=RUN_STATES,
        judges=judge_models(),
    )


@bp.get("/<run_id>")
def show(run_id):
    """Live run view: progress, controls, log and latest items; polls while running."""
    run = get_run(run_id)
    composites = target_composites(run, settings_from(current_app.config))
    return render_template(
        "runs/show.html",
        **{**live_context(run), **sysmetrics_context(run), "composites": composites},
    )


def sysmetrics_context(run):
    """What #run-sysmetrics renders: the charts, and whether it polls (running only)."""
    state = run_state(run)
    return {
        "run": run,
        "sys": system_view(run),
        "sys_polling": state == "running",
        "run_is_waiting": state == "queued",
    }


@bp.get("/<run_id>/system-metrics")
def system_metrics(run_id):
    """Fragment #run-sysmetrics: system metrics beside throughput; polls while running."""
    return render_template("runs/_sysmetrics.html", **sysmetrics_context(get_run(run_id)))


@bp.get("/<run_id>/progress")
def progress(run_id):
    """Fragment #run-progress (+ controls, log and latest items out of band): the poll target.

    The log and the latest items are sent only when they changed since the marks the page sent
    back, and read only then: each poll reads their marks (an id, 20 index entries)."""
    run = get_run(run_id)
    _, target, status = item_filters(run, with_targets=False)
    log_mark = latest_log_id(run)
    marks = latest_marks(run, target=target, status=status)
    context = {
        "run": run,
        "p": run_progress(run),
        "budget_halt": budget_halt(run),
        "log_mark": log_mark,
        "items_mark": items_mark(marks, target, status),
        "filter_model": target,
        "filter_status": status,
        "statuses": ITEM_STATUSES,
        "now": utcnow(),
    }
    send_log = request.args.get("log_mark") != str(log_mark)
    send_items = request.args.get("items_mark") != context["items_mark"]
    if send_log:
        context["logs"] = recent_logs(run)
    if send_items:
        context["items"] = latest_items(run, target=target, status=status)
    return render_template("runs/_poll.html", send_log=send_log, send_items=send_items, **context)


@bp.get("/<run_id>/log")
def log(run_id):
    """Fragment #run-log: the latest run log lines."""
    run = get_run(run_id)
    return render_template("runs/_log.html", run=run, logs=recent_logs(run))


@bp.get("/<run_id>/events")
def events(run_id):
    """Fragment #raw-events: the latest run log entries as raw JSON."""
    run = get_run(run_id)
    return render_template("runs/_events.html", run=run, logs=recent_logs(run, 20))


@bp.get("/<run_id>/items")
def items(run_id):
    """Fragment #latest-items, filtered by ?model=<target id>&status=; the page URL follows."""
    run = get_run(run_id)
    _, target, status = item_filters(run)
    # Only what _latest_items.html renders: no progress, ETA or log for a filter change.
    context = {
        "items": latest_items(run, target=target, status=status),
        "filter_model": target,
        "filter_status": status,
        "now": utcnow(),
    }
    response = make_response(render_template("runs/_latest_items.html", **context))
    # Keep the filter bookmarkable: the address bar shows the page URL, not the fragment's.
    response.headers["HX-Replace-Url"] = url_for(
        "runs.show", run_id=run.run_id, model=target, status=status
    )
    return response


def _resume(run_id):
    """Resume, with the raised budget when one was typed (a budget-halted run needs one)."""
    budget = raised_budget(get_run(run_id), request.form.get("maxBudgetUsd"))
    return resume_run(run_id, max_budget_usd=budget)


def _control(run_id, action):
    """Apply pause/stop/resume: htmx gets the controls (+ progress), a plain form a redirect."""
    apply = {"pause": pause_run, "stop": stop_run, "resume": _resume}[action]
    if not htmx:
        apply(run_id)  # errors become the 404/409 page at the one edge
        return redirect(url_for("runs.show", run_id=run_id), code=303)
    error = None
    try:
        apply(run_id)
    except LlmbenchError as exc:
        # htmx swaps only 2xx: show why in the controls instead of failing silently.
        error = exc.message
    run = get_run(run_id)
    response = make_response(
        render_template("runs/_control_result.html", control_error=error, **live_context(run))
    )
    response.headers["Vary"] = "HX-Request"
    return response


@bp.post("/<run_id>/pause")
def pause(run_id):
    """Pause: the item in flight finishes, then the run halts."""
    return _control(run_id, "pause")


@bp.post("/<run_id>/stop")
def stop(run_id):
    """Stop now: the request in flight is abandoned; its item stays claimable."""
    return _control(run_id, "stop")


@bp.post("/<run_id>/resume")
def resume(run_id):
    """Resume / continue a paused, stopped or crashed run."""
    return _control(run_id, "resume")


@bp.app_template_filter("json_line")
def json_line(value):
    """Compact one-line JSON for reading (autoescaping makes it HTML-safe)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


@bp.app_template_filter("duration")
def duration(seconds):
    """Seconds as '1h 02m', '3m 05s' or '12s'."""
    seconds = int(round(seconds or 0))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


@bp.app_template_filter("duration_ms")
def duration_ms(ms):
    """Milliseconds as '850 ms' or '6.1 s'."""
    if ms is None:
        return "—"
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"
