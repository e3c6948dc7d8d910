"""A run's report (KPIs per target, charts, CSV) and its judge check."""

from flask import Blueprint
from flask import Response
from flask import abort
from flask import current_app
from flask import flash
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for

from ..api.replies import attachment
from ..errors import Conflict
from ..errors import ValidationError
from ..exports import files
from ..ratings import charts
from ..ratings import judge_check
from ..ratings.between_people import people
from ..ratings.kept import kept_report_chart
from ..ratings.kept import kept_run_report
from ..ratings.leaderboard import SOURCES
from ..ratings.leaderboard import one_person
from ..ratings.leaderboard import parse_source
from ..ratings.people import display_name
from ..ratings.people import is_person
from ..results.composite import settings_from
from ..results.composite_figures import target_composites
from ..runs.queries import get_run

bp = Blueprint("reports", __name__)


@bp.get("/runs/<run_id>/report")
def show(run_id):
    """KPI cards and a table per target (avg rating, win rate, cost per 1000 tasks, latency,
    tokens, each with its n; the composite score with its formula) and the four charts. The
    win rate counts people's and judges' votes, people's, judges' or one person's (?source=)."""
    run = get_run(run_id)
    source = parse_source(request.args.get("source"))
    report = kept_run_report(run, source)
    return render_template(
        "reports/show.html",
        run=run,
        report=report,
        priced=any(t["cost_per_1k_tasks"] is not None for t in report["targets"]),
        source=source,
        sources=SOURCES,
        raters=[(p, display_name(p)) for p in people([run]) if one_person(p)],
        composites=target_composites(run, settings_from(current_app.config)),
        chart_names=charts.CHARTS,
    )


@bp.get("/runs/<run_id>/report/<name>.svg")
def chart(run_id, name):
    """One report chart as SVG (`?size=narrow` for phone widths)."""
    if name not in charts.CHARTS:
        abort(404)
    run = get_run(run_id)
    svg = kept_report_chart(run, name, narrow=request.args.get("size") == "narrow")
    response = Response(svg, mimetype="image/svg+xml")
    response.headers["Cache-Control"] = "no-cache"
    return response


@bp.get("/runs/<run_id>/view/report.html")
def view_html(run_id):
    """report.html shown in the browser (the same file as the download, inline)."""
    settings = settings_from(current_app.config)
    chunks, filename, content_type = files.download(get_run(run_id), "report_html", settings)
    response = attachment(chunks, filename, content_type)
    response.headers["Content-Disposition"] = f'inline; filename="{filename}"'
    return response


@bp.get("/runs/<run_id>/report.csv")
def export_csv(run_id):
    """The report's table as CSV (one line per target)."""
    settings = settings_from(current_app.config)
    return attachment(*files.download(get_run(run_id), "report_csv", settings))


@bp.post("/runs/<run_id>/judge-check")
def judge_check_start(run_id):
    """Have the run's judge score the tasks' own references (a finished run runs again)."""
    try:
        job = judge_check.start(run_id)
    except (ValidationError, Conflict) as exc:
        flash(exc.message, "error")
    else:
        flash(
            f"The judge check is queued: {job.calls.count()} reference answers to score.", "success"
        )
    return redirect(url_for("results.show", run_id=run_id) + "#judge-check")


@bp.get("/runs/<run_id>/judge-check")
def judge_check_fragment(run_id):
    """Fragment #judge-check: the reference check and the agreement with people, everyone's
    ratings pooled or one person's (?rater=human:<name>); polls while the check runs."""
    run = get_run(run_id)
    rater = request.args.get("rater") or None
    if rater is not None and not is_person(rater):
        raise ValidationError.field("rater", 'must be one person: "human" or "human:<name>"')
    return render_template(
        "results/_judge_check.html",
        run=run,
        check=judge_check.judge_check(run_id, rater),
        raters=[(p, display_name(p)) for p in people([run]) if one_person(p)],
    )
