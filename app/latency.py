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
