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
from ..db import database
from ..models import Provider
from ..models import ProviderHeader
from ..models import Template
from ..providers.redaction import PREFIX
from ..providers.redaction import Redactor
from .template_start import webhook_url

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
    secrets = []
    for template in Template.select().where(Template.webhook_url.is_null(False)):
        try:
            url = webhook_url(template)
        except (crypto.KeyError_, ValueError):
            continue  # cannot be read with this key: it cannot be shown either
        if not url:
            continue
        parts = urlsplit(url)
        secrets.append(url)
        rest = url.split(parts.netloc, 1)[-1].lstrip("/") if parts.netloc else ""
        if len(rest) >= 8:
            secrets.append(rest)
        if parts.password:
            secrets.append(parts.password)
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


def forget():
    """Drop the cached redactor (tests that swap databases; the stamp covers the rest)."""
    global _cached
    with _lock:
        _cached = (None, Redactor([]))


def mask_text(text):
    """Text with every secret the database holds masked."""
    return known_redactor()(text) if text else text


def mask_chunks(chunks, redactor=None):
    """A file's chunks masked line by line: no secret holds a line break, so a secret split
    over two chunks is masked whole (a chunk's last, unfinished line waits for the next).
    `redactor`: one built already (a streamed reply is read after its request's database)."""
    return _masked_chunks(chunks, redactor or known_redactor())


def _masked_chunks(chunks, redactor):
    if not redactor:
        yield from chunks
        return
    pending = ""
    for chunk in chunks:
        pending += chunk
        cut = pending.rfind("\n") + 1
        if cut:
            yield redactor(pending[:cut])
            pending = pending[cut:]
    if pending:
        yield redactor(pending)


class MaskedWriter:
    """A text file's writer that masks every line written through it (see mask_chunks)."""

    def __init__(self, handle):
        self.handle = handle
        self.redactor = known_redactor()
        self.pending = ""

    def write(self, text):
        """Write the finished lines of `text` masked; keep its unfinished last line."""
        if not self.redactor:
            return self.handle.write(text)
        self.pending += text
        cut = self.pending.rfind("\n") + 1
        if cut:
            self.handle.write(self.redactor(self.pending[:cut]))
            self.pending = self.pending[cut:]
        return len(text)

    def flush(self):
        """Write what is kept (masked) and flush the file."""
        if self.pending:
            self.handle.write(self.redactor(self.pending))
            self.pending = ""
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
