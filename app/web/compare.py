"""Compare runs: two (?a=&b=), or a baseline against several checked in the run history
(?run=…&run=…[&base=…]); the per-model chart of score changes."""

from flask import Blueprint
from flask import Response
from flask import current_app
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for

from ..errors import NotFound
from ..errors import ValidationError
from ..exports.compare_markdown import compare_markdown
from ..results.compare import run_choices
from ..results.compare_chart import delta_chart
from ..results.compare_many import compare_baseline
from ..results.compare_many import delta_series
from ..results.compare_many import newer_default
from ..results.compare_many import pick_baseline
from ..results.compare_many import runs_in_order
from ..results.composite import settings_from
from ..results.kept_compare import PAGE_LIMIT
from ..results.kept_compare import kept_compare_runs
from ..runs.queries import get_run

bp = Blueprint("compare", __name__)


def _context(**values):
    context = {
        "choices": run_choices(),
        "a": "",
        "b": "",
        "result": None,
        "many": None,
        "picked": [],
        "base": None,
        "error": None,
        "hint": None,
        "b_default": None,
    }
    context.update(values)
    return context


def _many(picked, base_id):
    """A baseline against the other checked runs; two runs become the plain A/B view."""
    try:
        runs = runs_in_order(picked)
    except NotFound as exc:
        return render_template("compare/show.html", **_context(error=exc.message)), 404
    if len(runs) < 2:
        hint = "Check two or more runs to compare them (the oldest is the baseline)."
        return render_template("compare/show.html", **_context(hint=hint, picked=picked)), 200
    base, others = pick_baseline(runs, base_id)
    if len(others) == 1:
        return redirect(url_for("compare.show", a=base.run_id, b=others[0].run_id))
    many = compare_baseline(base, others, composite_settings=settings_from(current_app.config))
    context = _context(many=many, picked=[r.run_id for r in runs], base=base.run_id)
    return render_template("compare/show.html", **context), 200


@bp.get("/compare")
def show():
    """Compare two runs picked in the URL, or a baseline against several checked runs."""
    picked = [r.strip() for r in request.args.getlist("run") if r.strip()]
    base_id = (request.args.get("base") or "").strip() or None
    if picked:
        return _many(([base_id] if base_id else []) + picked, base_id)
    a_id = (request.args.get("a") or "").strip()
    b_id = (request.args.get("b") or "").strip()
    context = _context(a=a_id, b=b_id)
    status = 200
    if a_id and a_id == b_id:
        # Not an error: "Compare with…" fills in A, and the person picks B next.
        context["hint"] = f"A and B are both {a_id}: pick another run to compare it with."
    elif a_id and b_id:
        try:
            run_a, run_b = get_run(a_id), get_run(b_id)
            context["result"] = kept_compare_runs(
                run_a, run_b, limit=PAGE_LIMIT, composite_settings=settings_from(current_app.config)
            )
        except NotFound as exc:
            context["error"], status = exc.message, 404
        else:
            if (run_b.created_at, run_b.id) < (run_a.created_at, run_a.id):
                context["hint"] = (
                    f"B ({b_id}) is older than A ({a_id}): swap them to see the change over time."
                )
    elif a_id or b_id:
        if a_id:
            context["b_default"] = newer_default(a_id, context["choices"])
        context["hint"] = (
            f"Now pick run {'B (after)' if a_id else 'A (before)'} to compare with {a_id or b_id}."
        )
    return render_template("compare/show.html", **context), status


@bp.get("/compare/chart.svg")
def chart():
    """The score change per model against the baseline (?base=&run=…; ?size=narrow)."""
    base_id = (request.args.get("base") or "").strip()
    picked = [r.strip() for r in request.args.getlist("run") if r.strip() and r != base_id]
    runs = runs_in_order([base_id] + picked)
    if len(runs) < 2:
        raise ValidationError.field(
            "run", "name a baseline (?base=) and at least one other run (?run=) to chart"
        )
    base, others = pick_baseline(runs, base_id)
    comparisons = compare_baseline(base, others)["comparisons"]
    narrow = request.args.get("size") == "narrow"
    title = (
        f"Score change from {base.run_id} (points)"
        if len(others) == 1
        else "Score change vs the baseline (points)"
    )
    svg = delta_chart(delta_series(comparisons), narrow=narrow, title=title)
    response = Response(svg, mimetype="image/svg+xml")
    response.headers["Cache-Control"] = "no-cache"
    return response


@bp.get("/compare.md")
def markdown():
    """The A/B comparison (?a=&b=) as Markdown: the page's figures and lists, for a PR comment."""
    a_id = (request.args.get("a") or "").strip()
    b_id = (request.args.get("b") or "").strip()
    if not a_id or not b_id:
        raise ValidationError.field("a", "name two runs to compare: ?a=<run id>&b=<run id>")
    result = kept_compare_runs(
        get_run(a_id),
        get_run(b_id),
        limit=PAGE_LIMIT,
        composite_settings=settings_from(current_app.config),
    )
    return Response(compare_markdown(result), mimetype="text/markdown")
