"""Every secret the database holds, as one Redactor: the last pass at the output edge.

Pages, the API, exports, the CLI's files and lines, and webhook bodies are masked with it once
more, so a secret that slipped past the adapters' masks (an encoding nobody thought of, a row
written by an older version) still does not leave. It is built from the providers' secret
headers and the templates' webhook URLs (their path: the host is shown anyway), decrypted; it
lives here because this is the lowest layer that sees both. Cached, and rebuilt when a provider,
a header or a template changes, in this process or another: a stamp of one small query says so.
"""

import threading
from urllib.parse import urlsplit

from .. import crypto
from ..catalog.providers import provider_secrets
from ..db.connection import database
from ..db.models import Provider
from ..db.models import ProviderHeader
from ..db.models import Template
from ..providers.redaction import PREFIX
from ..providers.redaction import Redactor
from .webhook_secret import webhook_url

_lock = threading.Lock()
_cached = (None, Redactor([]))  # (stamp, redactor)


def _stamp():
    """What changes when a secret may have: each table's newest change and row count."""
    provider = Provider._meta.table_name
    header = ProviderHeader._meta.table_name
    template = Template._meta.table_name
    # One statement, not three: it runs once per page.
    sql = (
        f'SELECT (SELECT max("updated_at") FROM "{provider}"), (SELECT count(*) FROM "{provider}"),'
        f' (SELECT max("id") FROM "{header}"), (SELECT count(*) FROM "{header}"),'
        f' (SELECT max("updated_at") FROM "{template}"), (SELECT count(*) FROM "{template}")'
    )
    row = database.execute_sql(sql).fetchone()
    return (str(database.database), *(str(v) for v in row))  # another database: another stamp


def _webhook_secrets():
    """Each template's webhook URL's secret parts: its path and query (where a token sits) and
    a password; not the URL whole, whose `https://` would be masked on every page."""
    secrets = []
    for template in Template.select().where(Template.webhook_url.is_null(False)):
        try:
            url = webhook_url(template)
        except (crypto.KeyError_, ValueError):
            continue  # cannot be read with this key: it cannot be shown either
        if not url:
            continue
        parts = urlsplit(url)
        rest = url.split(parts.netloc, 1)[-1].lstrip("/") if parts.netloc else url
        secrets += [s for s in (rest, parts.password) if s and len(s) >= PREFIX]
    return secrets


def known_redactor():
    """One Redactor for every secret in the database (cached until one changes)."""
    global _cached
    stamp = _stamp()
    with _lock:
        if _cached[0] == stamp:
            return _cached[1]
    # Whole words of a page are masked with it: a part shorter than a key's cut-short prefix
    # (`token`, `Bearer`) would take the same word out of every page; the adapters still mask
    # those in what their server sends.
    redactor = Redactor(provider_secrets() + _webhook_secrets(), min_length=PREFIX)
    with _lock:
        _cached = (stamp, redactor)
    return redactor


BATCH = 65536  # characters masked at once: one call per row of a big export would cost seconds


def mask_chunks(chunks, redactor=None, batch=BATCH):
    """A file's chunks masked, whole lines at a time: no secret holds a line break, so a secret
    split over two chunks is masked whole (an unfinished last line waits for the next chunk).
    `redactor`: one built already (a streamed reply is read after its request's database);
    `batch`: how much to gather first (0 for a live stream, whose lines must not wait)."""
    return _masked_chunks(chunks, redactor or known_redactor(), batch)


def _masked_chunks(chunks, redactor, batch):
    if not redactor:
        yield from chunks
        return
    lines = _Lines(batch)
    for chunk in chunks:
        ready = lines.add(chunk)
        if ready:
            yield redactor(ready)
    rest = lines.rest()
    if rest:
        yield redactor(rest)


class _Lines:
    """Text gathered until `batch` characters are, then handed out up to its last line break
    (the unfinished line waits for more)."""

    def __init__(self, batch):
        self.batch = batch
        self.pending = []
        self.size = 0

    def add(self, text):
        """Gather `text`; the whole lines gathered once a batch is full, else None."""
        self.pending.append(text)
        self.size += len(text)
        if self.size < self.batch or "\n" not in text:
            return None
        joined = "".join(self.pending)
        cut = joined.rfind("\n") + 1
        self.pending, self.size = [joined[cut:]], len(joined) - cut
        return joined[:cut]

    def rest(self):
        """Everything still gathered (the end of the text), and nothing kept."""
        rest = "".join(self.pending)
        self.pending, self.size = [], 0
        return rest


class MaskedWriter:
    """A text file's writer that masks every line written through it (see mask_chunks)."""

    def __init__(self, handle):
        self.handle = handle
        self.redactor = known_redactor()
        self.lines = _Lines(BATCH)

    def write(self, text):
        """Gather `text`; write whole lines masked once a batch is gathered."""
        if not self.redactor:
            return self.handle.write(text)
        ready = self.lines.add(text)
        if ready:
            self.handle.write(self.redactor(ready))
        return len(text)

    def flush(self):
        """Write what is gathered (masked) and flush the file."""
        rest = self.lines.rest()
        if rest:
            self.handle.write(self.redactor(rest))
        self.handle.flush()


class MaskedStream:
    """A text stream (the CLI's stdout or stderr) that masks each write: what a command prints
    holds no secret the database knows. Everything else is the stream's own."""

    def __init__(self, stream, redactor):
        self._stream = stream
        self._redactor = redactor

    def write(self, text):
        """Write `text` masked (a whole write at a time: a line, a screen's frame)."""
        return self._stream.write(self._redactor(text) if isinstance(text, str) else text)

    def __getattr__(self, name):
        return getattr(self._stream, name)
