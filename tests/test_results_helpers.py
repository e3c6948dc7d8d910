"""Shared helpers for results: run targets, breakdown targets, chart dispatch, export responses."""

import re

import pytest

from app.api.replies import attachment
from app.exports import files
from app.results import charts
from app.results.averages import breakdown
from app.results.averages import latency_samples
from app.results.averages import model_averages
from app.results.averages import run_targets
from app.results.averages import targets_from_averages
from app.results.run_charts import CHARTS
from app.results.run_charts import run_chart
from tests.factories import bulk_items
from tests.factories import make_run


@pytest.fixture
def run2(app):
    run, targets = make_run(targets=[("local", "m1"), ("openrouter", "vendor/m2")])
    for target in targets:
        bulk_items(run, target, 12)
    return run


def test_run_targets_and_targets_from_averages_agree(run2):
    averages = model_averages(run2, "score", "desc")
    assert targets_from_averages(averages) == run_targets(run2)
    assert breakdown(run2, "category") == breakdown(
        run2, "category", targets=targets_from_averages(averages)
    )


def _same(svg):
    """The SVG without pygal's random chart id."""
    return re.sub(r"chart-[0-9a-f-]{36}", "chart-id", svg)


@pytest.mark.parametrize("name", CHARTS)
def test_run_chart_matches_the_drawing_functions(run2, name):
    averages = model_averages(run2)
    expected = {
        "score": lambda: charts.score_chart(averages, True),
        "speed": lambda: charts.speed_chart(averages, True),
        "latency": lambda: charts.latency_chart(averages, latency_samples(run2), True),
        "category": lambda: charts.category_chart(breakdown(run2, "category"), True),
    }[name]()
    assert _same(run_chart(run2, name, narrow=True)) == _same(expected)
    assert _same(run_chart(run2, name, narrow=True, averages=averages)) == _same(expected)


def test_run_chart_refuses_an_unknown_name(run2):
    with pytest.raises(ValueError):
        run_chart(run2, "pie")


def test_export_response_streams_an_attachment(app, run2):
    with app.test_request_context():
        response = attachment(*files.download(run2, "average_csv"))
    assert response.content_type == "text/csv; charset=utf-8"
    assert response.headers["Content-Disposition"] == (
        f'attachment; filename="run-{files.safe_name(run2.run_id)}-average.csv"'
    )
