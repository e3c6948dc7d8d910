"""A finished run's figures and files worked out when the run changes, not when a person looks
(exports/warm.py): the same numbers and bytes as a fresh computation, warm after the
scheduler's pass and after `llmbench run`, warmed again after a change, and pages that still
work when warming fails."""

import datetime as dt
import json
import logging
import re

import pytest

from app import factory
from app.cli import watched_run
from app.db.connection import database
from app.db.models import COMPLETED
from app.db.models import FINISHED
from app.db.models import PENDING
from app.db.models import Item
from app.db.models import Rating
from app.db.models import Run
from app.db.models import RunFigures
from app.db.models import RunTarget
from app.exports import warm
from app.exports.kept_files import kept_markdown
from app.exports.kept_files import kept_report_text
from app.exports.kept_files import kept_summary_text
from app.exports.kept_files import summary_text
from app.exports.markdown import markdown
from app.exports.ratings import report_csv_chunks
from app.exports.report import report_html
from app.ratings.charts import CHARTS as REPORT_CHARTS
from app.ratings.charts import report_chart
from app.ratings.kept import kept_judge_check
from app.ratings.kept import kept_report_chart
from app.ratings.kept import kept_run_report
from app.ratings.report import report_with_latency
from app.results import kept
from app.results.averages import breakdown
from app.results.averages import compute_averages
from app.results.averages import kept_latency_samples
from app.results.averages import latency_samples
from app.results.averages import model_averages
from app.results.composite import DEFAULT_SETTINGS
from app.results.composite_figures import target_composites
from app.results.kept_runs import kept_goodput
from app.results.run_charts import CHARTS
from app.results.run_charts import kept_run_chart
from app.results.run_charts import run_chart
from app.results.run_speed_charts import speed_chart
from app.results.run_speed_charts import speed_chart_names
from app.results.speed import run_speed
from app.results.stability import has_repeats
from app.results.stability import kept_stability
from app.results.stability import stability
from app.results.system import system_view
from tests.cli_helpers import judge_scores
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows
from tests.cli_helpers import write_config
from tests.factories import T0
from tests.factories import add_item
from tests.factories import make_run
from tests.test_kept_figures import random_run
from tests.test_kept_figures import tried

DOWNLOADED = dt.datetime(2026, 11, 28, 12, 0, tzinfo=dt.UTC)
# pygal names each chart it draws anew (a random id): the same chart, drawn twice, differs there.
WRITES = {"INSERT", "UPDATE", "DELETE", "REPLACE"}
CHART_ID = re.compile(r"chart-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def drawn(text):
    """An SVG, or a file with SVGs inline, without the random ids pygal gives its charts."""
    return CHART_ID.sub("chart-id", text)


def everything(run):
    """What a run's pages, charts and downloads show, as they read it."""
    averages = model_averages(run)
    speed = run_speed(run, averages)
    charts = {
        (name, narrow): drawn(speed_chart(run, name, narrow))
        for name in speed_chart_names(run, speed)
        for narrow in (False, True)
    }
    charts.update(
        {
            ("timeline", t["targetId"]): drawn(speed_chart(run, "timeline", target=t["targetId"]))
            for t in speed["targets"]
        }
    )
    return {
        "averages": averages,
        "by category": breakdown(run, "category"),
        "by difficulty": breakdown(run, "difficulty"),
        "goodput": kept_goodput(run, speed=speed),
        "composites": target_composites(run, DEFAULT_SETTINGS, averages),
        "throughput": system_view(run),
        "judge check": kept_judge_check(run),
        "report": kept_run_report(run),
        "report charts": {
            (name, narrow): drawn(kept_report_chart(run, name, narrow))
            for name in REPORT_CHARTS
            for narrow in (False, True)
        },
        "stability": kept_stability(run) if has_repeats(run) else None,
        "latency": kept_latency_samples(run),
        "charts": {
            (name, narrow): drawn(kept_run_chart(run, name, narrow))
            for name in CHARTS
            for narrow in (False, True)
        },
        "speed charts": charts,
        "summary.json": kept_summary_text(run),
        "report.html": drawn(kept_report_text(run, generated_at=DOWNLOADED)),
        "results.md": "".join(kept_markdown(run)),
        "results averages.md": "".join(kept_markdown(run, detailed=False)),
    }


def worked_out_now(run):
    """The same, nothing kept: no row, nothing cached in this process."""
    kept.forget()
    RunFigures.delete().where(RunFigures.run == run).execute()
    shown = everything(run)
    kept.forget()
    RunFigures.delete().where(RunFigures.run == run).execute()
    return shown


def kept_rows(run):
    return {
        row.name: (row.stamp, row.computed_at)
        for row in RunFigures.select().where((RunFigures.run == run) & (RunFigures.name != "warm"))
    }


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("repeats", [1, 2])
def test_warmed_figures_and_files_equal_a_fresh_computation(app, seed, repeats):
    run = random_run(seed, repeats)
    fresh = worked_out_now(run)
    assert warm.keep_warm(run)
    kept.forget()  # another process: what it shows comes from the rows warming stored
    assert everything(run) == fresh


def test_the_kept_files_are_the_files_as_they_were_written_before(app):
    run = random_run(5)
    warm.warm_run(run)
    kept.forget()
    assert kept_summary_text(run) == summary_text(run)
    assert drawn(kept_report_text(run, generated_at=DOWNLOADED)) == drawn(
        report_html(run, generated_at=DOWNLOADED)
    )
    assert "".join(kept_markdown(run)) == "".join(markdown(run))
    assert "".join(report_csv_chunks(run)) == fresh_report_csv(run)
    assert "".join(kept_markdown(run, detailed=False)) == "".join(markdown(run, detailed=False))
    assert kept_latency_samples(run) == latency_samples(run)
    for name in CHARTS:
        assert drawn(kept_run_chart(run, name)) == drawn(run_chart(run, name))
    for name in REPORT_CHARTS:
        fresh = report_chart(report_with_latency(run), name)
        assert drawn(kept_report_chart(run, name)) == drawn(fresh)
    assert model_averages(run) == compute_averages(run)


def test_a_kept_stability_equals_a_fresh_one(app):
    run = random_run(5, repeats=3)
    warm.warm_run(run)
    kept.forget()
    assert kept_stability(run) == json.loads(json.dumps(stability(run)))


def fresh_report_csv(run):
    """report.csv written from the report worked out now (nothing kept)."""
    kept.forget()
    RunFigures.delete().where(RunFigures.run == run).execute()
    return "".join(report_csv_chunks(run))


def test_a_kept_report_says_when_it_was_downloaded(app):
    run = random_run(6)
    warm.warm_run(run)
    later = DOWNLOADED + dt.timedelta(days=1)
    text = kept_report_text(run, generated_at=later)
    assert drawn(text) == drawn(report_html(run, generated_at=later))
    assert "1111-01-11" not in text


def test_a_warmed_runs_pages_and_files_work_nothing_out(app, client):
    run = random_run(7)
    # As the engine records them: an answered item has an answer (Evaluate shows its card).
    answered = (Item.run == run) & Item.answered_at.is_null(False)
    Item.update(answer="an answer").where(answered & Item.answer.is_null()).execute()
    warm.keep_warm(run)
    RunFigures.update(computed_at=T0).execute()
    before = kept_rows(run)
    kept.forget()
    base = f"/runs/{run.run_id}"
    pages = [base, f"{base}/results", f"{base}/judge-check", f"{base}/report"]
    pages += [f"{base}/report/{name}.svg" for name in REPORT_CHARTS]
    pages += [f"{base}/charts/{name}.svg" for name in ("score", "speed", "latency", "category")]
    pages += [f"{base}/speed-charts/{name}.svg" for name in ("quality-speed", "ttft", "itl")]
    pages += [f"{base}/{name}" for name in ("summary.json", "report.html", "results.md")]
    pages.append(f"/evaluate?run={run.run_id}")
    first, second = RunTarget.select().where(RunTarget.run == run).order_by(RunTarget.position)[:2]
    pages.append(f"/ab?runA={run.run_id}&targetA={first.id}&targetB={second.id}")
    for page in pages:
        response = client.get(page)
        assert response.status_code == 200, page
        response.get_data()  # a download is streamed: read it to its end
    assert kept_rows(run) == before


def test_a_finished_run_is_warm_after_the_schedulers_pass(app, monkeypatch):
    monkeypatch.setitem(warm._state, "passed", None)  # no pass a moment ago
    run = random_run(8)
    assert not warm.is_warm(run)
    warm.on_tick(app.config).join(30)
    assert warm.is_warm(run)
    marker = json.loads(RunFigures.get(RunFigures.name == "warm").figures)
    assert set(marker) == {"seconds", "cpuSeconds"}  # what warming took, for a bench to read


def test_the_app_hands_the_warm_pass_to_the_scheduler(app, monkeypatch):
    started = {}
    monkeypatch.setattr(factory.scheduler, "start", lambda config, hooks: started.update(h=hooks))
    factory.create_app({**app.config, "SCHEDULER_ENABLED": True})
    assert warm.on_tick in started["h"]


def test_an_unchanged_run_is_checked_not_warmed_again(app):
    run = random_run(9)
    assert warm.warm_due() == [run.run_id]
    assert warm.warm_due() == []


def test_one_run_is_warmed_a_pass_the_newest_first(app):
    older, newer = random_run(10), random_run(11)
    Run.update(finished_at=T0).where(Run.id == older.id).execute()
    Run.update(finished_at=T0 + dt.timedelta(hours=1)).where(Run.id == newer.id).execute()
    assert warm.warm_due() == [newer.run_id]
    assert warm.warm_due() == [older.run_id]
    assert warm.warm_due() == []


def looked_at(monkeypatch):
    """The ids of the runs each warm pass checks, in order, from now on."""
    looked = []
    check = warm.keep_warm
    monkeypatch.setattr(warm, "keep_warm", lambda run, *a: looked.append(run.id) or check(run, *a))
    return looked


def warmed_runs(seeds):
    runs = [random_run(seed) for seed in seeds]
    while warm.warm_due():
        pass
    return runs


def test_a_pass_looks_again_at_only_a_few_warmed_runs_the_ones_checked_longest_ago(
    app, monkeypatch
):
    runs = warmed_runs((20, 21, 22))
    looked = looked_at(monkeypatch)
    assert warm.warm_due(recheck=2) == []
    first = list(looked)
    assert warm.warm_due(recheck=2) == []
    second = looked[len(first) :]
    assert len(first) == len(second) == 2
    # The one the first pass left out goes first, then the one checked longest ago.
    assert set(first) | {second[0]} == {run.id for run in runs}
    assert second[1] == first[0]


def test_a_pass_over_unchanged_warmed_runs_writes_nothing(app, monkeypatch, caplog):
    runs = warmed_runs((23, 24))
    looked = looked_at(monkeypatch)
    before = list(RunFigures.select().order_by(RunFigures.id).tuples())
    with caplog.at_level(logging.DEBUG, logger="peewee"):
        assert warm.warm_due() == []
        assert warm.warm_due() == []
    statements = [r.msg[0] for r in caplog.records if r.name == "peewee" and r.msg]
    writes = [s for s in statements if s.split(None, 1)[0].upper() in WRITES]
    assert sorted(set(looked)) == sorted(run.id for run in runs)  # it looked at every run
    assert writes == []
    assert list(RunFigures.select().order_by(RunFigures.id).tuples()) == before


def test_a_changed_run_is_warmed_again_when_its_turn_comes(app, monkeypatch):
    runs = warmed_runs((25, 26, 27))
    looked = looked_at(monkeypatch)
    assert warm.warm_due(recheck=2) == []
    last = Run.get_by_id(looked[-1])
    item = Item.select().where((Item.run == last) & (Item.status == COMPLETED)).first()
    # Changed, but checked the most recently (an item scored again in place: no finish, no
    # rating, nothing a query finds ahead of its turn).
    later = T0 + dt.timedelta(hours=1)
    Item.update(evaluation_score=1.0, updated_at=later).where(Item.id == item.id).execute()
    assert warm.warm_due(recheck=2) == []  # the other two runs' turn
    assert warm.warm_due(recheck=2) == [last.run_id]
    assert warm.is_warm(last)
    assert all(warm.is_warm(run) for run in runs)


def test_a_rejudged_item_makes_the_next_pass_warm_the_run_again(app):
    run, (t,) = make_run("warm-rejudge")
    first = add_item(run, t, "a", score=10.0, **tried())
    add_item(run, t, "b", score=20.0, **tried())
    warm.warm_due()
    Item.update(evaluation_score=90.0, updated_at=T0 + dt.timedelta(seconds=5)).where(
        Item.id == first.id
    ).execute()
    assert not warm.is_warm(run)
    assert warm.warm_due() == [run.run_id]
    assert json.loads(kept_summary_text(run))["models"][0]["avgScore"] == 55.0


def test_a_new_rating_makes_the_next_pass_warm_the_run_again(app):
    run = random_run(12)
    warm.warm_due()
    item = Item.select().where((Item.run == run) & (Item.status == COMPLETED)).first()
    Rating.create(item=item, run=run, rating=4)
    assert not warm.is_warm(run)
    assert warm.warm_due() == [run.run_id]
    kept.forget()
    assert json.loads(kept_summary_text(run)) == json.loads(summary_text(run))


def test_a_continued_run_is_not_warmed_while_it_works_and_is_when_it_finishes(app):
    run, (t,) = make_run("warm-continue")
    add_item(run, t, "a", score=10.0, **tried())
    warm.warm_due()
    Run.update(status=PENDING).where(Run.id == run.id).execute()
    add_item(run, t, "b", score=30.0, **tried(T0 + dt.timedelta(seconds=1)))
    assert warm.warm_due() == []
    Run.update(status=FINISHED).where(Run.id == run.id).execute()
    assert warm.warm_due() == [run.run_id]
    assert model_averages(Run.get_by_id(run.id))[0]["avg_score"] == 20.0


def test_a_working_run_is_not_warmed(app):
    run, (t,) = make_run("warm-working", status=PENDING)
    add_item(run, t, "a", score=10.0, **tried())
    assert not warm.keep_warm(run)
    assert RunFigures.select().where(RunFigures.run == run).count() == 0


def test_a_failing_warm_is_logged_and_the_pages_work_it_out_themselves(
    app, client, monkeypatch, caplog
):
    run = random_run(13)

    def broken(run):
        raise RuntimeError("no judge check today")

    monkeypatch.setattr(warm, "kept_judge_check", broken)
    assert warm.warm_due() == []
    assert "not warmed" in caplog.text
    assert warm.warm_due() == []  # marked: not tried again until the run changes
    kept.forget()
    page = client.get(f"/runs/{run.run_id}/results")
    assert page.status_code == 200
    assert client.get(f"/runs/{run.run_id}/summary.json").get_json()["runId"] == run.run_id


def test_a_finished_run_is_warm_after_llmbench_run_ends(tmp_path, fake, monkeypatch):
    monkeypatch.setattr(watched_run, "WARM_FROM_ITEMS", 1)
    fake.responder = judge_scores({"m1": 70, "m2": 90})
    cli = make_cli(tmp_path)
    result = cli("run", "-c", write_config(tmp_path, fake))
    assert result.exit_code == 0, result.output
    (run,) = rows(Run)
    with database.connection_context():
        assert warm.is_warm(run)
