"""report.html: self-contained (inline CSS and SVG charts; no scripts, no external files)."""

import threading

from jinja2 import Environment
from jinja2 import FileSystemLoader
from jinja2 import select_autoescape
from markupsafe import Markup

from ..clock import isoformat
from ..clock import utc_text
from ..clock import utcnow
from ..config import resource_dir
from ..db.models import RunCollection
from ..results.averages import breakdown
from ..results.averages import model_averages
from ..results.averages import targets_from_averages
from ..results.check_figures import target_check_figures
from ..results.composite import DEFAULT_SETTINGS
from ..results.composite import composite_rule
from ..results.composite_figures import target_composites
from ..results.figures import target_figures
from ..results.goodput import run_goodput
from ..results.run_charts import CHARTS
from ..results.run_charts import run_chart
from ..results.run_speed_charts import speed_figures
from ..results.speed import run_speed
from ..runs.state import run_state
from ..runs.state import state_label
from ..runs.state import state_words
from ..sysmetrics.store import run_peaks
from .ratings_html import report_html_section
from .rows import detail_rows
from .rows import error_text
from .rows import tool_calls_text

DETAIL_LIMIT = 2000
CHART_CAPTIONS = (
    ("score", "Average score per model with its 95 % bootstrap confidence interval."),
    ("speed", "Decode speed per answer (tokens/s), averaged per model."),
    ("latency", "Answer time per model: minimum, quartiles and maximum."),
    ("category", "Average score per category per model."),
)
_env = None
_env_lock = threading.Lock()


def environment():
    """The Jinja environment for exports (autoescaped; the same templates folder as the web)."""
    global _env
    with _env_lock:
        if _env is None:
            _env = Environment(
                loader=FileSystemLoader(str(resource_dir("templates"))),
                autoescape=select_autoescape(["html"]),
            )
        return _env


def report_html_chunks(run, detail_limit=DETAIL_LIMIT, composite_settings=DEFAULT_SETTINGS):
    """The report as a stream of HTML text chunks (the detail rows come from one cursor);
    composite_settings: the composite score's weights and time curve (the app's config)."""
    averages = model_averages(run)
    targets = targets_from_averages(averages)
    by_category = breakdown(run, "category", targets=targets)
    # The narrow layout: large labels that stay readable in a two-column grid and on phones.
    svgs = {
        name: run_chart(run, name, narrow=True, averages=averages, by_category=by_category)
        for name in CHARTS
    }
    state = run_state(run)
    completed = sum(r["completed"] for r in averages)
    failed = sum(r["failed"] for r in averages)
    speed = run_speed(run, averages)
    context = {
        "run": run,
        "state": state,
        "state_label": state_label(state, completed, failed),
        "state_words": state_words(state, run.phase, completed, failed),
        "averages": averages,
        "figures": target_figures(run),
        "speed": speed,
        # Drawn by us or by pygal (which escapes every label): safe to inline.
        "speed_charts": [
            (name, caption, Markup(svg))
            for name, caption, svg in speed_figures(
                run, narrow=True, averages=averages, speed=speed
            )
        ],
        "goodput": run_goodput(run, speed=speed),
        "composites": target_composites(run, composite_settings, averages),
        "composite_rule": composite_rule(composite_settings),
        "checks": target_check_figures(run),
        "tool_calls_text": tool_calls_text,
        "collections": [
            c.collection_name for c in RunCollection.select().where(RunCollection.run == run)
        ],
        # pygal escapes every label it draws; the SVG is ours, so it is safe to inline.
        "charts": {name: Markup(svg) for name, svg in svgs.items()},
        "chart_captions": CHART_CAPTIONS,
        "by_category": by_category,
        "by_difficulty": breakdown(run, "difficulty", targets=targets),
        "rows": detail_rows(run, limit=detail_limit),
        "total_items": sum(r["item_count"] for r in averages),
        "detail_limit": detail_limit,
        "iso": isoformat,
        "utc": utc_text,
        "error_text": error_text,
        "generated_at": utcnow(),
        "peaks": run_peaks(run),
        "ratings": report_html_section(run),
    }
    return environment().get_template("results/report.html").generate(**context)


def report_html(run, detail_limit=DETAIL_LIMIT, composite_settings=DEFAULT_SETTINGS):
    """The whole report as one string."""
    chunks = report_html_chunks(run, detail_limit, composite_settings)
    return "".join(chunks)
