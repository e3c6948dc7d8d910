"""Exports of one run: CSV (average, detailed), Markdown, summary.json and report.html.

Every detailed export streams: rows come from one server-side cursor, so memory stays flat
whatever the run's size. Nothing here reads provider headers, so no secret can leak into a file.
"""

from .csvfiles import AVERAGE_COLUMNS
from .csvfiles import DETAILED_COLUMNS
from .csvfiles import csv_average
from .csvfiles import csv_detailed
from .markdown import markdown
from .report import report_html
from .report import report_html_chunks
from .summary import summary_json

__all__ = [
    "AVERAGE_COLUMNS",
    "DETAILED_COLUMNS",
    "csv_average",
    "csv_detailed",
    "markdown",
    "report_html",
    "report_html_chunks",
    "summary_json",
]
