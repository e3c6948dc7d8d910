"""A run's system-metrics samples in the database: compact rows (series.py) in chunks.

Every sample is written when it is taken (nothing is lost when the process dies), appended to
the run's newest chunk row; a chunk holds at most CHUNK rows and starts with its own encoder,
so it decodes on its own (its first row carries every slow field). A 10 h run at one sample per
2 s is 120 chunk rows of about 9 KB: bench/bench_sysmetrics.py measures the bytes.
"""

import json

from peewee import fn

from ..db.connection import database
from ..db.models import SampleChunk
from .series import SeriesEncoder
from .series import decode_series
from .series import downsample
from .series import peaks

CHUNK = 150  # 5 minutes at one sample per 2 s: at most ~9 KB of JSON rewritten per sample


def _dumps(rows):
    return json.dumps(rows, separators=(",", ":"))


class SampleStore:
    """A Sampler's `store`: appends each sample to the run's newest chunk (thread-safe enough
    for its one sampler thread; each call opens and closes that thread's connection)."""

    def __init__(self, run_pk, chunk=CHUNK):
        self.run_pk = run_pk
        self.chunk = chunk
        self.rows = []
        self.seq = None
        self.encoder = None

    def __call__(self, sample):
        with database.connection_context():
            if self.seq is None or len(self.rows) >= self.chunk:
                self._start_chunk(sample)
                return
            self.rows.append(self.encoder.encode(sample))
            SampleChunk.update(
                rows=_dumps(self.rows), count=len(self.rows), t_last=float(sample["t"])
            ).where((SampleChunk.run == self.run_pk) & (SampleChunk.seq == self.seq)).execute()

    def _start_chunk(self, sample):
        self.encoder = SeriesEncoder()
        self.rows = [self.encoder.encode(sample)]
        last = (
            SampleChunk.select(fn.MAX(SampleChunk.seq)).where(SampleChunk.run == self.run_pk)
        ).scalar()
        self.seq = 0 if last is None else last + 1
        SampleChunk.insert(
            run=self.run_pk,
            seq=self.seq,
            t_first=float(sample["t"]),
            t_last=float(sample["t"]),
            count=1,
            rows=_dumps(self.rows),
        ).execute()


def run_samples(run, since=None):
    """The run's samples (long names, time order); `since` (epoch s) skips older chunks."""
    query = SampleChunk.select(SampleChunk.rows).where(SampleChunk.run == run)
    if since is not None:
        query = query.where(SampleChunk.t_last >= since)
    samples = []
    for (rows,) in query.order_by(SampleChunk.seq).tuples():
        samples += decode_series(json.loads(rows))
    if since is not None:
        samples = [s for s in samples if s["t"] >= since]
    return samples


def chart_samples(run):
    """The run's samples for a chart: every sample of the last hour, one per 30 s before."""
    return downsample(run_samples(run))


def latest_sample(run):
    """The run's newest sample, or None."""
    row = (
        SampleChunk.select(SampleChunk.rows)
        .where(SampleChunk.run == run)
        .order_by(SampleChunk.seq.desc())
        .tuples()
        .first()
    )
    return decode_series(json.loads(row[0]))[-1] if row else None


def run_peaks(run):
    """The maximum of each fast field over the run (None where never known)."""
    return peaks(run_samples(run))


def stored_bytes(run):
    """Bytes of the run's stored sample JSON (what a 10 h run's budget counts)."""
    return (
        SampleChunk.select(fn.COALESCE(fn.SUM(fn.LENGTH(SampleChunk.rows)), 0))
        .where(SampleChunk.run == run)
        .scalar()
    )
