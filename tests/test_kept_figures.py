"""The figures a run's results page works out from every item, kept (RunFigures,
results/kept.py): the same numbers as a fresh computation, CIs included, read back while the
run has not changed, worked out again when it has."""

import datetime as dt
import json
import random
import statistics
from collections import Counter

import pytest

from app.db.models import COMPLETED
from app.db.models import CONTROL_RUNNING
from app.db.models import FAILED
from app.db.models import NEW
from app.db.models import PENDING
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.db.models import JudgeCall
from app.db.models import JudgeJob
from app.db.models import Rating
from app.db.models import RunFigures
from app.ratings.judge_check import judge_check
from app.ratings.kept import _judge_check_stamp
from app.ratings.kept import kept_judge_check
from app.ratings.kept import kept_run_report
from app.ratings.report import run_report
from app.ratings.votes import change_vote
from app.ratings.votes import record_vote
from app.results import kept
from app.results.averages import ESTIMATE
from app.results.averages import breakdown
from app.results.averages import compute_averages
from app.results.averages import item_groups
from app.results.averages import model_averages
from app.results.clustered import histogram_mean_ci
from app.results.compare import compare_runs
from app.results.composite_figures import target_composites
from app.results.kept_compare import kept_compare_runs
from app.results.system import system_view
from app.runs.control import delete_run
from app.sysmetrics.store import SampleStore
from tests.factories import T0
from tests.factories import add_item
from tests.factories import make_run
from tests.factories import shown_pair


def tried(when=T0, **fields):
    return {"last_attempt_at": when, "updated_at": when, "answered_at": when, **fields}


def random_run(seed, repeats=1):
    """A finished run of 1-3 targets with random scores, times and failures."""
    rng = random.Random(seed)
    targets = [("local", f"m{n}") for n in range(rng.randint(1, 3))]
    settings = {"repeats": repeats, "latencyTargetMs": rng.choice((None, 2000.0))}
    run, made = make_run(f"kept-{seed}-{repeats}", targets=targets, settings=settings)
    for target in made:
        for n in range(rng.randint(1, 30)):
            for _ in range(repeats):
                category = rng.choice(("math", "code", ""))
                difficulty = rng.choice(("easy", "hard", "expert"))
                if rng.random() < 0.15:
                    stage = rng.choice(("answer", "judge"))
                    add_item(
                        run,
                        target,
                        f"t{n}",
                        status=FAILED,
                        error_stage=stage,
                        category=category,
                        difficulty=difficulty,
                        **tried(),
                    )
                    continue
                add_item(
                    run,
                    target,
                    f"t{n}",
                    score=float(rng.randint(0, 100)),
                    category=category,
                    difficulty=difficulty,
                    time_taken_ms=rng.uniform(100, 5000),
                    tokens_per_second=rng.uniform(5, 90),
                    cost_usd=rng.uniform(0, 0.01),
                    **tried(T0 + dt.timedelta(seconds=rng.uniform(0, 600))),
                )
    return run


def forget():
    """What a new process (another gunicorn worker, the CLI) starts with: nothing cached."""
    kept.forget()


def fresh(run, fn):
    """`fn(run)` worked out from the items: nothing cached, nothing stored."""
    forget()
    RunFigures.delete().where(RunFigures.run == run).execute()
    return fn(run)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("repeats", [1, 3])
def test_kept_averages_equal_todays_computation_cis_included(app, seed, repeats):
    run = random_run(seed, repeats)
    today = compute_averages(run)
    assert model_averages(run) == today  # worked out, stored
    forget()
    assert model_averages(run) == today  # read back from the row
    assert model_averages(run) == today  # from this process's cache
    assert any(row["ci_low"] is not None for row in today) or not any(
        row["score_n"] for row in today
    )


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("by", ["category", "difficulty"])
def test_kept_breakdowns_equal_a_fresh_computation(app, seed, by):
    run = random_run(seed)
    first = breakdown(run, by)
    forget()
    assert breakdown(run, by) == first
    assert fresh(run, lambda r: breakdown(r, by)) == first


@pytest.mark.parametrize("seed", range(4))
def test_kept_composites_use_the_median_of_every_measured_answer(app, seed):
    run = random_run(seed)
    times = {}
    for item in Item.select().where((Item.run == run) & (Item.status == COMPLETED)):
        times.setdefault(item.target_id, []).append(item.time_taken_ms)
    first = target_composites(run)
    forget()
    again = target_composites(run)
    for target_id, composite in again.items():
        assert composite == first[target_id]
        if composite is not None and target_id in times:
            assert composite.median_time_ms == statistics.median(times[target_id])


def test_a_view_whose_stamp_holds_reads_the_stored_row_not_the_items(app):
    run = random_run(10)
    model_averages(run)
    forget()
    row = RunFigures.get((RunFigures.run == run) & (RunFigures.name == "averages"))
    marked = [{**r, "model": "from the row"} for r in json.loads(row.figures)]
    RunFigures.update(figures=json.dumps(marked)).where(RunFigures.id == row.id).execute()
    assert {r["model"] for r in model_averages(run)} == {"from the row"}


def test_a_rejudged_item_makes_the_figures_worked_out_again(app):
    run, (t,) = make_run("kept-rejudge")
    first = add_item(run, t, "a", score=10.0, **tried())
    add_item(run, t, "b", score=20.0, **tried())
    assert model_averages(run)[0]["avg_score"] == 15.0
    Item.update(evaluation_score=90.0, updated_at=T0 + dt.timedelta(seconds=5)).where(
        Item.id == first.id
    ).execute()
    forget()
    assert model_averages(run)[0]["avg_score"] == 55.0
    assert breakdown(run, "category")["rows"][0]["avg"] == 55.0


def test_a_change_in_the_same_instant_is_seen_by_the_item_counts(app):
    run, (t,) = make_run("kept-instant")
    first = add_item(run, t, "a", score=10.0, **tried())
    add_item(run, t, "b", score=20.0, **tried())
    assert model_averages(run)[0]["failed"] == 0
    Item.update(status=FAILED, error_stage="judge", evaluation_score=None).where(
        Item.id == first.id
    ).execute()
    forget()
    assert (model_averages(run)[0]["failed"], model_averages(run)[0]["avg_score"]) == (1, 20.0)


def test_a_new_item_makes_the_figures_worked_out_again(app):
    run, (t,) = make_run("kept-new")
    add_item(run, t, "a", score=10.0, **tried())
    assert model_averages(run)[0]["item_count"] == 1
    add_item(run, t, "b", score=30.0, **tried())
    assert (model_averages(run)[0]["item_count"], model_averages(run)[0]["avg_score"]) == (2, 20.0)


def test_a_changed_latency_target_changes_the_kept_composite(app):
    run, (t,) = make_run("kept-target", settings={"latencyTargetMs": 100.0})
    add_item(run, t, "a", score=50.0, time_taken_ms=500.0, **tried())
    missed = target_composites(run)[t.id]
    run.settings = {"latencyTargetMs": 1000.0}
    run.save()
    assert target_composites(run)[t.id] != missed


def test_a_working_run_keeps_no_figures_in_the_database(app):
    run, (t,) = make_run("kept-working", status=PENDING, control=CONTROL_RUNNING)
    add_item(run, t, "a", score=10.0, **tried())
    assert model_averages(run)[0]["avg_score"] == 10.0
    assert RunFigures.select().where(RunFigures.run == run).count() == 0


def test_one_row_per_run_and_kind_the_latest_figures(app):
    run, (t,) = make_run("kept-one")
    add_item(run, t, "a", score=10.0, **tried())
    model_averages(run)
    add_item(run, t, "b", score=30.0, **tried(T0 + dt.timedelta(seconds=1)))
    model_averages(run)
    system_view(run)
    names = [r.name for r in RunFigures.select().where(RunFigures.run == run)]
    assert sorted(names) == ["averages", "throughput"]
    row = RunFigures.get((RunFigures.run == run) & (RunFigures.name == "averages"))
    assert json.loads(row.figures)[0]["item_count"] == 2


def test_the_system_charts_follow_a_new_sample_and_a_new_answer(app):
    # Drawn once per state of the run: its items (the throughput) and its samples.
    run, (t,) = make_run("kept-system")
    add_item(run, t, "a", score=10.0, **tried(tokens_per_second=20.0))
    store = SampleStore(run.id)
    store({"t": 1000.0, "cpuPercent": 10.0, "ramUsedGb": 4.0, "rssMb": 100.0})
    first = system_view(run)["charts"]
    assert system_view(run)["charts"] == first
    store({"t": 1002.0, "cpuPercent": 90.0, "ramUsedGb": 4.0, "rssMb": 100.0})
    second = system_view(run)["charts"]
    assert second["load"] != first["load"]
    later = T0 + dt.timedelta(seconds=50)
    add_item(run, t, "b", score=30.0, **tried(later, tokens_per_second=80.0))
    assert system_view(run)["charts"]["throughput"] != second["throughput"]


def test_the_kept_report_equals_todays_and_follows_a_new_rating(app):
    run = random_run(7)
    assert kept_run_report(run) == run_report(run)
    item = Item.select().where((Item.run == run) & (Item.status == COMPLETED)).first()
    Rating.create(item=item, run=run, rating=4)
    forget()
    report = kept_run_report(run)
    assert report == run_report(run)
    assert sum(row["ratings"] for row in report["targets"]) == 1


def test_a_kept_compare_equals_todays_and_follows_a_change_in_run_b(app):
    run_a, run_b = random_run(11), random_run(12)
    today = json.loads(json.dumps(compare_runs(run_a, run_b)))
    assert kept_compare_runs(run_a, run_b) == today
    forget()
    assert kept_compare_runs(run_a, run_b) == today
    item = Item.select().where((Item.run == run_b) & (Item.status == COMPLETED)).first()
    Item.update(evaluation_score=100.0 - item.evaluation_score, updated_at=T0).where(
        Item.id == item.id
    ).execute()
    forget()
    assert kept_compare_runs(run_a, run_b) == json.loads(json.dumps(compare_runs(run_a, run_b)))


def test_the_kept_judge_check_equals_todays_and_follows_a_new_rating(app):
    run = random_run(8)
    today = json.loads(json.dumps(judge_check(run.run_id)))
    assert kept_judge_check(run) == today
    item = Item.select().where((Item.run == run) & (Item.status == COMPLETED)).first()
    Rating.create(item=item, run=run, rating=2)
    forget()
    check = kept_judge_check(run)
    assert check == json.loads(json.dumps(judge_check(run.run_id)))
    assert check["humanAgreement"]["n"] == 1


def test_the_judge_check_stamp_sees_each_change_it_depends_on(app):
    # Read in one statement: a rating, a vote on either side, a changed vote, a judge job and
    # its calls' progress each make another stamp.
    run, (left_t, right_t) = make_run("check", targets=[("local", "m1"), ("local", "m2")])
    left = add_item(run, left_t, "t1", status=COMPLETED, evaluation_score=80.0)
    right = add_item(run, right_t, "t1", status=COMPLETED, evaluation_score=40.0)
    seen = [_judge_check_stamp(run)]

    def changed():
        seen.append(_judge_check_stamp(run))
        return seen[-1] != seen[-2]

    Rating.create(item=left, run=run, rating=4)
    assert changed()
    Rating.update(rating=2, updated_at=T0 + dt.timedelta(days=1)).execute()
    assert changed()
    vote = record_vote({"pairToken": shown_pair(left.id, right.id), "winner": "LEFT"}, "human")
    assert changed()
    record_vote(
        {"pairToken": shown_pair(right.id, left.id, "human:bo"), "winner": "TIE"}, "human:bo"
    )
    assert changed()
    change_vote(vote.id, {"winner": "RIGHT"}, "human")
    assert changed()
    job = JudgeJob.create(run=run, kind="reference", judge_provider_name="j", judge_model="m")
    assert changed()
    call = JudgeCall.create(job=job, run=run, item=left)
    assert changed()
    JudgeCall.update(status=COMPLETED).where(JudgeCall.id == call.id).execute()
    assert changed()
    JudgeCall.update(status=FAILED).where(JudgeCall.id == call.id).execute()
    assert changed()
    assert not changed()


def test_deleting_a_run_deletes_its_kept_figures(app):
    run = random_run(9)
    model_averages(run)
    assert RunFigures.select().where(RunFigures.run == run).count() == 1
    delete_run(run.run_id)
    assert RunFigures.select().count() == 0


def test_the_kept_report_follows_a_changed_vote(app):
    # A change rewrites the vote's winner in place (no new row, no new time): the stamp must
    # still see it, or the win rate would stay as before the change.
    run, targets = make_run("votes", targets=[("local", "m1"), ("local", "m2")])
    left, right = (add_item(run, t, "t1", score=50.0) for t in targets)
    token = shown_pair(left.id, right.id, voter="human")
    vote = record_vote({"pairToken": token, "winner": "LEFT"}, "human")
    before = kept_run_report(run)
    change_vote(vote.id, {"winner": "RIGHT"}, "human")
    forget()
    after = kept_run_report(run)
    assert after == run_report(run) and after != before


def stamp_reads(monkeypatch):
    """How many times a run's stamp is read from the database (a list of one count)."""
    reads = [0]
    read = kept._read_stamp

    def counting(run):
        reads[0] += 1
        return read(run)

    monkeypatch.setattr(kept, "_read_stamp", counting)
    return reads


def test_within_one_page_each_runs_stamp_is_read_once(app, monkeypatch):
    run = random_run(11)
    reads = stamp_reads(monkeypatch)
    token = kept.one_stamp_per_run()
    try:
        model_averages(run)
        breakdown(run, "category")
        breakdown(run, "difficulty")
        target_composites(run)
    finally:
        kept.stamps_as_read(token)
    assert reads[0] == 1


def test_a_change_after_the_page_is_seen_by_the_next_one(app):
    run, (t,) = make_run("kept-next-page")
    add_item(run, t, "a", score=10.0, **tried())
    token = kept.one_stamp_per_run()
    assert model_averages(run)[0]["avg_score"] == 10.0
    kept.stamps_as_read(token)
    add_item(run, t, "b", score=30.0, **tried(T0 + dt.timedelta(seconds=1)))
    assert model_averages(run)[0]["avg_score"] == 20.0


def test_a_results_page_reads_each_runs_stamp_once(app, client, monkeypatch):
    run = random_run(12)
    reads = stamp_reads(monkeypatch)
    assert client.get(f"/runs/{run.run_id}/results").status_code == 200
    assert reads[0] == 1


# ---- the figures equal the run's items counted plainly, item by item ----------------------


def mixed_run(seed):
    """A finished run of 1-3 targets whose items take every path the figures tell apart:
    completed with a score (a judge's few points, or continuous ones), failed at the answer, the
    warm-up or the judge, still NEW or waiting for the judge, estimated rates, no cost."""
    rng = random.Random(seed)
    targets = [("local", f"m{n}") for n in range(rng.randint(1, 3))]
    run, made = make_run(f"mixed-{seed}", targets=targets)
    continuous = seed % 2 == 1
    for target in made:
        for n in range(rng.randint(0, 60)):
            fields = {
                "category": rng.choice(("math", "code", "")),
                "difficulty": rng.choice(("easy", "hard", "expert")),
                "time_taken_ms": rng.choice((None, rng.uniform(100, 5000))),
                "ttft_ms": rng.choice((None, rng.uniform(10, 500))),
                "tokens_per_second": rng.choice((None, rng.uniform(5, 90))),
                "tps_source": rng.choice((None, "ollama.eval", ESTIMATE)),
                "cost_usd": rng.choice((None, rng.uniform(0, 0.01))),
                "prompt_tokens": rng.choice((None, rng.randint(1, 900))),
                "tokens_generated": rng.choice((None, rng.randint(1, 900))),
                **tried(T0 + dt.timedelta(seconds=rng.uniform(0, 600))),
            }
            kind = rng.random()
            if kind < 0.2:
                stage = rng.choice(("answer", "judge", "warmup", None))
                add_item(run, target, f"t{n}", status=FAILED, error_stage=stage, **fields)
            elif kind < 0.3:
                add_item(
                    run, target, f"t{n}", status=rng.choice((NEW, WAITING_FOR_JUDGE)), **fields
                )
            else:
                score = rng.uniform(0, 100) if continuous else float(rng.choice((0, 25, 50, 100)))
                add_item(run, target, f"t{n}", score=score, **fields)
    return run


def counted_plainly(run, target_id, estimates=False):
    """What the averages say of one target, counted from its items one by one."""
    items = list(Item.select().where((Item.run == run) & (Item.target == target_id)))
    failed = [i for i in items if i.status == FAILED]
    answered = [i for i in items if not (i.status == FAILED and i.error_stage != "judge")]
    scores = [i.evaluation_score for i in items if i.status == COMPLETED]
    scores = [s for s in scores if s is not None]
    rates = [i for i in answered if estimates or i.tps_source != ESTIMATE]

    def mean(values):
        values = [v for v in values if v is not None]
        return statistics.fmean(values) if values else None

    def total(values):
        values = [v for v in values if v is not None]
        return sum(values) if values else None

    return {
        "item_count": len(items),
        "completed": sum(i.status == COMPLETED for i in items),
        "pending": sum(i.status in (NEW, WAITING_FOR_JUDGE) for i in items),
        "failed_answer": sum(i.error_stage != "judge" for i in failed),
        "failed_warmup": sum(i.error_stage == "warmup" for i in failed),
        "failed_judge": sum(i.error_stage == "judge" for i in failed),
        "avg_time_ms": mean(i.time_taken_ms for i in answered),
        "avg_ttft_ms": mean(i.ttft_ms for i in answered),
        "avg_tokens_per_second": mean(i.tokens_per_second for i in rates),
        "tps_estimated": sum(
            i.tps_source == ESTIMATE and i.tokens_per_second is not None for i in items
        ),
        "avg_score": statistics.fmean(scores) if scores else None,
        "score_n": len(scores),
        "cost_usd": total(i.cost_usd for i in items),
        "prompt_tokens": total(i.prompt_tokens for i in items),
        "tokens_generated": total(i.tokens_generated for i in items),
        "ci": histogram_mean_ci(list(Counter(scores)), list(Counter(scores).values())),
    }


def approx(figures):
    return {
        k: v if v is None or isinstance(v, int) else pytest.approx(v) for k, v in figures.items()
    }


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("estimates", [False, True])
def test_the_averages_equal_the_items_counted_one_by_one(app, seed, estimates):
    run = mixed_run(seed)
    for row in model_averages(run, estimates=estimates):
        plain = counted_plainly(run, row["target_id"], estimates)
        ci = plain.pop("ci")
        assert approx(plain) == {k: row[k] for k in plain}
        # The CI's floats exactly: the same histogram of scores, the same draws.
        assert (row["ci_low"], row["ci_high"]) == (ci or (None, None))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("by", ["category", "difficulty"])
def test_a_breakdown_equals_the_items_counted_one_by_one(app, seed, by):
    run = mixed_run(seed)
    table = breakdown(run, by)
    for row in table["rows"]:
        for model, cell in zip(table["models"], row["cells"], strict=True):
            items = [
                i
                for i in Item.select().where(
                    (Item.run == run) & (Item.target == model["target_id"])
                )
                if getattr(i, by) == row["key"]
            ]
            scores = [i.evaluation_score for i in items if i.status == COMPLETED]
            failed = [i for i in items if i.status == FAILED]
            assert cell == {
                "avg": pytest.approx(statistics.fmean(scores)) if scores else None,
                "n": len(scores),
                "item_count": len(items),
                "failed_judge": sum(i.error_stage == "judge" for i in failed),
                "failed_answer": sum(i.error_stage != "judge" for i in failed),
            }


@pytest.mark.parametrize("seed", range(4))
def test_kept_figures_of_a_mixed_run_equal_a_fresh_computation(app, seed):
    run = mixed_run(seed)
    first = (model_averages(run), breakdown(run, "category"), breakdown(run, "difficulty"))
    forget()
    assert (model_averages(run), breakdown(run, "category"), breakdown(run, "difficulty")) == first
    fresh(run, model_averages)
    assert (model_averages(run), breakdown(run, "category"), breakdown(run, "difficulty")) == first


def test_the_ci_depends_on_the_scores_not_how_they_are_given():
    scores = [float(s) for s in random.Random(3).choices(range(0, 101, 10), k=500)]
    counts = Counter(scores)
    shuffled = list(counts.items())
    random.Random(4).shuffle(shuffled)
    ci = histogram_mean_ci(list(counts), list(counts.values()))
    assert histogram_mean_ci([v for v, _ in shuffled], [n for _, n in shuffled]) == ci
    assert histogram_mean_ci([*counts, 55.5], [*counts.values(), 0]) == ci  # a 0 is no score
    low, high = ci
    assert low < statistics.fmean(scores) < high and high - low < 8


def test_continuous_scores_are_resampled_one_by_one_around_their_mean():
    rng = random.Random(5)
    scores = [rng.uniform(0, 100) for _ in range(400)]
    low, high = histogram_mean_ci(scores, [1] * len(scores))
    assert low < statistics.fmean(scores) < high and high - low < 12


def test_one_score_or_one_value_is_its_own_ci():
    assert histogram_mean_ci([70.0], [12]) == (70.0, 70.0)
    assert histogram_mean_ci([70.0, 70.0], [1, 1]) == (70.0, 70.0)
    assert histogram_mean_ci([], []) is None


def test_continuous_scores_make_one_group_not_one_per_item(app):
    # A group per distinct score would be a group per item: a 1 000 000-item run's groups held
    # as objects in memory. They merge over the score; the scores stay as numbers.
    run, (t,) = make_run("kept-continuous")
    for n in range(40):
        add_item(run, t, f"t{n}", score=n + 0.5, **tried())
    read = item_groups(run)
    assert [(g.n, g.scored) for g in read.groups] == [(40, 40)]
    values, counts = read.scores[t.id]
    assert sorted(values) == [n + 0.5 for n in range(40)] and sum(counts) == 40
