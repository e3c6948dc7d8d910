"""The bodies of a run's summary.json and report.html, and the head of results.md, kept as text
(results/kept.py), so a download of an unchanged run reads one row instead of every item:
3.5 s, 4 s and 7 s of CPU at 100 000 items, worked out on every download before.

Kept in the database only (megabytes a server should not hold per run), under the run's stamp
and everything else a body shows: the code that writes it, the composite settings, the
ratings, votes and judge jobs (ratings/kept.py ratings_stamp), the run's row, its targets, its
collections and its system samples. report.html says when it was generated: kept with a
placeholder time, replaced by the download's. results.md's detail rows, one per item, are read
from their cursor on each download as before (rows.py); only what comes before them is kept.
"""

import datetime as dt
import functools
import hashlib
import json
from pathlib import Path

from peewee import fn

from ..clock import isoformat
from ..clock import utc_text
from ..clock import utcnow
from ..config import resource_dir
from ..db.models import RunCollection
from ..db.models import RunTarget
from ..db.models import SampleChunk
from ..ratings.kept import ratings_stamp
from ..results.composite import DEFAULT_SETTINGS
from ..results.kept import full_stamp
from ..results.kept import kept_figures
from .markdown import detail_labels
from .markdown import markdown_details
from .markdown import markdown_head
from .report import report_html_chunks
from .summary import summary_json

PIECE = 1 << 16  # characters per chunk a kept body is streamed in
# A time no report is generated at: its text in a kept report.html is replaced on download.
_PLACEHOLDER = dt.datetime(1111, 1, 11, 11, 11, 11, tzinfo=dt.UTC)


@functools.cache
def _code():
    """The code every body comes from (the app's modules and templates), as a hash: worked out
    once per process on first use (not at import: the CLI imports this and never needs it),
    so a body kept by another version is written again, never served in an older shape."""
    digest = hashlib.sha256()
    roots = (Path(__file__).resolve().parent.parent, Path(resource_dir("templates")))
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".html", ".css") and path.is_file():
                digest.update(str(path.relative_to(root)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def _also(run, composite_settings):
    """What a body comes from besides the run's items, settings and targets (in its stamp)."""
    targets = list(RunTarget.select().where(RunTarget.run == run).order_by(RunTarget.id).dicts())
    collections = list(
        RunCollection.select(RunCollection.collection_name)
        .where(RunCollection.run == run)
        .order_by(RunCollection.id)
        .tuples()
    )
    samples = (
        SampleChunk.select(
            fn.COUNT(SampleChunk.id), fn.MAX(SampleChunk.seq), fn.SUM(SampleChunk.count)
        )
        .where(SampleChunk.run == run)
        .tuples()
        .first()
    )
    parts = [_code(), repr(composite_settings), ratings_stamp(run)]
    parts += [json.dumps(targets, sort_keys=True, default=str), repr(collections), repr(samples)]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


def body_stamp(run, composite_settings=DEFAULT_SETTINGS):
    """The stamp the run's bodies are kept under now: its own and all the rest they show."""
    return full_stamp(run, _also(run, composite_settings))


def _pieces(text):
    for start in range(0, len(text), PIECE):
        yield text[start : start + PIECE]


def summary_text(run, composite_settings=DEFAULT_SETTINGS):
    """summary.json as its file holds it (indented JSON and a newline)."""
    return json.dumps(summary_json(run, composite_settings), ensure_ascii=False, indent=2) + "\n"


def kept_summary_text(run, composite_settings=DEFAULT_SETTINGS):
    """summary_text(run), read back while the run and what the summary shows hold."""
    return kept_figures(
        run,
        "file:summary.json",
        lambda: summary_text(run, composite_settings),
        also=_also(run, composite_settings),
        memory=False,
    )


def kept_summary_chunks(run, composite_settings=DEFAULT_SETTINGS):
    """summary.json's body in pieces, kept (kept_summary_text)."""
    yield from _pieces(kept_summary_text(run, composite_settings))


def _generated(when):
    # The one place the report says when it was generated (templates/results/report.html);
    # people's text is escaped, so this markup comes from the template alone.
    time = f'<time datetime="{isoformat(when)}">{utc_text(when)}</time>'
    return f"<dt>Report generated</dt><dd>{time}"


def kept_report_text(run, composite_settings=DEFAULT_SETTINGS, generated_at=None):
    """report.html as report_html(run) gives it when generated at `generated_at` (now by
    default), its body read back while the run and what the report shows hold."""
    text = kept_figures(
        run,
        "file:report.html",
        lambda: "".join(
            report_html_chunks(
                run, composite_settings=composite_settings, generated_at=_PLACEHOLDER
            )
        ),
        also=_also(run, composite_settings),
        memory=False,
    )
    return text.replace(_generated(_PLACEHOLDER), _generated(generated_at or utcnow()), 1)


def kept_report_chunks(run, composite_settings=DEFAULT_SETTINGS):
    """report.html in pieces, kept (kept_report_text)."""
    yield from _pieces(kept_report_text(run, composite_settings))


def kept_markdown(run, detailed=True, composite_settings=DEFAULT_SETTINGS):
    """results.md as markdown(run, detailed) yields it: what comes before the detail rows kept
    (the run, its averages, composite scores and ratings), the rows read from their cursor."""
    head, labels = kept_figures(
        run,
        "file:results.md",
        lambda: _markdown_head(run, composite_settings),
        also=_also(run, composite_settings),
        memory=False,
    )
    yield head
    if detailed:
        yield from markdown_details(run, labels)


def _markdown_head(run, composite_settings):
    averages = []
    head = "".join(markdown_head(run, composite_settings, averages))
    return [head, detail_labels(averages)]
