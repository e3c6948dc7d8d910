"""app.charts: server-side SVG, no scripts, no external references, readable narrow variant."""

import re
import sys

import pytest

from app import charts
from app import results
from tests.factories import bulk_items
from tests.factories import make_run


@pytest.fixture
def data(app):
    run, targets = make_run(targets=[("local", "m1"),
                                     ("openrouter", "vendor/a-very-long-model-name")])
    for target in targets:
        bulk_items(run, target, 40)
    averages = results.model_averages(run)
    return {"averages": averages, "samples": results.latency_samples(run),
            "category": results.breakdown(run, "category")}


def _all(data, narrow):
    return [charts.score_chart(data["averages"], narrow),
            charts.speed_chart(data["averages"], narrow),
            charts.latency_chart(data["averages"], data["samples"], narrow),
            charts.category_chart(data["category"], narrow)]


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
    assert 'viewBox="0 0 640 360"' in wide
    assert 'viewBox="0 0 480 420"' in narrow


def test_long_model_labels_are_shortened_in_the_middle(data):
    svg = charts.score_chart(data["averages"], narrow=True)
    assert charts.short("openrouter/vendor/a-very-long-model-name", 16) == "openrou…del-name"
    assert "openrou…del-name" in svg


def test_score_chart_draws_confidence_intervals(data):
    assert 'class="ci' in charts.score_chart(data["averages"])


def test_category_chart_is_a_radar_from_three_categories(data):
    assert "radar" in charts.category_chart(data["category"]).lower()


def test_charts_without_data_say_so():
    assert "No data yet" in charts.score_chart([])


def test_importing_charts_leaves_no_legacy_import_hook():
    assert not any(type(f).__name__ == "PluginImportFixer" for f in sys.meta_path)


def test_short_keeps_short_labels():
    assert charts.short("abc", 10) == "abc"
    assert charts.short("abcdefghijkl", 7) == "abc…jkl"
