"""app/latency_arrays.py decodes app.latency's packed gap histograms many at once: exactly what
unpack_lists gives for each, and merge() per group."""

import random

import numpy as np
import pytest

from app.latency import CORE
from app.latency import SPARSE
from app.latency import histogram
from app.latency import merge
from app.latency import pack
from app.latency import unpack
from app.latency import unpack_lists
from app.latency_arrays import MalformedHistogram
from app.latency_arrays import merged_by_group
from app.latency_arrays import unpack_arrays


def random_histogram(rng):
    """A histogram of one of three shapes: a stream's gaps around a rate (CORE, often counts
    over 15), long stalls (buckets past 127: varints of two bytes), or a few large counts far
    apart (SPARSE, steps and counts of two or three bytes)."""
    shape = rng.random()
    if shape < 0.4:
        rate = rng.uniform(1, 120)
        return histogram(
            [rng.gauss(rate, rate * rng.uniform(0, 0.4)) for _ in range(rng.randint(1, 900))]
        )
    if shape < 0.7:
        return histogram(
            [rng.uniform(0, 60) for _ in range(rng.randint(1, 300))]
            + [rng.uniform(150, 60_000) for _ in range(rng.randint(1, 20))]
        )
    return {rng.randint(0, 40_000): rng.randint(1, 100_000) for _ in range(rng.randint(1, 12))}


def random_blobs(seed, count):
    rng = random.Random(seed)
    return [
        None if rng.random() < 0.1 else b"" if rng.random() < 0.02 else pack(random_histogram(rng))
        for _ in range(count)
    ]


def per_blob(owner, buckets, counts, n):
    return [(buckets[owner == i].tolist(), counts[owner == i].tolist()) for i in range(n)]


@pytest.mark.parametrize("seed", range(4))
def test_unpack_arrays_gives_exactly_unpack_lists_for_each_histogram(seed):
    blobs = random_blobs(seed, 400)
    packed = [b for b in blobs if b]
    # Both layouts, varints of more than one byte and core counts over 15 are all in the draw.
    assert {b[0] for b in packed} == {SPARSE, CORE}
    assert any(max(b[1:]) >= 0x80 for b in packed)
    assert any(n > 15 for b in packed if b[0] == CORE for n in unpack(b).values())
    got = per_blob(*unpack_arrays(blobs), len(blobs))
    assert got == [unpack_lists(b) for b in blobs]


def test_histograms_read_as_memoryviews_decode_the_same():
    # PostgreSQL's driver gives a BYTEA as a memoryview.
    blobs = random_blobs(7, 50)
    views = [memoryview(b) if b else b for b in blobs]
    got = [a.tolist() for a in unpack_arrays(views)]
    assert got == [a.tolist() for a in unpack_arrays(blobs)]


@pytest.mark.parametrize("seed", range(3))
def test_merged_by_group_equals_merge_of_each_groups_histograms(seed):
    blobs = random_blobs(100 + seed, 500)
    groups = np.array([random.Random(seed).randrange(4) if n % 5 else 3 for n in range(500)])
    merged = merged_by_group(blobs, groups, 5)
    assert merged.shape[0] == 5
    for g in range(5):
        expected = merge([unpack(b) for b, n in zip(blobs, groups, strict=True) if n == g])
        row = merged[g]
        assert {int(b): int(row[b]) for b in np.flatnonzero(row)} == expected


def test_no_histograms_decode_to_nothing():
    assert [a.size for a in unpack_arrays([None, b"", None])] == [0, 0, 0]
    assert [a.size for a in unpack_arrays([])] == [0, 0, 0]
    assert not merged_by_group([None, None], np.array([0, 1]), 2).any()


@pytest.mark.parametrize(
    "blob",
    [
        bytes([7, 1, 1]),  # no such layout
        bytes([SPARSE, 1]),  # a step and no count
        bytes([SPARSE, 1, 0x81]),  # a varint cut short
        bytes([CORE, 0, 10, 0x11]),  # core counts cut short
    ],
)
def test_bytes_pack_did_not_write_are_refused(blob):
    with pytest.raises(MalformedHistogram):
        unpack_arrays([pack({1: 2}), blob])
