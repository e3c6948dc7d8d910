"""JSON API: runs: start, list, control, items, logs, re-judge, delete."""

from flask import Blueprint
from flask import current_app
from flask import jsonify
from flask import request
from flask import url_for

from ..errors import ValidationError
from ..ratings.store import ratings_for
from ..results.composite import settings_from
from ..results.composite_figures import composites_dict
from ..runs.control import delete_run
from ..runs.control import pause_run
from ..runs.control import resume_run
from ..runs.control import stop_run
from ..runs.dto import item_to_dict
from ..runs.dto import log_to_dict
from ..runs.dto import run_summary
from ..runs.lifecycle import create_run
from ..runs.queries import get_item
from ..runs.queries import get_run
from ..runs.queries import list_items
from ..runs.queries import list_logs
from ..runs.queries import list_runs
from ..runs.queries import summaries
from ..runs.retries import rejudge_item
from ..runs.retries import retry_failed_answers
from ..runs.retries import retry_failed_judgements
from ..runs.retries import retry_judge
from .ratings import me
from .replies import created

bp = Blueprint("runs", __name__)


def _body(optional=False):
    data = request.get_json(silent=True) if request.data else None
    if data is None:
        if optional and not request.data:
            return {}
        raise ValidationError.field(
            "body", "send a JSON object with Content-Type: application/json"
        )
    if not isinstance(data, dict):
        raise ValidationError.field("body", "the body must be a JSON object")
    return data


def _args(*allowed):
    """The query string, or a 400 naming a parameter this endpoint does not know."""
    unknown = sorted(set(request.args) - set(allowed))
    if unknown:
        raise ValidationError.field(
            unknown[0], f"unknown query parameter; use {', '.join(allowed)}"
        )
    return request.args


@bp.post("/runs")
def run_create():
    """Create a run and start it (201, Location of the run); with "queue": true, 202 and the
    run queued while another is active (without it: 409 naming the active run)."""
    body = _body()
    queue = body.pop("queue", False)
    if not isinstance(queue, bool):
        raise ValidationError.field("queue", "must be true or false")
    run = create_run(body, source="api", queue=queue)
    location = url_for("api.runs.run_get", run_id=run.run_id)
    if queue:
        response = jsonify({**run_summary(run), "runId": run.run_id})
        response.headers["Location"] = location
        return response, 202
    return created(run_summary(run), location)


@bp.get("/runs")
def run_list():
    """Runs newest first; ?status=PENDING|FINISHED, ?state=running|paused|stopped|finished,
    ?limit=&offset= for a page (the dashboard client asks for ?limit=1)."""
    args = _args("status", "state", "limit", "offset")
    found = list_runs(
        status=args.get("status"),
        state=args.get("state"),
        limit=args.get("limit"),
        offset=args.get("offset"),
    )
    return jsonify(summaries(found))


@bp.get("/runs/<run_id>")
def run_get(run_id):
    """One run: counts per status, phase, state, targets, collections, progress and the
    composite score per target (with its formula) and the best."""
    run = get_run(run_id)
    return jsonify({**run_summary(run), **composites_dict(run, settings_from(current_app.config))})


@bp.post("/runs/<run_id>/pause")
def run_pause(run_id):
    """Pause: the item in flight finishes, then the run halts."""
    return jsonify(run_summary(pause_run(run_id)))


@bp.post("/runs/<run_id>/stop")
def run_stop(run_id):
    """Stop now: the request in flight is abandoned, its item stays claimable."""
    return jsonify(run_summary(stop_run(run_id)))


@bp.post("/runs/<run_id>/resume")
def run_resume(run_id):
    """Continue a paused, stopped or interrupted run; optional {"maxBudgetUsd": n}."""
    budget = _body(optional=True).get("maxBudgetUsd")
    budget = None if budget in (None, "") else budget  # resume_run checks it (> 0)
    return jsonify(run_summary(resume_run(run_id, max_budget_usd=budget)))


@bp.get("/runs/<run_id>/items")
def run_items(run_id):
    """A page of items: ?status=&model=&target=&page=&perPage=, or ?after=<item id> (the
    reply's nextAfter) to continue after an item at any depth."""
    args = _args("status", "model", "target", "page", "perPage", "after")
    found = list_items(
        run_id,
        status=args.get("status"),
        model=args.get("model"),
        target_id=args.get("target"),
        page=args.get("page", 1),
        per_page=args.get("perPage", 50),
        after=args.get("after"),
    )
    # The raw request and response bodies stay out of the list (an answer may be a megabyte):
    # each item's own URL has them.
    rated = ratings_for([i.id for i in found["items"]], me())
    found["items"] = [
        {
            **item_to_dict(i, raw=False, human_rating=rated.get(i.id)),
            "url": url_for("api.runs.run_item", run_id=run_id, item_id=i.id),
        }
        for i in found["items"]
    ]
    return jsonify(found)


@bp.get("/runs/<run_id>/items/<int:item_id>")
def run_item(run_id, item_id):
    """One item with its raw request and response bodies (the judge's too)."""
    return jsonify(item_to_dict(get_item(run_id, item_id)))


@bp.get("/runs/<run_id>/logs")
def run_logs(run_id):
    """Run log lines oldest first: ?since=<log id or ISO time>&limit=."""
    args = _args("since", "limit")
    lines = list_logs(run_id, since=args.get("since"), limit=args.get("limit", 200))
    return jsonify(
        {"logs": [log_to_dict(e) for e in lines], "lastId": lines[-1].id if lines else None}
    )


@bp.post("/runs/<run_id>/items/<int:item_id>/retry-judge")
def run_item_retry_judge(run_id, item_id):
    """Queue one item waiting for the judge, or whose judgement failed, for judging again
    (409 for a completed item: re-judge it instead)."""
    item = retry_judge(run_id, item_id)
    return jsonify(item_to_dict(item, human_rating=ratings_for([item.id], me()).get(item.id)))


@bp.post("/runs/<run_id>/items/<int:item_id>/rejudge")
def run_item_rejudge(run_id, item_id):
    """Judge a completed item again; its judgement is kept in the item's history."""
    return jsonify(item_to_dict(rejudge_item(run_id, item_id)))


@bp.post("/runs/<run_id>/retry-failed")
def run_retry_failed(run_id):
    """Queue every item whose judgement failed for judging again."""
    count = retry_failed_judgements(run_id)
    return jsonify({"queued": count, "run": run_summary(get_run(run_id))})


@bp.post("/runs/<run_id>/retry-failed-answers")
def run_retry_failed_answers(run_id):
    """Ask again every item whose answer or warm-up failed (a finished run runs again)."""
    count = retry_failed_answers(run_id)
    return jsonify({"queued": count, "run": run_summary(get_run(run_id))})


@bp.delete("/runs/<run_id>")
def run_delete(run_id):
    """Delete a run with its items and log (409 while running or paused)."""
    delete_run(run_id)
    return "", 204
