"""Trends from per-run aggregates: numbers checked by hand, comparability breaks, filters."""

import datetime as dt
from types import SimpleNamespace

import pytest

from app.db.models import Collection
from app.db.models import Run
from app.db.models import RunAggregate
from app.results.aggregates import series_names
from app.schedules.digest import digest_finished
from app.schedules.trends import filter_choices
from app.schedules.trends import trends
from tests.over_time import T0
from tests.over_time import finished_run

DAY = dt.timedelta(days=1)


def cat(task):
    return ("math", "code")[task % 2]


@pytest.fixture
def three_runs(app):
    # r1 and r2 share judge and tasks; r3 has another judge. Tasks alternate math / code.
    finished_run("r1", {"local/m1": [60, 80], "local/m2": [40, 40]}, category_of=cat, ttft=100)
    finished_run("r2", {"local/m1": [70, 90]}, finished_at=T0 + DAY, category_of=cat, tps=50)
    finished_run(
        "r3",
        {"local/m1": [100, 100]},
        finished_at=T0 + 2 * DAY,
        judge_model="judge-2",
        category_of=cat,
    )
    digest_finished(T0 + 3 * DAY)


def series(data, name):
    return next(s for s in data["series"] if s["target"] == name)


def test_each_run_stores_one_aggregate_per_target_and_category(three_runs):
    # r1: two targets x (all + math + code); r2 and r3: one target x 3.
    assert RunAggregate.select().count() == 6 + 3 + 3


def test_a_point_holds_the_runs_numbers_checked_by_hand(three_runs):
    point = series(trends(), "local/m1")["points"][0]
    assert point["runId"] == "r1"
    assert point["score"] == 70.0  # (60 + 80) / 2
    # Two tasks: the bootstrap means are 60, 70 or 80 (1/4, 1/2, 1/4): the 95 % CI is 60..80.
    assert (point["ciLow"], point["ciHigh"]) == (60.0, 80.0)
    assert point["n"] == 2 and point["tasks"] == 2
    assert point["tokensPerSecond"] == 40.0 and point["ttftMs"] == 100.0
    assert point["finishedAt"] == "2025-04-01T03:00:00.000Z"


def test_points_follow_the_runs_in_time(three_runs):
    m1 = series(trends(), "local/m1")
    assert [p["runId"] for p in m1["points"]] == ["r1", "r2", "r3"]
    assert [p["score"] for p in m1["points"]] == [70.0, 80.0, 100.0]
    assert m1["points"][1]["tokensPerSecond"] == 50.0


def test_a_change_of_judge_breaks_the_line_and_says_why(three_runs):
    points = series(trends(), "local/m1")["points"]
    assert [p["comparable"] for p in points] == [True, True, False]
    assert points[2]["breakReason"] == "judge changed: judgeprov/judge-1 → judgeprov/judge-2"


def test_a_run_without_a_judge_reads_checks_only_where_its_judge_would_be(app):
    finished_run("judged", {"local/m1": [50, 50]})
    finished_run("checked", {"local/m1": [50, 50]}, finished_at=T0 + DAY, judge_model="")
    Run.update(judge_provider_name="").where(Run.run_id == "checked").execute()
    digest_finished(T0 + DAY)
    (_first, second) = series(trends(), "local/m1")["points"]
    assert second["judge"] == "— (checks only)"
    assert second["breakReason"] == "judge changed: judgeprov/judge-1 → — (checks only)"
    assert trends({"judge": "— (checks only)"})["series"][0]["points"][0]["runId"] == "checked"


def test_a_judge_free_run_digested_with_the_old_label_reads_checks_only_too(app):
    finished_run("judged", {"local/m1": [50, 50]})
    finished_run("checked", {"local/m1": [50, 50]}, finished_at=T0 + DAY, judge_model="")
    digest_finished(T0 + DAY)
    old = Run.get(Run.run_id == "checked")
    RunAggregate.update(judge_label="/").where(RunAggregate.run == old.id).execute()
    (_first, second) = series(trends(), "local/m1")["points"]
    assert second["judge"] == "— (checks only)"
    assert second["breakReason"] == "judge changed: judgeprov/judge-1 → — (checks only)"
    assert sorted(filter_choices()["judges"]) == ["judgeprov/judge-1", "— (checks only)"]
    assert trends({"judge": "— (checks only)"})["series"][0]["points"][0]["runId"] == "checked"


def test_a_change_of_tasks_breaks_the_line(app):
    finished_run("a", {"local/m1": [50, 50]})
    finished_run("b", {"local/m1": [50, 50]}, finished_at=T0 + DAY, dataset_hash="e" * 64)
    digest_finished(T0 + DAY)
    (_first, second) = series(trends(), "local/m1")["points"]
    assert not second["comparable"] and second["breakReason"].startswith("tasks changed")


def test_a_category_has_its_own_points(three_runs):
    data = trends({"category": "math"})
    points = series(data, "local/m1")["points"]
    assert [p["score"] for p in points] == [60.0, 70.0, 100.0]  # task 0 is math
    assert data["category"] == "math"


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"model": "m2"}, {"local/m2": ["r1"]}),
        ({"judge": "judge-2"}, {"local/m1": ["r3"]}),
        ({"judge": "judgeprov/judge-1"}, {"local/m1": ["r1", "r2"], "local/m2": ["r1"]}),
        ({"from": "2025-04-02"}, {"local/m1": ["r2", "r3"]}),
        ({"to": "2025-04-01"}, {"local/m1": ["r1"], "local/m2": ["r1"]}),
    ],
)
def test_filters_pick_the_runs(three_runs, filters, expected):
    data = trends(filters)
    got = {s["target"]: [p["runId"] for p in s["points"]] for s in data["series"]}
    assert got == expected


def test_the_collection_filter_takes_only_its_runs(app):
    other = Collection.create(name="other")
    finished_run("in", {"local/m1": [50]})
    finished_run("out", {"local/m1": [50]}, finished_at=T0 + DAY, collection=other)
    digest_finished(T0 + DAY)
    data = trends({"collection": "bench"})
    assert [p["runId"] for p in series(data, "local/m1")["points"]] == ["in"]


def test_the_api_answers_the_trends_shape(three_runs, client):
    data = client.get("/api/trends?model=m1").get_json()
    (m1,) = data["series"]
    assert m1["target"] == "local/m1" and m1["model"] == "m1"
    assert set(m1["points"][0]) >= {
        "runId",
        "finishedAt",
        "score",
        "ciLow",
        "ciHigh",
        "n",
        "tokensPerSecond",
        "ttftMs",
        "comparable",
    }


@pytest.mark.parametrize(
    ("query", "field"), [("from=yesterday", "from"), ("collection=nope", "collection")]
)
def test_a_bad_trends_filter_is_a_400_naming_it(three_runs, client, query, field):
    reply = client.get(f"/api/trends?{query}")
    assert reply.status_code == 400 and reply.get_json()["errors"][0]["field"] == field


def test_an_unknown_trends_parameter_is_a_400(client):
    reply = client.get("/api/trends?colour=red")
    assert reply.status_code == 400 and reply.get_json()["errors"][0]["field"] == "colour"


def test_the_same_model_twice_in_a_run_makes_two_series():
    # Two parameter profiles of one model (issue 11) are two lines, told apart by their params.
    targets = [
        SimpleNamespace(id=1, provider_name="local", model="m1", params={"temperature": 0}),
        SimpleNamespace(id=2, provider_name="local", model="m1", params={"temperature": 1}),
        SimpleNamespace(id=3, provider_name="local", model="m2", params=None),
    ]
    names = series_names(targets)
    assert names[3] == "local/m2"
    assert names[1] != names[2] and names[1].startswith("local/m1 ")
