"""Latency figures from plain numbers (pure, no app imports): percentiles and the summary of
the gaps between a stream's tokens, shared by the adapters and by what aggregates them later."""

import math
from bisect import bisect_right
from itertools import accumulate
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


# Token gaps are kept per answer as a histogram, not one number per gap: 1 ms buckets up to
# 128 ms (a value is off by at most 0.5 ms), then buckets 1 % wide. Percentiles over a whole
# target merge the histograms, so they are within half a bucket of the exact ones.
BUCKET_MS = 1.0
LINEAR_BUCKETS = 128  # 1 ms buckets: 0 .. 128 ms
RATIO = 1.01
_LINEAR_LIMIT = LINEAR_BUCKETS * BUCKET_MS
_LOG_RATIO = math.log(RATIO)


def bucket(gap_ms):
    """The histogram bucket of one gap in ms (negative gaps count as 0)."""
    gap_ms = max(0.0, float(gap_ms))
    if gap_ms < _LINEAR_LIMIT:
        return int(gap_ms / BUCKET_MS + 0.5)
    return LINEAR_BUCKETS + 1 + int(math.log(gap_ms / _LINEAR_LIMIT) / _LOG_RATIO)


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
        # bucket()'s linear case inlined (1 ms buckets): it runs for every gap of every
        # answer, and the call alone doubled the time (bench/bench_timing_cost.py).
        b = int(gap + 0.5) if 0.0 <= gap < _LINEAR_LIMIT else bucket(gap)
        counts[b] = counts.get(b, 0) + 1
    return counts


def merge(histograms):
    """One histogram of many (e.g. every answer of a target)."""
    total = {}
    for hist in histograms:
        for b, n in hist.items():
            total[b] = total.get(b, 0) + n
    return total


# Packed, a histogram is one of two layouts, whichever is shorter (the first byte says):
#   SPARSE  (bucket step, count) pairs as unsigned varints, buckets in order;
#   CORE    the buckets from the 2nd to the 98th percentile as 4-bit counts, two a byte (most
#           gaps of a stream sit there, a few to a bucket), then SPARSE pairs for the buckets
#           outside it and for what a core count above 15 left over.
# A 256-token answer takes ~20-60 bytes (bench/bench_timing_cost.py prints it).
SPARSE = 0
CORE = 1
_NIBBLE = 15


def _varint(value, out):
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return


def _pairs(items, out):
    previous = 0
    for b, n in items:
        _varint(b - previous, out)
        _varint(n, out)
        previous = b


def _core_range(ordered, total):
    low_rank, high_rank = total * 0.02, total * 0.98
    seen, low, high = 0, None, None
    for b, n in ordered:
        seen += n
        if low is None and seen > low_rank:
            low = b
        if seen >= high_rank:
            high = b
            break
    return low, high if high is not None else ordered[-1][0]


def pack(hist):
    """A histogram as bytes (SPARSE or CORE, the shorter); None for an empty one (no gaps:
    ITL not measurable)."""
    if not hist:
        return None
    ordered = sorted(hist.items())
    sparse = bytearray([SPARSE])
    _pairs(ordered, sparse)
    low, high = _core_range(ordered, sum(n for _, n in ordered))
    if high - low < 3:
        return bytes(sparse)
    core = bytearray([CORE])
    _varint(low, core)
    _varint(high - low + 1, core)
    nibbles = [0] * (high - low + 1)
    rest = []
    for b, n in ordered:
        if low <= b <= high:
            nibbles[b - low] = min(n, _NIBBLE)
            if n > _NIBBLE:
                rest.append((b, n - _NIBBLE))
        else:
            rest.append((b, n))
    if len(nibbles) % 2:
        nibbles.append(0)
    core.extend((hi << 4) | lo for hi, lo in zip(nibbles[0::2], nibbles[1::2], strict=True))
    _pairs(rest, core)
    return bytes(min(sparse, core, key=len))


def _varints(data):
    if max(data, default=0) < 0x80:
        return list(data)  # one byte each: the usual case, read at C speed
    values, value, shift = [], 0, 0
    for byte in data:
        value |= (byte & 0x7F) << shift
        if byte & 0x80:
            shift += 7
            continue
        values.append(value)
        value, shift = 0, 0
    return values


def _read_varint(data, at):
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def unpack_lists(data):
    """pack()'s bytes as (buckets ascending, their counts); ([], []) for None or empty."""
    if not data:
        return [], []
    data = bytes(data)
    counts = {}
    if data[0] == CORE:
        low, at = _read_varint(data, 1)
        size, at = _read_varint(data, at)
        end = at + (size + 1) // 2
        for i, byte in enumerate(data[at:end]):
            if byte >> 4:
                counts[low + 2 * i] = byte >> 4
            if byte & 0x0F:
                counts[low + 2 * i + 1] = byte & 0x0F
        values = _varints(data[end:])
    else:
        values = _varints(data[1:])
    b = 0
    for step, n in zip(values[0::2], values[1::2], strict=True):
        b += step
        counts[b] = counts.get(b, 0) + n
    buckets = sorted(counts)
    return buckets, [counts[b] for b in buckets]


def unpack(data):
    """pack()'s bytes back as {bucket: count} ({} for None or empty)."""
    return dict(zip(*unpack_lists(data), strict=True))


def figures(buckets, counts, names=("mean", *(name for name, _ in QUANTILES), "max")):
    """{name: ms} of the gaps in (buckets ascending, counts), names "mean", "max" or "pNN"
    (each gap taken as its bucket's middle; percentiles as percentile() over the expanded
    values, without expanding them), plus "count"; None when there are none."""
    running = list(accumulate(counts))
    total = running[-1] if running else 0
    if not total:
        return None
    out = {}
    for name in names:
        if name == "mean":
            out[name] = (
                math.fsum(bucket_value(b) * n for b, n in zip(buckets, counts, strict=True)) / total
            )
        elif name == "max":
            out[name] = bucket_value(buckets[-1])
        else:
            pos = (total - 1) * float(name[1:]) / 100.0
            lo, hi = math.floor(pos), math.ceil(pos)
            low = bucket_value(buckets[bisect_right(running, lo)])
            high = bucket_value(buckets[bisect_right(running, hi)])
            out[name] = low + (high - low) * (pos - lo)
    out["count"] = total
    return out


def histogram_summary(hist, quantiles=QUANTILES):
    """summary() of the gaps a histogram holds (each gap taken as its bucket's middle), plus
    "count"; None when it holds none."""
    ordered = sorted(hist.items())
    names = ("mean", *(name for name, _ in quantiles), "max")
    return figures([b for b, _ in ordered], [n for _, n in ordered], names) if ordered else None
