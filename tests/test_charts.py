"""The chart toolkit (app.charts) and the results charts: server-side SVG, no scripts, no external
references, readable narrow variant."""

import re
import sys

import pytest

from app.charts.labels import axis_names
from app.charts.labels import short
from app.charts.ticks import nice_ticks
from app.results import charts
from app.results.averages import breakdown
from app.results.averages import latency_samples
from app.results.averages import model_averages
from tests.factories import bulk_items
from tests.factories import make_run


@pytest.fixture
def data(app):
    run, targets = make_run(
        targets=[("local", "m1"), ("openrouter", "vendor/a-very-long-model-name")]
    )
    for target in targets:
        bulk_items(run, target, 40)
    averages = model_averages(run)
    return {
        "averages": averages,
        "samples": latency_samples(run),
        "category": breakdown(run, "category"),
    }


def _all(data, narrow):
    return [
        charts.score_chart(data["averages"], narrow),
        charts.speed_chart(data["averages"], narrow),
        charts.latency_chart(data["averages"], data["samples"], narrow),
        charts.category_chart(data["category"], narrow),
    ]


@pytest.mark.parametrize("narrow", [False, True])
def test_charts_are_inline_svg_without_scripts_or_external_references(data, narrow):
    for svg in _all(data, narrow):
        assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
        assert "<?xml" not in svg
        assert "<script" not in svg
        assert not re.search(r'(href|src)="(https?:)?//', svg)


def test_narrow_charts_are_drawn_for_phone_widths(data):
    wide = charts.score_chart(data["averages"])
    narrow = charts.score_chart(data["averages"], narrow=True)
    # The width is the chart's; a key under it naming long names whole adds to the height.
    assert 'viewBox="0 0 640 ' in wide
    assert 'viewBox="0 0 480 ' in narrow


def test_long_target_names_are_named_whole_in_the_key(data):
    svg = charts.score_chart(data["averages"])
    assert short("openrouter/vendor/a-very-long-model-name", 16) == "openrou…del-name"
    # Too long for the axis: a letter there, the whole name in the key under the chart.
    key = svg[svg.index('class="chart-key"') :]
    assert "openrouter/vendor/a-very-long-model-name" in key


def test_axis_names_keep_names_that_fit_and_letter_the_rest():
    assert axis_names(["local/m1", "local/m2"], narrow=False) == (
        ["local/m1", "local/m2"],
        [],
        None,
    )
    labels, key, _note = axis_names(["local/" + "x" * 40, "local/m2"], narrow=False)
    assert labels == ["A", "B"] and [k["label"] for k in key] == ["local/" + "x" * 40, "local/m2"]


def test_one_far_faster_model_puts_the_speed_chart_on_a_log_scale(app):
    averages = [
        {"label": "fake/fast", "avg_tokens_per_second": 25_000.0},
        {"label": "local/llama", "avg_tokens_per_second": 30.0},
    ]
    svg = charts.speed_chart(averages)
    assert "Decode speed per answer (tokens/s, log scale)" in svg
    axis = re.search(r'class="axis x always_show">(.*?)</g></g>', svg).group(1)
    assert re.findall(r"<text[^>]*>([^<]*)</text>", axis) == ["10", "100", "1k", "10k", "100k"]


def test_one_slow_answer_is_cut_and_marked_in_the_box_plot(app):
    averages = [{"target_id": 1, "label": "p/a"}, {"target_id": 2, "label": "p/b"}]
    samples = {1: [900.0 + n for n in range(20)], 2: [1000.0 + n for n in range(19)] + [120_000.0]}
    svg = charts.latency_chart(averages, samples)
    assert "Answer time (ms), cut at 3.04k: 1 slower, up to 120k" in svg
    assert ">120k<" not in re.search(r'class="axis y always_show">(.*?)</g></g>', svg).group(1)


def test_a_zero_score_reads_0_and_no_score_draws_nothing(app):
    table = {
        "by": "category",
        "models": [{"label": "p/a"}, {"label": "p/b"}],
        "rows": [{"key": "math", "cells": [{"avg": 0.0}, {"avg": None}]}],
    }
    svg = charts.category_chart(table)
    values = re.findall(r"<text[^>]*class=\"value\">([^<]*)<", svg)
    assert values == ["0.0"]


def test_an_empty_chart_of_a_finished_run_does_not_say_yet(app):
    assert "No data yet" not in charts.score_chart([], empty=charts.NONE_FINISHED)
    assert "No completed answers to draw" in charts.score_chart([], empty=charts.NONE_FINISHED)


def test_score_chart_draws_confidence_intervals(data):
    assert 'class="ci' in charts.score_chart(data["averages"])


def _bars(svg):
    """The value bars pygal drew (a None value draws none)."""
    return re.findall(r'<rect [^>]*class="rect reactive tooltip-trigger"', svg)


def test_category_chart_draws_no_bar_for_a_model_without_a_score(data):
    table = data["category"]
    table["rows"][0]["cells"][1]["avg"] = None  # only judge failures in that category
    svg = charts.category_chart(table)
    assert "radar" not in svg.lower()
    assert len(_bars(svg)) == len(table["rows"]) * len(table["models"]) - 1


def _legend_bottom(svg):
    """(bottom of the key's last line under the chart, height of the picture)."""
    height = float(re.search(r'viewBox="0 0 [\d.]+ ([\d.]+)"', svg).group(1))
    key = svg[svg.index('class="chart-key"') :]
    rows = [float(y) for y in re.findall(r'<text x="[\d.]+" y="([\d.]+)"', key)]
    return max(rows), height


@pytest.mark.parametrize("narrow", [False, True])
@pytest.mark.parametrize("models", [1, 2, 4, 5, 10])
def test_keys_fit_inside_the_chart(app, narrow, models):
    run, targets = make_run(
        targets=[("local", f"model-with-a-long-name-{n}") for n in range(models)]
    )
    for target in targets:
        bulk_items(run, target, 8)
    averages = model_averages(run)
    for svg in (
        charts.latency_chart(averages, latency_samples(run), narrow),
        charts.category_chart(breakdown(run, "category"), narrow),
    ):
        bottom, height = _legend_bottom(svg)
        assert bottom <= height, f"legend ends at {bottom} of {height}"


def test_every_latency_box_is_inside_the_plot(app):
    run, targets = make_run(targets=[("local", "fast"), ("local", "slow")])
    bulk_items(run, targets[0], 20)
    bulk_items(run, targets[1], 20, time_taken_ms=9_730.0)
    svg = charts.latency_chart(model_averages(run), latency_samples(run), True)
    height = float(
        re.search(r'class="plot"><rect x="0" y="0" width="[\d.]+" height="([\d.]+)"', svg).group(1)
    )
    ys = [float(y) for y in re.findall(r'<path stroke-width="\d" d="M[\d.]+ ([-\d.]+) L', svg)]
    # The scale runs from 0 to 5 % above the slowest answer: its whisker sits below the top.
    assert ys and min(ys) >= 0.04 * height


@pytest.mark.parametrize(
    "top, count, expected",
    [
        (100, 4, [0, 25, 50, 75, 100]),
        (880, 4, [0, 250, 500, 750, 1000]),
        (9.3, 4, [0, 2.5, 5, 7.5, 10]),
    ],
)
def test_nice_ticks_are_few_round_values(top, count, expected):
    assert nice_ticks(top, count) == expected


def test_narrow_speed_axis_has_few_short_labels(app):
    averages = [
        {"label": "a", "avg_tokens_per_second": 3456.7},
        {"label": "b", "avg_tokens_per_second": 200.0},
    ]
    svg = charts.speed_chart(averages, narrow=True)
    axis = re.search(r'class="axis x always_show">(.*?)</g></g>', svg).group(1)
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", axis)
    assert labels == ["0", "1k", "2k", "3k", "4k"]


def test_charts_without_data_say_so():
    assert "No data yet" in charts.score_chart([])


def test_importing_charts_leaves_no_legacy_import_hook():
    assert not any(type(f).__name__ == "PluginImportFixer" for f in sys.meta_path)


def test_short_keeps_short_labels():
    assert short("abc", 10) == "abc"
    assert short("abcdefghijkl", 7) == "abc…jkl"
