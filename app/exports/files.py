"""Export kinds as downloadable files: (chunks, filename, content type) for the web and the API.

The edges turn them into a streamed attachment (api/replies.py `attachment`); no HTTP here.
"""

import json
import re

from ..results.composite import DEFAULT_SETTINGS
from .csvfiles import csv_average
from .csvfiles import csv_detailed
from .item_results import results_jsonl
from .markdown import markdown
from .ratings import report_csv_chunks
from .report import report_html_chunks
from .summary import summary_json

KINDS = (
    "detailed_csv",
    "average_csv",
    "markdown",
    "markdown_averages",
    "summary_json",
    "report_html",
    "report_csv",
    "results_jsonl",
)
# POST /api/runs/<id>/export {"format", "includeDetailed"} -> kind.
FORMATS = ("CSV", "MD", "JSON", "HTML", "JSONL")


def safe_name(run_id):
    """The run id as a filename part: letters, digits, dot, dash and underscore only."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", run_id).strip("._") or "run"


def kind_for(fmt, include_detailed=True):
    """The export kind for an API format name (CSV, MD, JSON, HTML, JSONL: results.jsonl)."""
    fmt = fmt.upper()
    if fmt == "CSV":
        return "detailed_csv" if include_detailed else "average_csv"
    if fmt == "MD":
        return "markdown" if include_detailed else "markdown_averages"
    return {"JSON": "summary_json", "HTML": "report_html", "JSONL": "results_jsonl"}[fmt]


def _json_chunks(run, composite_settings):
    yield json.dumps(summary_json(run, composite_settings), ensure_ascii=False, indent=2) + "\n"


def download(run, kind, composite_settings=DEFAULT_SETTINGS):
    """(iterator of str chunks, filename, full Content-Type) for one export kind of `run`;
    composite_settings: the composite score's weights and time curve (the app's config)."""
    name = f"run-{safe_name(run.run_id)}"
    if kind == "detailed_csv":
        return csv_detailed(run), f"{name}-detailed.csv", "text/csv; charset=utf-8"
    if kind == "average_csv":
        chunks = csv_average(run, composite_settings)
        return chunks, f"{name}-average.csv", "text/csv; charset=utf-8"
    if kind == "markdown":
        chunks = markdown(run, composite_settings=composite_settings)
        return chunks, f"{name}.md", "text/markdown; charset=utf-8"
    if kind == "markdown_averages":
        chunks = markdown(run, detailed=False, composite_settings=composite_settings)
        return chunks, f"{name}-average.md", "text/markdown; charset=utf-8"
    if kind == "summary_json":
        return _json_chunks(run, composite_settings), f"{name}-summary.json", "application/json"
    if kind == "report_csv":
        chunks = report_csv_chunks(run, composite_settings)
        return chunks, f"{name}-report.csv", "text/csv; charset=utf-8"
    if kind == "report_html":
        chunks = report_html_chunks(run, composite_settings=composite_settings)
        return chunks, f"{name}-report.html", "text/html; charset=utf-8"
    if kind == "results_jsonl":
        return results_jsonl(run), f"{name}-results.jsonl", "application/x-ndjson; charset=utf-8"
    raise ValueError(f"unknown export kind {kind!r}")
