"""Latency figures from plain numbers (pure, no app imports): percentiles and the summary of
the gaps between a stream's tokens, shared by the adapters and by what aggregates them later."""

import math
from itertools import pairwise

# The figures a latency summary holds besides its mean and max, as (name, quantile).
QUANTILES = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99))


def percentile(sorted_values, q):
    """Linear-interpolated percentile (q in 0..1) of an already sorted sequence, None when it
    is empty (numpy's default method, the one load testers report)."""
    if not sorted_values:
        return None
    pos = (len(sorted_values) - 1) * q
    lo = math.floor(pos)
    hi = math.ceil(pos)
    if lo == hi:
        return float(sorted_values[lo])
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summary(values, quantiles=QUANTILES):
    """{"mean", "p50", "p90", "p99", "max"} of latencies, or None when there are none: a stream
    that sent its whole answer in one chunk has no gaps, so its ITL is not measurable."""
    if not values:
        return None
    ordered = sorted(values)
    out = {"mean": math.fsum(ordered) / len(ordered)}
    for name, q in quantiles:
        out[name] = percentile(ordered, q)
    out["max"] = float(ordered[-1])
    return out


def gaps(times):
    """The gaps in ms between consecutive instants (seconds, e.g. time.perf_counter())."""
    return [(later - earlier) * 1000.0 for earlier, later in pairwise(times)]


# Token gaps are kept per answer as a histogram, not one number per gap: 0.5 ms buckets up to
# 128 ms (a value is off by at most 0.25 ms), then buckets 1 % wide. Packed, a 256-token answer
# whose gaps sit near one rate takes a few dozen bytes; percentiles over a whole target merge
# the histograms, so they are within a bucket's half width of the exact ones.
BUCKET_MS = 0.5
LINEAR_BUCKETS = 256  # 0.5 ms buckets: 0 .. 128 ms
RATIO = 1.01
_LINEAR_LIMIT = LINEAR_BUCKETS * BUCKET_MS


def bucket(gap_ms):
    """The histogram bucket of one gap in ms (negative gaps count as 0)."""
    gap_ms = max(0.0, float(gap_ms))
    if gap_ms < _LINEAR_LIMIT:
        return int(gap_ms / BUCKET_MS + 0.5)
    return LINEAR_BUCKETS + 1 + int(math.log(gap_ms / _LINEAR_LIMIT) / math.log(RATIO))


def bucket_value(index):
    """The gap in ms a bucket stands for: its middle."""
    if index <= LINEAR_BUCKETS:
        return index * BUCKET_MS
    low = _LINEAR_LIMIT * RATIO ** (index - LINEAR_BUCKETS - 1)
    return low * (1.0 + RATIO) / 2.0


def histogram(gaps_ms):
    """{bucket: count} of gaps in ms."""
    counts = {}
    for gap in gaps_ms:
        # bucket()'s linear case inlined (x / 0.5 == x * 2.0 exactly): it runs for every gap
        # of every answer, and the call alone doubled the time (bench/bench_timing_cost.py).
        b = int(gap * 2.0 + 0.5) if 0.0 <= gap < _LINEAR_LIMIT else bucket(gap)
        counts[b] = counts.get(b, 0) + 1
    return counts


def merge(histograms):
    """One histogram of many (e.g. every answer of a target)."""
    total = {}
    for hist in histograms:
        for b, n in hist.items():
            total[b] = total.get(b, 0) + n
    return total


def _varint(value, out):
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return


def pack(hist):
    """A histogram as bytes: (bucket delta, count) pairs as unsigned varints, buckets in order;
    None for an empty one (no gaps: ITL not measurable)."""
    if not hist:
        return None
    out = bytearray()
    previous = 0
    for b in sorted(hist):
        _varint(b - previous, out)
        _varint(hist[b], out)
        previous = b
    return bytes(out)


def unpack(data):
    """pack()'s bytes back as {bucket: count} ({} for None or empty)."""
    hist = {}
    if not data:
        return hist
    values, value, shift = [], 0, 0
    for byte in bytes(data):
        value |= (byte & 0x7F) << shift
        if byte & 0x80:
            shift += 7
            continue
        values.append(value)
        value, shift = 0, 0
    previous = 0
    for delta, count in zip(values[0::2], values[1::2], strict=True):
        previous += delta
        hist[previous] = hist.get(previous, 0) + count
    return hist


def histogram_summary(hist, quantiles=QUANTILES):
    """summary() of the gaps a histogram holds (each gap taken as its bucket's middle), plus
    "count"; None when it holds none."""
    count = sum(hist.values())
    if not count:
        return None
    ordered = sorted(hist.items())
    out = {"mean": math.fsum(bucket_value(b) * n for b, n in ordered) / count}
    for name, q in quantiles:
        out[name] = _histogram_percentile(ordered, count, q)
    out["max"] = bucket_value(ordered[-1][0])
    out["count"] = count
    return out


def _histogram_percentile(ordered, count, q):
    # The same interpolation as percentile() over the expanded values, without expanding them.
    pos = (count - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    low_value = high_value = None
    seen = 0
    for b, n in ordered:
        if low_value is None and lo < seen + n:
            low_value = bucket_value(b)
        if hi < seen + n:
            high_value = bucket_value(b)
            break
        seen += n
    return low_value + (high_value - low_value) * (pos - lo)
