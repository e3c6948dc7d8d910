"""Reuse on request: `llmbench run --reuse` takes earlier answers (same context hash) and
judgements (same judge, params, answer, rubric) instead of asking again; reused items are
marked, left out of speed figures, and the hits are reported. Off by default."""

import json

import pytest

from app.db.migrations import open_db
from app.db.models import COMPLETED
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.db.models import Run
from app.exports.summary import summary_json
from tests.cli_helpers import events
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows
from tests.cli_helpers import write_config
from tests.engine_helpers import calls


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


def _runs():
    return sorted(rows(Run), key=lambda r: r.id)


def _first_run(cli, tmp_path, fake):
    path = write_config(tmp_path, fake, tasks=3)
    assert cli("run", "-c", path, "--quiet").exit_code == 0
    return path


def test_without_reuse_every_item_is_asked_again(cli, tmp_path, fake):
    path = _first_run(cli, tmp_path, fake)
    before = len(calls(fake, "answer"))
    assert cli("run", "-c", path, "--quiet").exit_code == 0
    assert len(calls(fake, "answer")) == 2 * before
    assert not [i for i in rows(Item) if i.answer_reused_from]


def test_reuse_takes_answers_and_judgements_and_asks_nothing(cli, tmp_path, fake):
    path = _first_run(cli, tmp_path, fake)
    answers, judgements = len(calls(fake, "answer")), len(calls(fake, "judge"))
    result = cli("run", "-c", path, "--reuse")
    assert result.exit_code == 0, result.output
    assert "Reused 6 answers and 6 judgements from earlier runs" in result.stderr
    assert (len(calls(fake, "answer")), len(calls(fake, "judge"))) == (answers, judgements)
    first, second = _runs()
    old = {(i.target.model, i.task_key): i for i in rows(Item, Item.run == first.id)}
    for item in rows(Item, Item.run == second.id):
        source = old[(item.target.model, item.task_key)]
        assert item.status == COMPLETED and item.answer == source.answer
        assert (item.answer_reused_from, item.judgement_reused_from) == (source.id, source.id)
        assert item.evaluation_score == source.evaluation_score
        # no speed figures of its own, and it cost this run nothing
        assert (item.time_taken_ms, item.ttft_ms, item.tokens_per_second) == (None, None, None)
        assert (item.cost_usd, item.judge_cost_usd) == (None, None)


def test_a_different_judge_reuses_the_answer_only(cli, tmp_path, fake):
    path = _first_run(cli, tmp_path, fake)
    path.write_text(path.read_text().replace("temperature: 0", "temperature: 0.5"))
    result = cli("run", "-c", path, "--reuse", "--json")
    assert result.exit_code == 0, result.output
    hits = next(e for e in events(result) if e["event"] == "reused")
    assert (hits["answers"], hits["judgements"]) == (6, 0)
    second = _runs()[1]
    reused = rows(Item, Item.run == second.id)
    assert {i.status for i in reused} == {COMPLETED}  # judged again, by the new judge
    assert all(i.answer_reused_from and not i.judgement_reused_from for i in reused)


def test_different_params_make_a_different_context_and_nothing_is_reused(cli, tmp_path, fake):
    path = _first_run(cli, tmp_path, fake)
    cli("run", "-c", path, "--reuse", "--set", "targets[0].params.temperature=0.9", "--quiet")
    second = _runs()[1]
    items = rows(Item, Item.run == second.id)
    assert {i.target.model for i in items if not i.answer_reused_from} == {"m1"}
    assert {i.target.model for i in items if i.answer_reused_from} == {"m2"}


def test_reused_items_are_left_out_of_speed_figures(cli, tmp_path, fake):
    path = _first_run(cli, tmp_path, fake)
    cli("run", "-c", path, "--reuse", "--quiet")
    second = _runs()[1]
    open_db(str(tmp_path / "cli.db"))
    summary = summary_json(Run.get_by_id(second.id))
    assert summary["reused"] == {"answers": 6, "judgements": 6}
    for model in summary["models"]:
        assert (model["avgTimeMs"], model["avgTokensPerSecond"]) == (None, None)
        assert model["latencyMs"] == {"p50": None, "p90": None}
        assert model["avgScore"] == 80.0  # the scores still count


def test_a_failed_earlier_answer_is_not_reused(cli, tmp_path, fake):
    fake.responder = lambda call: {"status": 400} if call["body"].get("model") == "m2" else None
    path = write_config(tmp_path, fake, tasks=3, max_attempts=1)
    cli("run", "-c", path, "--quiet")
    fake.responder = None
    result = cli("run", "-c", path, "--reuse", "--json")
    hits = next(e for e in events(result) if e["event"] == "reused")
    assert (hits["answers"], hits["judgements"]) == (3, 3)  # m1's only
    assert {i.status for i in rows(Item, Item.run == _runs()[1].id)} == {COMPLETED}


def test_an_answer_waiting_for_its_judge_is_reused_and_judged_in_the_new_run(app, fake):
    from app.runs.lifecycle import create_run
    from app.runs.reuse import reuse_counts
    from tests.engine_helpers import make_provider
    from tests.engine_helpers import make_tasks

    p = make_provider(fake)
    coll = make_tasks(1)
    spec = {
        "judgeProviderId": p.id,
        "judgeModel": "judge",
        "collectionIds": [coll.id],
        "targets": [{"providerId": p.id, "model": "m1"}],
    }
    first = create_run(spec)
    Item.update(status=WAITING_FOR_JUDGE, answer="kept").execute()
    Run.update(status="FINISHED").where(Run.id == first.id).execute()
    second = create_run(spec, reuse=True)
    (item,) = Item.select().where(Item.run == second)
    assert (item.status, item.answer) == (WAITING_FOR_JUDGE, "kept")
    assert item.judgement_reused_from is None
    assert reuse_counts(second) == {"answers": 1, "judgements": 0}
    log = [entry for entry in second.logs if entry.event == "reused"]
    assert json.loads(json.dumps(log[0].data)) == {"answers": 1, "judgements": 0}


def test_a_reused_answer_keeps_its_reasoning_tokens_but_none_of_its_timing(app, fake):
    from app import latency
    from app.runs.lifecycle import create_run
    from tests.engine_helpers import make_provider
    from tests.engine_helpers import make_tasks

    p = make_provider(fake)
    spec = {
        "judgeProviderId": p.id,
        "judgeModel": "judge",
        "collectionIds": [make_tasks(1).id],
        "targets": [{"providerId": p.id, "model": "m1"}],
    }
    first = create_run(spec)
    Item.update(
        status=WAITING_FOR_JUDGE,
        answer="kept",
        reasoning_tokens=7,
        first_answer_ms=120.0,
        last_token_ms=400.0,
        sent_ts=1735787045.25,
        chunks=16,
        itl_hist=latency.pack(latency.histogram([20.0] * 15)),
        queue_ms=3.0,
    ).execute()
    Run.update(status="FINISHED").where(Run.id == first.id).execute()
    second = create_run(spec, reuse=True)
    (item,) = Item.select().where(Item.run == second)
    assert item.answer == "kept" and item.reasoning_tokens == 7
    # Its old timing would sit in this run's percentiles and stretch its throughput window.
    timing = ("first_answer_ms", "last_token_ms", "sent_ts", "chunks", "itl_hist", "queue_ms")
    assert [getattr(item, name) for name in timing] == [None] * len(timing)
