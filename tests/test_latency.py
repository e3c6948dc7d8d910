"""Latency figures from plain numbers: percentiles as load testers compute them, and the ITL
summary of a stream's gaps."""

import random

import pytest

from app.latency import bucket
from app.latency import bucket_value
from app.latency import gaps
from app.latency import histogram
from app.latency import histogram_summary
from app.latency import merge
from app.latency import pack
from app.latency import percentile
from app.latency import summary
from app.latency import unpack


def test_a_percentile_interpolates_between_the_two_nearest_values():
    assert percentile([10, 20, 30, 40], 0.5) == 25
    assert percentile([10, 20, 30, 40], 0.9) == pytest.approx(37)


def test_a_percentile_of_one_value_is_that_value_and_of_none_is_none():
    assert percentile([7], 0.99) == 7
    assert percentile([], 0.5) is None


def test_a_summary_holds_mean_p50_p90_p99_and_max():
    values = list(range(1, 101))
    assert summary(values) == {
        "mean": 50.5,
        "p50": 50.5,
        "p90": pytest.approx(90.1),
        "p99": pytest.approx(99.01),
        "max": 100.0,
    }


def test_a_summary_of_no_gaps_is_not_measurable():
    assert summary([]) is None


def test_the_summary_does_not_depend_on_the_order_of_the_values():
    assert summary([3, 1, 2]) == summary([1, 2, 3])


def test_gaps_are_the_milliseconds_between_consecutive_instants():
    assert gaps([1.0, 1.02, 1.05]) == pytest.approx([20.0, 30.0])
    assert gaps([1.0]) == []


def _random_gaps(seed, n):
    rng = random.Random(seed)
    return [
        max(0.0, rng.gauss(20, 4)) if rng.random() < 0.95 else rng.uniform(50, 900)
        for _ in range(n)
    ]


@pytest.mark.parametrize("seed", range(5))
def test_a_histograms_summary_is_within_a_bucket_of_the_exact_one(seed):
    values = _random_gaps(seed, 2000)
    exact = summary(values)
    kept = histogram_summary(unpack(pack(histogram(values))))
    assert kept["count"] == len(values)
    for name in ("mean", "p50", "p90", "p99", "max"):
        # 0.5 ms under 128 ms; 0.5 % above (buckets 1 % wide)
        assert kept[name] == pytest.approx(exact[name], abs=0.5, rel=0.005), name


def test_merged_histograms_give_the_percentiles_of_all_their_gaps():
    a, b = _random_gaps(1, 500), _random_gaps(2, 700)
    merged = histogram_summary(merge([histogram(a), histogram(b)]))
    exact = summary(a + b)
    assert merged["p90"] == pytest.approx(exact["p90"], abs=0.5, rel=0.005)
    assert merged["count"] == 1200


def test_a_packed_histogram_of_256_steady_gaps_takes_a_few_bytes():
    packed = pack(histogram([20.0 + (i % 7) * 0.3 for i in range(255)]))
    assert len(packed) <= 24
    assert sum(unpack(packed).values()) == 255


def test_no_gaps_pack_to_nothing_and_summarise_to_none():
    assert pack(histogram([])) is None
    assert unpack(None) == {}
    assert histogram_summary({}) is None


def test_a_gap_lands_in_the_bucket_whose_middle_is_nearest_below_128_ms():
    assert bucket_value(bucket(20.4)) == 20.0
    assert bucket_value(bucket(20.6)) == 21.0
    assert bucket(-3) == 0


@pytest.mark.parametrize("seed", range(20))
def test_a_histogram_packs_and_unpacks_to_itself_whichever_layout_is_shorter(seed):
    rng = random.Random(seed)
    itl = rng.uniform(5, 90)
    gaps_ms = [max(0.0, rng.gauss(itl, itl * rng.uniform(0.01, 0.4))) for _ in range(255)]
    gaps_ms += [rng.uniform(0, 5000) for _ in range(rng.randrange(0, 8))]  # stalls, bursts
    hist = histogram(gaps_ms)
    assert unpack(pack(hist)) == hist


def test_a_core_count_above_15_keeps_what_it_left_over():
    hist = {10: 1, 11: 40, 12: 200, 13: 16, 14: 15, 15: 1, 400: 3}
    assert unpack(pack(hist)) == hist


def test_jittered_256_token_answers_pack_under_64_bytes_on_average():
    rng = random.Random(7)
    sizes = []
    for _ in range(200):
        itl = rng.uniform(8, 60)
        gaps_ms = [max(0.0, rng.gauss(itl, itl * 0.15)) for _ in range(255)]
        sizes.append(len(pack(histogram(gaps_ms))))
    assert sum(sizes) / len(sizes) <= 64


def test_a_histogram_counts_each_gap_in_the_bucket_bucket_gives_it():
    edges = [0, 0.2499, 0.25, 0.75, 127.74, 127.75, 127.999, 128.0, 129.3, 5000.0, -3.0, 7]
    counted = {}
    for gap in edges:
        counted[bucket(gap)] = counted.get(bucket(gap), 0) + 1
    assert histogram(edges) == counted
