"""The leaderboard page: Bradley–Terry ratings with intervals, the win-rate matrix, n everywhere."""

import base64

from flask import Blueprint
from flask import render_template
from flask import request

from ..ratings.judge_check import KAPPA_WARNING
from ..ratings.kept import kept_leaderboard_page
from ..ratings.leaderboard import SOURCES
from ..ratings.leaderboard import one_person
from ..ratings.leaderboard import parse_runs
from ..ratings.leaderboard import parse_source
from ..ratings.leaderboard import recent_runs
from ..ratings.people import display_name

bp = Blueprint("leaderboard", __name__)


def svg_data_url(svg):
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


@bp.get("/leaderboard")
def index():
    """Pick runs and a vote source (the URL keeps them): people and judges, people pooled,
    judges, or one person; the board for the votes in scope, the judges' agreement with people
    (that person's ratings, or everyone's) and people's agreement with each other."""
    picked = request.args.getlist("runs")
    runs_text = ",".join(v for v in picked if v)
    source = parse_source(request.args.get("source"))
    board = None
    chart = None
    agreement = []
    between, raters = None, []
    if runs_text:
        runs = parse_runs(runs_text)
        rater = source if one_person(source) else None
        page = kept_leaderboard_page(runs, source, rater)
        board, agreement, between = page["board"], page["agreement"], page["between"]
        raters = [(p, display_name(p)) for p in page["people"] if one_person(p)]
        if page["charts"]:
            # Both layouts as data: images (kept as drawn); CSS shows the one for the screen.
            # As images, pygal's own <style> applies: inlined, the CSP would refuse it.
            chart = {size: svg_data_url(svg) for size, svg in page["charts"].items()}
    return render_template(
        "leaderboard/index.html",
        board=board,
        chart=chart,
        picked=set(runs_text.split(",")) if runs_text else set(),
        source=source,
        sources=SOURCES,
        runs=recent_runs(),
        agreement=agreement,
        between=between,
        raters=raters,
        kappa_warning=KAPPA_WARNING,
    )
