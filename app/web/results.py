"""Web pages: a run's results (averages, charts, breakdown, table), items, exports, compare."""

import json
from contextlib import contextmanager
from urllib.parse import urlencode
from urllib.parse import urlsplit

from flask import Blueprint
from flask import Response
from flask import abort
from flask import current_app
from flask import flash
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for
from markupsafe import Markup

from ..api.replies import attachment
from ..clock import isoformat
from ..clock import utc_text
from ..errors import LlmbenchError
from ..errors import ValidationError
from ..exports import files
from ..ratings.kept import kept_judge_check
from ..results import run_charts
from ..results import run_speed_charts
from ..results.averages import AVERAGE_SORTS
from ..results.averages import breakdown
from ..results.averages import get_item
from ..results.averages import model_averages
from ..results.averages import targets_from_averages
from ..results.composite import settings_from
from ..results.composite_figures import target_composites
from ..results.kept_runs import kept_goodput
from ..results.speed import run_speed
from ..results.stability import has_repeats
from ..results.stability import kept_stability
from ..results.system import system_view
from ..results.table import DEFAULT_PER_PAGE
from ..results.table import DEFAULT_SORT
from ..results.table import PER_PAGE_CHOICES
from ..results.table import STATUS_FILTERS
from ..results.table import category_total
from ..results.table import parse_table_args
from ..results.table import results_page
from ..results.table import retryable_answers
from ..runs import retries
from ..runs.control import delete_run
from ..runs.item_speed import columns_of
from ..runs.item_speed import item_speed
from ..runs.queries import get_run
from ..runs.retries import retry_failed_answers
from ..runs.retries import retry_failed_judgements
from ..runs.state import run_state
from ..runs.state import state_label
from .extensions import htmx

bp = Blueprint("results", __name__)

TABLE_DEFAULTS = {
    "sort": DEFAULT_SORT,
    "dir": "asc",
    "page": 1,
    "per_page": DEFAULT_PER_PAGE,
    "after": None,
    "before": None,
}
AVERAGE_DEFAULTS = {"avg_sort": "position", "avg_dir": "asc"}
FILTER_KEYS = ("model", "status", "category", "difficulty", "min_score", "max_score")
# What werkzeug leaves unquoted in a URL's query (werkzeug.urls._urlencode), so Links writes
# the same URLs as url_for.
QUERY_SAFE = "!$'()*,/:;?@"
# An item id no run has, put in an item's URL to find where the id goes (Links.item).
_ITEM_MARK = 9_876_543_210_123
# First click on these headers sorts high to low.
DESC_FIRST = {"score", "tps", "tokens", "completed", "failed"}


RAW_CHARS = 200_000


@bp.app_template_filter("utc")
def utc(value, seconds=False):
    """A stored time as every page prints it: UTC, the zone said ("2026-01-02 09:15 UTC")."""
    return utc_text(value, seconds)


@bp.app_template_filter("iso")
def iso(value):
    """A stored time for a <time datetime>: ISO 8601 with a Z."""
    return isoformat(value)


_NO_NUMBER = Markup('<span class="muted">–</span>')


@bp.app_template_filter("number")
def number(value, digits=1):
    """A number as the `num` macro of _macros.html writes it ("1,234.5"; none: a muted "–"),
    for the tables that write hundreds of them (the results table: 300 a page): a filter
    costs a fraction of a macro call."""
    if value is None:
        return _NO_NUMBER
    return f"{value:,.{digits}f}"


@bp.app_template_filter("pretty_json")
def pretty_json(text):
    """Raw JSON text (or a JSON value) indented for reading; anything else as it is (long text
    shortened)."""
    try:
        value = text if isinstance(text, dict | list) else json.loads(text)
        text = json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        pass
    if len(text) > RAW_CHARS:
        return text[:RAW_CHARS] + f"\n… ({len(text) - RAW_CHARS} more characters)"
    return text


def _state(args):
    """The page's whole state from the query string, whitelisted (400 names a bad parameter)."""
    table = parse_table_args(args)
    avg_sort = (args.get("avg_sort") or "position").strip()
    avg_dir = (args.get("avg_dir") or "asc").strip().lower()
    if avg_sort not in AVERAGE_SORTS:
        raise ValidationError.field("avg_sort", f"must be one of {', '.join(AVERAGE_SORTS)}")
    if avg_dir not in ("asc", "desc"):
        raise ValidationError.field("avg_dir", "must be asc or desc")
    state = {
        "sort": table["sort"],
        "dir": table["dir"],
        "page": table["page"],
        "per_page": table["per_page"],
        "after": table.get("after"),
        "before": table.get("before"),
        "avg_sort": avg_sort,
        "avg_dir": avg_dir,
    }
    for key in FILTER_KEYS:
        value = table["filters"].get(key)
        state[key] = "" if value is None else (f"{value:g}" if isinstance(value, float) else value)
    return state, table["filters"]


class Links:
    """URLs for the page's state with some changes; defaults and empty values are left out."""

    def __init__(self, run_id, state):
        self.run_id = run_id
        self.state = state
        self._item_urls = {}
        self._paths = {}

    def item(self, item_id, endpoint="results.item"):
        """An item's URL at `endpoint` (its page, its retry): url_for once per endpoint, the
        id put in its place after. A table page has 50–200 rows, and url_for for each row's
        links was a fifth of the page's CPU."""
        parts = self._item_urls.get(endpoint)
        if parts is None:
            # The int converter writes the id as it is; it comes after the run id in the path,
            # so its last place splits the URL (whatever the run id holds).
            marked = url_for(endpoint, run_id=self.run_id, item_id=_ITEM_MARK)
            parts = self._item_urls[endpoint] = marked.rsplit(str(_ITEM_MARK), 1)
        return f"{parts[0]}{int(item_id)}{parts[1]}"

    def _params(self, keys, changes):
        merged = {**self.state, **changes}
        defaults = {**TABLE_DEFAULTS, **AVERAGE_DEFAULTS}
        return {
            k: merged[k]
            for k in keys
            if merged.get(k) not in (None, "") and merged.get(k) != defaults.get(k)
        }

    def _url(self, endpoint, params):
        """url_for(endpoint, run_id=…, **params): the path from url_for once per endpoint, the
        query encoded as werkzeug encodes it. The page has some fifty of these links (headers,
        pager, filters), and url_for was most of their cost."""
        path = self._paths.get(endpoint)
        if path is None:
            path = self._paths[endpoint] = url_for(endpoint, run_id=self.run_id)
        query = urlencode(params, safe=QUERY_SAFE)
        return f"{path}?{query}" if query else path

    def page(self, **changes):
        """The full, bookmarkable results page."""
        keys = (*TABLE_DEFAULTS, *FILTER_KEYS, *AVERAGE_DEFAULTS)
        return self._url("results.show", self._params(keys, changes))

    def table(self, **changes):
        """The table fragment (the averages' state comes along through hx-include)."""
        keys = (*TABLE_DEFAULTS, *FILTER_KEYS)
        return self._url("results.table", self._params(keys, changes))

    def averages(self, **changes):
        """The averages fragment (the table's state comes along through hx-include)."""
        return self._url("results.averages", self._params(tuple(AVERAGE_DEFAULTS), changes))

    def sort(self, column, prefix=""):
        """Changes for clicking a sortable header: toggle if sorted by it, else its first way."""
        key, dir_key = (f"{prefix}sort", f"{prefix}dir")
        if self.state[key] == column:
            direction = "asc" if self.state[dir_key] == "desc" else "desc"
        else:
            direction = "desc" if column in DESC_FIRST else "asc"
        changes = {key: column, dir_key: direction}
        if not prefix:
            changes.update(page=1, after=None, before=None)
        return changes

    def pager(self, page, to):
        """Changes for the pager's links: Next and Previous continue from the page's last or
        first item (an index seek at any depth); First and Last count from their end."""
        if to == "next":
            return {"page": page.page + 1, "after": page.after, "before": None}
        if to == "prev" and page.page > 2:
            return {"page": page.page - 1, "after": None, "before": page.before}
        return {"page": 1 if to in ("prev", "first") else page.pages, "after": None, "before": None}

    def aria_sort(self, column, prefix=""):
        if self.state[f"{prefix}sort"] != column:
            return None
        return "descending" if self.state[f"{prefix}dir"] == "desc" else "ascending"


def _averages_context(run, state):
    averages = model_averages(run, state["avg_sort"], state["avg_dir"])
    return {"run": run, "averages": averages, "links": Links(run.run_id, state)}


def _table_context(run, state, filters, total=None):
    page = results_page(
        run,
        state["sort"],
        filters,
        state["page"],
        state["per_page"],
        direction=state["dir"],
        after=state["after"],
        before=state["before"],
        total=total,
    )
    return {
        "run": run,
        "page": page,
        "links": Links(run.run_id, state),
        "table_state": state,
        "filter_keys": FILTER_KEYS,
    }


def _fragment(template, context, run_id, state):
    response = Response(render_template(template, **context))
    if htmx:
        # The fragment has its own URL; the address bar shows the bookmarkable page.
        response.headers["HX-Push-Url"] = Links(run_id, state).page()
    return response


@bp.get("/runs/<run_id>/results")
def show(run_id):
    """The results page: averages, charts, breakdowns and the detailed table, state in the URL."""
    run = get_run(run_id)
    state, filters = _state(request.args)
    context = _averages_context(run, state)
    # The breakdowns reuse the models the averages already read (no second query for them);
    # the category one gives a category filter's count too.
    targets = targets_from_averages(context["averages"])
    by_category = breakdown(run, "category", targets=targets)
    total = category_total(by_category, filters)
    context.update(_table_context(run, state, filters, total))
    state = run_state(run)
    completed = sum(r["completed"] for r in context["averages"])
    failed = sum(r["failed"] for r in context["averages"])
    speed = run_speed(run, context["averages"])
    context.update(
        {
            "models": sorted(context["averages"], key=lambda r: (r["position"], r["target_id"])),
            "state": state,
            "state_label": state_label(state, completed, failed),
            "by_category": by_category,
            "by_difficulty": breakdown(run, "difficulty", targets=targets),
            "statuses": STATUS_FILTERS,
            "per_page_choices": PER_PAGE_CHOICES,
            "chart_names": run_charts.CHARTS,
            "retryable_answers": retryable_answers(run),
            "sys": system_view(run),
            "speed": speed,
            "speed_chart_names": run_speed_charts.speed_chart_names(run, speed),
            "speed_captions": run_speed_charts.CAPTIONS,
            "goodput": kept_goodput(run, speed=speed),
            "stability": kept_stability(run) if has_repeats(run) else None,
            "check": kept_judge_check(run),
            "composites": target_composites(
                run, settings_from(current_app.config), context["averages"]
            ),
        }
    )
    return render_template("results/show.html", **context)


@bp.get("/runs/<run_id>/results/table")
def table(run_id):
    """Fragment #results-table (sorting, filtering, paging through htmx)."""
    run = get_run(run_id)
    state, filters = _state(request.args)
    return _fragment("results/_table.html", _table_context(run, state, filters), run_id, state)


@bp.get("/runs/<run_id>/results/averages")
def averages(run_id):
    """Fragment #averages (sorted by a column)."""
    run = get_run(run_id)
    state, _filters = _state(request.args)
    return _fragment("results/_averages.html", _averages_context(run, state), run_id, state)


@bp.get("/runs/<run_id>/charts/<name>.svg")
def chart(run_id, name):
    """One chart as SVG (`?size=narrow` draws it for phone widths)."""
    if name not in run_charts.CHARTS:
        abort(404)
    run = get_run(run_id)
    svg = run_charts.kept_run_chart(
        run,
        name,
        narrow=request.args.get("size") == "narrow",
        estimates=request.args.get("estimates") in ("1", "true", "yes"),
    )
    response = Response(svg, mimetype="image/svg+xml")
    response.headers["Cache-Control"] = "no-cache"
    return response


@bp.get("/runs/<run_id>/speed-charts/<name>.svg")
def speed_chart(run_id, name):
    """One speed chart as SVG (`?size=narrow` for phone widths; the timeline's `?target=` is a
    target id of the run)."""
    if name not in run_speed_charts.SPEED_CHARTS:
        abort(404)
    run = get_run(run_id)
    target = request.args.get("target", type=int)
    try:
        svg = run_speed_charts.speed_chart(
            run, name, narrow=request.args.get("size") == "narrow", target=target
        )
    except ValueError:
        abort(404)
    response = Response(svg, mimetype="image/svg+xml")
    response.headers["Cache-Control"] = "no-cache"
    return response


@bp.get("/runs/<run_id>/items/<int:item_id>")
def item(run_id, item_id):
    """One item: the row expansion for htmx, or a full page (links work without JavaScript)."""
    run = get_run(run_id)
    found = get_item(run, item_id)
    context = {
        "run": run,
        "item": found,
        "speed": item_speed(columns_of(found)),
        "next_url": request.referrer if _safe_next(request.referrer, run_id) else None,
    }
    if htmx and not htmx.history_restore_request:
        response = Response(render_template("results/_item_detail.html", **context))
    else:
        response = Response(render_template("results/item.html", **context))
    response.headers["Vary"] = "HX-Request"
    return response


def _safe_next(url, run_id):
    """Only redirect back to this run's own pages."""
    if not url:
        return False
    try:
        parts = urlsplit(url)
    except ValueError:  # a broken [IPv6] host, say: not this site
        return False
    if parts.netloc and parts.netloc != request.host:
        return False
    return parts.path.startswith(f"/runs/{run_id}/") or parts.path == f"/runs/{run_id}"


def _back(run_id):
    target = request.form.get("next") or ""
    if _safe_next(target, run_id):
        parts = urlsplit(target)
        return redirect(parts.path + (f"?{parts.query}" if parts.query else ""))
    return redirect(url_for("results.show", run_id=run_id))


@contextmanager
def _flash_refusal():
    """A refused action (LlmbenchError) becomes an error flash on the page it came from."""
    try:
        yield
    except LlmbenchError as exc:
        flash(exc.message, "error")


def _items(count):
    return f"{count} item{'s' if count != 1 else ''}"


@bp.post("/runs/<run_id>/items/<int:item_id>/retry-judge")
def retry_judge(run_id, item_id):
    """Send one item back to the judge."""
    with _flash_refusal():
        retries.retry_judge(run_id, item_id)
        flash(f"Item {item_id} is queued for the judge again.", "success")
    return _back(run_id)


@bp.post("/runs/<run_id>/items/<int:item_id>/rejudge")
def rejudge(run_id, item_id):
    """Judge a completed item again; its current judgement goes to the item's history."""
    with _flash_refusal():
        retries.rejudge_item(run_id, item_id)
        flash(
            f"Item {item_id} is queued to be judged again; its judgement is kept in its history.",
            "success",
        )
    return _back(run_id)


@bp.post("/runs/<run_id>/results/retry-judgements")
def retry_judgements(run_id):
    """Send every item whose judgement failed back to the judge."""
    with _flash_refusal():
        count = retry_failed_judgements(run_id)
        flash(f"{_items(count)} queued for the judge again.", "success")
    return _back(run_id)


@bp.post("/runs/<run_id>/results/retry-answers")
def retry_answers(run_id):
    """Ask the targets again for every item whose answer (or warm-up) failed."""
    with _flash_refusal():
        count = retry_failed_answers(run_id)
        flash(f"{_items(count)} queued to be answered again.", "success")
    return _back(run_id)


@bp.post("/runs/<run_id>/results/delete")
def delete(run_id):
    """Delete the run and its items (the form sits behind a confirmation step)."""
    try:
        delete_run(run_id)
    except LlmbenchError as exc:
        flash(exc.message, "error")
        return redirect(url_for("results.show", run_id=run_id))
    flash(f"Run {run_id} was deleted.", "success")
    return redirect(url_for("runs.index"))


def _download(run_id, kind):
    return attachment(*files.download(get_run(run_id), kind, settings_from(current_app.config)))


@bp.get("/runs/<run_id>/results.csv")
def export_detailed_csv(run_id):
    """Detailed CSV (the service's columns), streamed."""
    return _download(run_id, "detailed_csv")


@bp.get("/runs/<run_id>/averages.csv")
def export_average_csv(run_id):
    """Average CSV (the service's columns)."""
    return _download(run_id, "average_csv")


@bp.get("/runs/<run_id>/results.md")
def export_markdown(run_id):
    """Markdown: averages table and per-model details, streamed."""
    return _download(run_id, "markdown")


@bp.get("/runs/<run_id>/summary.json")
def export_summary(run_id):
    """summary.json."""
    return _download(run_id, "summary_json")


@bp.get("/runs/<run_id>/report.html")
def export_report(run_id):
    """Self-contained report.html, streamed."""
    return _download(run_id, "report_html")
