"""The leaderboard page: Bradley–Terry ratings with intervals, the win-rate matrix, n everywhere."""

from flask import Blueprint
from flask import render_template
from flask import request
from markupsafe import Markup

from ..ratings.charts import leaderboard_chart
from ..ratings.leaderboard import SOURCES
from ..ratings.leaderboard import leaderboard
from ..ratings.leaderboard import parse_runs
from ..ratings.leaderboard import parse_source
from ..ratings.leaderboard import recent_runs

bp = Blueprint("leaderboard", __name__)


@bp.get("/leaderboard")
def index():
    """Pick runs and a vote source (the URL keeps them); the board for the votes in scope."""
    picked = request.args.getlist("runs")
    runs_text = ",".join(v for v in picked if v)
    source = parse_source(request.args.get("source"))
    board = None
    chart = None
    if runs_text:
        board = leaderboard(parse_runs(runs_text), source)
        # pygal escapes every label it draws; the SVG is ours, so it is safe to inline.
        chart = Markup(leaderboard_chart(board["rows"])) if board["votes"] else None
    return render_template(
        "leaderboard/index.html",
        board=board,
        chart=chart,
        picked=set(runs_text.split(",")) if runs_text else set(),
        source=source,
        sources=SOURCES,
        runs=recent_runs(),
    )
