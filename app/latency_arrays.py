"""app.latency's packed gap histograms decoded many at once with numpy: what unpack_lists gives
for each, as flat arrays (core, no app imports beside app.latency).

A run's speed figures merge every answer's histogram; decoded one by one in Python, 100 000
answers took most of a second (bench/bench_speed_page.py). Here the bytes of all of them are
joined and each step (the CORE headers, the 4-bit core counts, the varint pairs) is one pass
over arrays, whatever the number of histograms.
"""

import numpy as np

from .latency import CORE
from .latency import SPARSE

_EMPTY = np.zeros(0, dtype=np.int64)


class MalformedHistogram(ValueError):
    """Bytes that app.latency.pack did not write (cut short, or an unknown layout)."""


def unpack_arrays(blobs):
    """(owner, buckets, counts) of pack()'s histograms `blobs` (None or b"" for none): one entry
    per bucket of each, owner being the histogram's index in `blobs`, sorted by owner then bucket,
    each histogram's entries exactly unpack_lists(blob)'s buckets and counts."""
    parts = _decode(blobs)
    if parts is None:
        return _EMPTY, _EMPTY, _EMPTY
    present, (core_owner, core_low, hi, lo), (pair_owner, pair_buckets, pair_counts) = parts
    owner = np.concatenate([core_owner, core_owner, pair_owner])
    buckets = np.concatenate([core_low, core_low + 1, pair_buckets])
    counts = np.concatenate([hi, lo, pair_counts])
    # unpack_lists keeps no zero core count (a pair's count it keeps as written).
    kept = np.concatenate([hi != 0, lo != 0, np.ones(pair_counts.size, dtype=bool)])
    owner, buckets, counts = owner[kept], buckets[kept], counts[kept]
    # One entry per (histogram, bucket), counts added: a core bucket over 15 carries the rest
    # in a pair, as unpack_lists adds them.
    order = np.lexsort((buckets, owner))
    owner, buckets, counts = owner[order], buckets[order], counts[order]
    first = np.ones(owner.size, dtype=bool)
    first[1:] = (owner[1:] != owner[:-1]) | (buckets[1:] != buckets[:-1])
    at = np.flatnonzero(first)
    if not at.size:
        return _EMPTY, _EMPTY, _EMPTY
    return present[owner[at]], buckets[at], np.add.reduceat(counts, at)


def merged_by_group(blobs, group_of, groups):
    """The histograms `blobs` merged per group (`group_of[i]`: blob i's group, 0..groups-1) as a
    2-D array, groups x buckets (counts, zeros where none): app.latency.merge of unpack() per
    group, without a Python step per histogram or per bucket."""
    parts = _decode(blobs)
    if parts is None:
        return np.zeros((groups, 1), dtype=np.int64)
    present, (core_owner, core_low, hi, lo), (pair_owner, pair_buckets, pair_counts) = parts
    group_of = np.asarray(group_of, dtype=np.int64)[present]
    width = 2 + max(int(core_low.max(initial=0)), int(pair_buckets.max(initial=0)))
    size = groups * width
    core_at = group_of[core_owner] * width + core_low
    total = np.zeros(size)  # bincount's sums with weights are floats: exact below 2**53
    for at, counts in (
        (core_at, hi),
        (core_at + 1, lo),
        (group_of[pair_owner] * width + pair_buckets, pair_counts),
    ):
        if at.size:
            total += np.bincount(at, weights=counts, minlength=size)
    return np.rint(total).astype(np.int64).reshape(groups, width)


def _decode(blobs):
    """The histograms' parts, None when there are none: (the indexes of the non-empty ones,
    (index, first bucket, high count, low count) of every CORE count byte (the high 4 bits
    count that bucket, the low ones the next), (index, bucket, count) of every varint pair).
    The indexes count the non-empty ones: present[index] is the blob's place in `blobs`."""
    lengths = np.fromiter((len(b) if b else 0 for b in blobs), dtype=np.int64, count=len(blobs))
    if not lengths.any():
        return None
    present = np.flatnonzero(lengths)
    data = np.frombuffer(b"".join(bytes(blobs[i]) for i in present), dtype=np.uint8)
    sizes = lengths[present]
    ends = np.cumsum(sizes)
    starts = ends - sizes
    layout = data[starts].astype(np.int64)
    if not np.isin(layout, (SPARSE, CORE)).all():
        raise MalformedHistogram("a histogram of an unknown layout")
    core = np.flatnonzero(layout == CORE)
    # Where each histogram's varint pairs begin: after the layout byte, or after a CORE
    # histogram's header and 4-bit counts.
    pairs_from = starts + 1
    nibbles = (_EMPTY, _EMPTY, _EMPTY, _EMPTY)
    if core.size:
        low, at = _varint_at(data, starts[core] + 1, ends[core])
        width, at = _varint_at(data, at, ends[core])
        nibble_bytes = (width + 1) // 2
        if (at + nibble_bytes > ends[core]).any():
            raise MalformedHistogram("a histogram cut short in its core counts")
        pairs_from[core] = at + nibble_bytes
        nibbles = _nibbles(data, core, low, at, nibble_bytes)
    return present, nibbles, _pairs(data, pairs_from, ends)


def _varint_at(data, at, ends):
    """The unsigned varint starting at each position `at` (one per histogram): (values, the
    position after each)."""
    values = np.zeros(at.size, dtype=np.int64)
    at = at.copy()
    going = np.ones(at.size, dtype=bool)
    shift = 0
    while going.any():
        if (at[going] >= ends[going]).any():
            raise MalformedHistogram("a histogram cut short in a varint")
        byte = data[at[going]].astype(np.int64)
        values[going] |= (byte & 0x7F) << shift
        at[going] += 1
        going[going] = (byte & 0x80) != 0
        shift += 7
    return values, at


def _nibbles(data, core, low, at, nibble_bytes):
    """(histogram, bucket, high count, low count) of each byte of the CORE histograms' 4-bit
    counts: the high 4 bits count `bucket`, the low 4 bits `bucket + 1`."""
    total = int(nibble_bytes.sum())
    if not total:
        return _EMPTY, _EMPTY, _EMPTY, _EMPTY
    which = np.repeat(np.arange(core.size), nibble_bytes)
    offset = np.arange(total) - np.repeat(np.cumsum(nibble_bytes) - nibble_bytes, nibble_bytes)
    byte = data[at[which] + offset].astype(np.int64)
    return core[which], low[which] + 2 * offset, byte >> 4, byte & 0x0F


def _pairs(data, starts, ends):
    """(histogram, bucket, count) of the (bucket step, count) varint pairs in data[start:end]
    of each histogram, buckets made absolute (each histogram's steps summed from 0)."""
    if (ends < starts).any():
        raise MalformedHistogram("a histogram cut short")
    # The bytes inside the histograms' pair regions, found by one running sum.
    size = data.size + 1
    edges = np.bincount(starts, minlength=size) - np.bincount(ends, minlength=size)
    position = np.flatnonzero(np.cumsum(edges[:-1]))
    if not position.size:
        return _EMPTY, _EMPTY, _EMPTY
    byte = data[position].astype(np.int64)
    last = byte < 0x80  # the last byte of a varint
    if not last[np.searchsorted(position, ends[ends > starts] - 1)].all():
        raise MalformedHistogram("a histogram cut short in a varint")
    if last.all():  # every value under 128: one byte each, the usual case
        values, value_at = byte, position
    else:
        begins = np.flatnonzero(np.concatenate(([True], last[:-1])))
        varint = np.cumsum(last) - last  # each byte's varint, numbered across histograms
        shift = 7 * (np.arange(byte.size) - begins[varint])
        if shift.max() > 56:
            raise MalformedHistogram("a varint too long")
        values, value_at = byte[begins] & 0x7F, position[begins]
        later = np.flatnonzero(shift)
        np.add.at(values, varint[later], (byte[later] & 0x7F) << shift[later])
    # A value's histogram: the last region starting at or before it (an empty region starts
    # where the next histogram's bytes begin, after the next region's start can only be).
    owner = np.searchsorted(starts, value_at, side="right") - 1
    if (np.bincount(owner, minlength=starts.size) % 2).any():
        raise MalformedHistogram("a histogram with a step and no count")
    steps, counts, owner = values[0::2], values[1::2], owner[0::2]
    running = np.cumsum(steps)
    # Each histogram's running sum starts again from 0 at its first pair.
    first = np.flatnonzero(np.concatenate(([True], owner[1:] != owner[:-1])))
    base = (running - steps)[first]
    buckets = running - np.repeat(base, np.diff(np.append(first, owner.size)))
    return owner, buckets, counts
