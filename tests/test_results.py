"""app.results: averages, breakdowns and the SQL-paginated detailed table."""

import pytest

from app.db.models import FAILED
from app.db.models import NEW
from app.db.models import Item
from app.errors import ValidationError
from app.results import clustered
from app.results.averages import breakdown
from app.results.averages import latency_samples
from app.results.averages import model_averages
from app.results.table import category_total
from app.results.table import parse_table_args
from app.results.table import results_page
from app.runs.queries import get_run
from tests.factories import add_item
from tests.factories import bulk_items
from tests.factories import make_run


@pytest.fixture
def run3(app):
    """Two models: m1 scores 90/70 plus a judge failure and an answer failure; m2 scores 50."""
    run, (t1, t2) = make_run(targets=[("local", "m1"), ("remote", "m2")])
    add_item(
        run,
        t1,
        "a",
        score=90,
        category="math",
        difficulty="hard",
        time_taken_ms=1000,
        tokens_per_second=40,
        cost_usd=0.01,
    )
    add_item(
        run,
        t1,
        "b",
        score=70,
        category="code",
        difficulty="easy",
        time_taken_ms=3000,
        tokens_per_second=20,
        cost_usd=0.02,
    )
    add_item(
        run,
        t1,
        "c",
        status=FAILED,
        error_stage="judge",
        error_msg="bad json",
        time_taken_ms=2000,
        category="math",
        difficulty="hard",
    )
    add_item(
        run,
        t1,
        "d",
        status=FAILED,
        error_stage="answer",
        error_msg="HTTP 500",
        time_taken_ms=99999,
        category="code",
        difficulty="easy",
    )
    add_item(
        run,
        t2,
        "a",
        score=50,
        category="math",
        difficulty="hard",
        time_taken_ms=500,
        tokens_per_second=80,
    )
    add_item(run, t2, "b", status=NEW, category="code", difficulty="easy")
    return run, t1, t2


def test_model_averages_one_row_per_model_in_run_order(run3):
    run, t1, t2 = run3
    rows = model_averages(run)
    assert [r["label"] for r in rows] == ["local/m1", "remote/m2"]


def test_judge_failures_are_counted_apart_and_not_averaged_as_low_scores(run3):
    run, _, _ = run3
    m1 = model_averages(run)[0]
    assert m1["avg_score"] == 80
    assert m1["failed_judge"] == 1
    assert m1["failed_answer"] == 1
    assert m1["completed"] == 2
    assert m1["item_count"] == 4


def test_answer_failures_carry_no_speed(run3):
    run, _, _ = run3
    m1 = model_averages(run)[0]
    # 1000, 3000 and the judge-failed item's 2000; the failed answer's 99999 is left out.
    assert m1["avg_time_ms"] == 2000
    assert m1["avg_tokens_per_second"] == 30


def test_pending_items_are_counted(run3):
    run, _, _ = run3
    assert model_averages(run)[1]["pending"] == 1


def test_model_averages_have_a_bootstrap_ci(run3):
    run, _, _ = run3
    m1 = model_averages(run)[0]
    assert 70 <= m1["ci_low"] <= 80 <= m1["ci_high"] <= 90


def test_model_averages_ci_is_cached_without_refetching_scores(run3, monkeypatch):
    run, _, _ = run3
    first = model_averages(run)
    calls = []
    monkeypatch.setattr(clustered, "histogram_mean_ci", lambda *a: calls.append(a) or (0, 0))
    second = model_averages(run)
    assert calls == []
    assert [r["ci_low"] for r in first] == [r["ci_low"] for r in second]


@pytest.mark.parametrize(
    "sort, direction, expected",
    [
        ("score", "desc", ["local/m1", "remote/m2"]),
        ("score", "asc", ["remote/m2", "local/m1"]),
        ("time", "asc", ["remote/m2", "local/m1"]),
    ],
)
def test_model_averages_sortable(run3, sort, direction, expected):
    run, _, _ = run3
    assert [r["label"] for r in model_averages(run, sort, direction)] == expected


def test_breakdown_by_category_per_model(run3):
    run, _, _ = run3
    table = breakdown(run, "category")
    assert table["keys"] == ["code", "math"]
    math = table["rows"][1]
    assert [c["avg"] for c in math["cells"]] == [90, 50]
    assert math["cells"][0]["failed_judge"] == 1
    assert math["avg"] == 70


def test_breakdown_by_difficulty_orders_easy_to_hard(run3):
    run, _, _ = run3
    assert breakdown(run, "difficulty")["keys"] == ["easy", "hard"]


def test_breakdown_rejects_an_unknown_dimension(run3):
    run, _, _ = run3
    with pytest.raises(ValidationError):
        breakdown(run, "colour")


@pytest.mark.parametrize(
    "sort, direction, expected",
    [
        ("score", "desc", ["a", "b", "a", "b", "d", "c"]),  # ties: id in the same direction
        ("task", "asc", ["a", "a", "b", "b", "c", "d"]),
        ("time", "asc", ["a", "a", "c", "b", "d", "b"]),
    ],
)
def test_results_page_sorts_with_nulls_last(run3, sort, direction, expected):
    run, _, _ = run3
    page = results_page(run, sort, {}, 1, 50, direction=direction)
    assert [r["task_key"] for r in page.rows] == expected


def test_results_page_minus_prefix_means_descending(run3):
    run, _, _ = run3
    page = results_page(run, "-score", {}, 1, 50)
    assert page.dir == "desc"
    assert page.rows[0]["evaluation_score"] == 90


@pytest.mark.parametrize(
    "filters, expected",
    [
        ({"status": "COMPLETED"}, 3),
        ({"status": "judge_failed"}, 1),
        ({"status": "answer_failed"}, 1),
        ({"category": "math"}, 3),
        ({"difficulty": "easy"}, 3),
        ({"model": "remote/m2"}, 2),
        ({"min_score": 60}, 2),
        ({"min_score": 60, "max_score": 80}, 1),
    ],
)
def test_results_page_filters(run3, filters, expected):
    run, _, _ = run3
    assert results_page(run, "task", filters, 1, 50).total == expected


def test_results_page_filters_by_target_id(run3):
    run, t1, _ = run3
    assert results_page(run, "task", {"model": str(t1.id)}, 1, 50).total == 4


def test_results_page_paginates_in_sql(app):
    run, (target,) = make_run()
    bulk_items(run, target, 120)
    page = results_page(run, "task", {}, 3, 50)
    assert (page.total, page.pages, page.page, len(page.rows)) == (120, 3, 3, 20)
    assert page.rows[0]["task_key"] == "t000100"
    assert (page.first_index, page.last_index, page.has_next, page.has_prev) == (
        101,
        120,
        False,
        True,
    )


def test_results_page_clamps_a_page_past_the_end(app):
    run, (target,) = make_run()
    bulk_items(run, target, 10)
    assert results_page(run, "task", {}, 99, 25).page == 1


def test_results_page_tiebreak_is_stable_on_id(app):
    run, (target,) = make_run()
    bulk_items(run, target, 30, score_of=lambda n: 50.0)
    ids = [r["id"] for r in results_page(run, "score", {}, 1, 50).rows]
    assert ids == sorted(ids)


def test_results_page_selects_previews_not_raw_payloads(run3):
    run, _, _ = run3
    row = results_page(run, "task", {}, 1, 50).rows[0]
    assert "response_raw" not in row and "judge_raw" not in row and "answer" not in row


def test_parse_table_args_defaults():
    parsed = parse_table_args({})
    assert parsed == {"sort": "model", "dir": "asc", "page": 1, "per_page": 50, "filters": {}}


def test_parse_table_args_names_every_bad_parameter():
    with pytest.raises(ValidationError) as info:
        parse_table_args(
            {
                "sort": "colour",
                "dir": "up",
                "page": "0",
                "status": "DONE",
                "min_score": "high",
                "per_page": "7",
            }
        )
    fields = [e["field"] for e in info.value.errors]
    assert fields == ["sort", "dir", "page", "per_page", "status", "min_score"]


def test_parse_table_args_ignores_empty_form_fields():
    parsed = parse_table_args({"model": "", "status": "", "min_score": " "})
    assert parsed["filters"] == {}


def test_latency_samples_are_bounded(app):
    run, (target,) = make_run()
    bulk_items(run, target, 500)
    samples = latency_samples(run, buckets=50)[target.id]
    assert 50 <= len(samples) <= 52
    assert samples == sorted(samples)
    times = [500.0 + (n * 37) % 900 for n in range(500)]
    assert (samples[0], samples[-1]) == (min(times), max(times))


def test_get_run_unknown_is_not_found(app):
    from app.errors import NotFound

    with pytest.raises(NotFound):
        get_run("nope")


def test_category_total_is_the_breakdowns_item_count_for_a_category_filter_alone(run3):
    run, _, _ = run3
    by_category = breakdown(run, "category")
    # Every math item of both models, its judge failure among them.
    expected = Item.select().where((Item.run == run) & (Item.category == "math")).count()
    assert category_total(by_category, {"category": "math"}) == expected == 3
    assert category_total(by_category, {"category": "no such category"}) == 0
    assert category_total(by_category, {"category": "math", "model": "m1"}) is None
    assert category_total(by_category, {}) is None
