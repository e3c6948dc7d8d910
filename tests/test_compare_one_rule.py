"""One compare: the task lists under "Regressions" and "Improvements" follow the verdict's own
rule (evidence and size), every smaller move is a change below the threshold, and the page, the
JSON API and the compare function say the same on the same two runs."""

import pytest
from bs4 import BeautifulSoup

from app.results.compare import compare_runs
from app.results.compare import split_changes
from tests.factories import add_item
from tests.factories import make_run

TASKS = 12


def _runs(score_b):
    """Run a and run b over the same TASKS tasks of one target; b's score of task n is
    score_b(n) where a scored 36."""
    run_a, (ta,) = make_run("cmp-a")
    run_b, (tb,) = make_run("cmp-b")
    for n in range(TASKS):
        add_item(run_a, ta, f"coding_{n:03d}", score=36)
        add_item(run_b, tb, f"coding_{n:03d}", score=score_b(n))
    return run_a, run_b


@pytest.fixture
def small_drop(app):
    """coding_007 goes 36 -> 34; nothing else moves: no significant change."""
    return _runs(lambda n: 34 if n == 7 else 36)


@pytest.fixture
def big_drop(app):
    """Every task drops 10 points: significantly worse, a regression."""
    return _runs(lambda n: 26)


def test_a_small_drop_under_no_significant_change_is_not_a_regression(small_drop):
    result = compare_runs(*small_drop)
    assert result["models"][0]["verdict"] == "no significant change"
    assert result["regressionsCount"] == 0 and result["improvementsCount"] == 0
    assert [c["taskKey"] for c in result["belowThreshold"]] == ["coding_007"]


def test_a_significant_drop_lists_every_task_that_fell_more_than_the_threshold(big_drop):
    result = compare_runs(*big_drop)
    assert result["models"][0]["verdict"] == "worse"
    assert result["regressionsCount"] == TASKS and result["belowThresholdCount"] == 0


def test_a_drop_within_the_threshold_is_below_it_even_when_the_model_is_worse():
    change = {"label": "local/m1", "taskKey": "t", "delta": -5.0}
    lists = split_changes([change], {"local/m1": "worse"})
    assert lists["below"] == [change] and not lists["regressions"]


def test_the_rule_is_stated_with_the_lists(small_drop):
    assert "more than 5 points" in compare_runs(*small_drop)["listRule"]


def _page(client):
    return BeautifulSoup(
        client.get("/compare?a=cmp-a&b=cmp-b").get_data(as_text=True), "html.parser"
    )


@pytest.mark.parametrize("case", ["small_drop", "big_drop"])
def test_the_page_and_the_api_list_what_the_compare_function_lists(client, request, case):
    result = compare_runs(*request.getfixturevalue(case), limit=25)
    page = _page(client)
    headings = {h.get_text(" ", strip=True) for h in page.select("section.card h2")}
    assert f"Regressions ({result['regressionsCount']})" in headings
    assert f"Improvements ({result['improvementsCount']})" in headings
    below = page.select_one("details#cmp-below")
    if result["belowThresholdCount"]:
        assert below is not None and not below.has_attr("open")
        shown = [a.get_text() for a in below.select("tbody th a")]
        assert shown == [c["taskKey"] for c in result["belowThreshold"]]
    else:
        assert below is None
    api = client.get("/api/compare?a=cmp-a&b=cmp-b").get_json()
    for key in ("regressionsCount", "improvementsCount", "belowThresholdCount"):
        assert api[key] == result[key]
    assert api["models"][0]["verdict"] == result["models"][0]["verdict"]


def test_the_page_states_the_list_rule(client, small_drop):
    assert "more than 5 points" in _page(client).select_one("#cmp-list-rule").get_text()


@pytest.mark.parametrize("case", ["small_drop", "big_drop"])
def test_the_markdown_lists_what_the_compare_function_lists(client, request, case):
    result = compare_runs(*request.getfixturevalue(case), limit=25)
    text = client.get("/compare.md?a=cmp-a&b=cmp-b").get_data(as_text=True)
    assert f"## Regressions ({result['regressionsCount']})" in text
    assert f"## Improvements ({result['improvementsCount']})" in text
    assert f"## Changes below the threshold ({result['belowThresholdCount']})" in text
    assert result["models"][0]["verdict"] in text and result["listRule"] in text
