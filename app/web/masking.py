"""The last pass at the web edge: every text reply (pages, fragments, the JSON API, CSV,
Markdown, report.html, SVG) is masked with every secret the database holds, so what slipped
past the adapters' masks still does not leave. Static files are ours and are not read."""

import codecs
import logging

from peewee import PeeweeException

from ..schedules.known_secrets import BATCH
from ..schedules.known_secrets import known_redactor
from ..schedules.known_secrets import mask_chunks

log = logging.getLogger(__name__)

TEXT_TYPES = ("application/json", "application/x-ndjson", "application/xml", "image/svg+xml")


def _is_text(response):
    mimetype = response.mimetype or ""
    return mimetype.startswith("text/") or mimetype in TEXT_TYPES or mimetype.endswith("+json")


def _text_chunks(chunks, charset):
    """A streamed body's chunks as text (a character split over two chunks kept whole)."""
    decoder = codecs.getincrementaldecoder(charset)("replace")
    for chunk in chunks:
        yield decoder.decode(chunk) if isinstance(chunk, bytes) else chunk
    tail = decoder.decode(b"", final=True)
    if tail:
        yield tail


def mask_response(response):
    """The response with every known secret masked in its body (text bodies only)."""
    if response.direct_passthrough or not _is_text(response):
        return response
    try:
        redactor = known_redactor()
    except PeeweeException:  # no database behind this reply (its own error page): as it is
        log.debug("no secrets to mask with: the database cannot be read")
        return response
    if not redactor:
        return response
    charset = response.mimetype_params.get("charset") or "utf-8"
    if response.is_streamed:
        # A live stream (the run's events) is masked a line at a time; a download in batches.
        batch = 0 if response.mimetype == "text/event-stream" else BATCH
        chunks = mask_chunks(_text_chunks(response.response, charset), redactor, batch)
        response.response = (chunk.encode(charset, "replace") for chunk in chunks)
        return response
    body = response.get_data(as_text=True)
    masked = redactor(body)
    if masked != body:
        response.set_data(masked)
    return response


def init_app(app):
    """Mask every reply on its way out (an error page's too)."""
    app.after_request(mask_response)
