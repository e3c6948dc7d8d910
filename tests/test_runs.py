"""Runs: validation, items with task snapshots, run ids, control transitions, summaries, logs."""

import datetime as dt

import pytest

from app.db.connection import insert_rows
from app.db.models import CANT_BE_FINISHED
from app.db.models import FAILED
from app.db.models import NEW
from app.db.models import Collection
from app.db.models import CollectionTask
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunTarget
from app.db.models import Task
from app.errors import Conflict
from app.errors import NotFound
from app.errors import ValidationError
from app.hashing import context_hash
from app.runlog import log_event
from app.runs import creation
from app.runs import lifecycle
from app.runs.control import delete_run
from app.runs.control import pause_run
from app.runs.control import resume_run
from app.runs.control import stop_run
from app.runs.dto import item_to_dict
from app.runs.dto import run_summary
from app.runs.lifecycle import INSERT_BATCH
from app.runs.lifecycle import create_run
from app.runs.queries import get_run
from app.runs.queries import list_logs
from app.runs.retries import retry_judge
from app.runs.state import run_state
from app.scoring.rubric import PROMPT_HASH
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks

NOW = dt.datetime(2030, 5, 6, 7, 8, 9)


@pytest.fixture
def setup(app):
    p = make_provider(None, url="http://127.0.0.1:1")
    coll = make_tasks(2)
    return p, coll


def spec(p, coll, **extra):
    body = {
        "judgeProviderId": p.id,
        "judgeModel": "judge",
        "targets": [{"providerId": p.id, "model": "m1"}],
        "collectionIds": [coll.id],
    }
    body.update(extra)
    return body


def fields(exc):
    return {e["field"] for e in exc.value.errors}


def test_create_run_makes_one_item_per_task_and_target(setup):
    p, coll = setup
    run = create_run(
        spec(
            p,
            coll,
            targets=[{"providerId": p.id, "model": "m1"}, {"providerId": p.id, "model": "m2"}],
        ),
        now=NOW,
    )
    assert Item.select().where(Item.run == run).count() == 4
    assert [t.model for t in RunTarget.select().order_by(RunTarget.position)] == ["m1", "m2"]
    assert run.status == "PENDING" and run.phase == "BENCHMARKING" and run.control == "running"
    assert run.started_at == NOW and run.prompt_hash == PROMPT_HASH and len(run.dataset_hash) == 64
    assert {i.status for i in Item.select()} == {NEW}


def test_run_id_from_name_and_utc_time_made_unique(setup):
    p, coll = setup
    first = create_run(spec(p, coll, name="nightly check"), now=NOW)
    stop_run(first.run_id)
    second = create_run(spec(p, coll, name="nightly check"), now=NOW)
    assert first.run_id == "nightly-check-20300506-070809"
    assert second.run_id == "nightly-check-20300506-070809-2"


def test_run_id_defaults_to_run(setup):
    p, coll = setup
    assert create_run(spec(p, coll), now=NOW).run_id == "run-20300506-070809"


def test_given_run_id_is_kept_and_must_be_unique(setup):
    p, coll = setup
    create_run(spec(p, coll, runId="my-run.1"))
    stop_run("my-run.1")
    with pytest.raises(Conflict, match="a run named 'my-run.1' exists"):
        create_run(spec(p, coll, runId="my-run.1"))


def test_seed_000_field_names_are_accepted(setup):
    p, coll = setup
    run = create_run(
        {
            "judgeProviderConfigId": p.id,
            "judgeModelName": "j",
            "targetModels": [{"providerConfigId": p.id, "modelName": "x"}],
            "collectionIds": [coll.id],
        }
    )
    assert run.judge_model == "j" and run.targets[0].model == "x"


@pytest.mark.parametrize(
    "change, field",
    [
        ({"judgeProviderId": None}, "judgeProviderId"),
        ({"judgeModel": " "}, "judgeModel"),
        ({"judgeModel": ["a", "b"]}, "judgeModel"),
        ({"targets": []}, "targets"),
        ({"targets": [{"providerId": 999, "model": "m"}]}, "targets[0].providerId"),
        ({"targets": [{"providerId": "P", "model": ""}]}, "targets[0].model"),
        ({"collectionIds": []}, "collectionIds"),
        ({"collectionIds": [999]}, "collectionIds"),
        ({"taskIds": [999]}, "taskIds"),
        ({"runId": "has space"}, "runId"),
        ({"settings": {"maxAttempts": 0}}, "settings.maxAttempts"),
        ({"settings": {"maxBudgetUsd": -1}}, "settings.maxBudgetUsd"),
    ],
)
def test_invalid_spec_names_the_field(setup, change, field):
    p, coll = setup
    with pytest.raises(ValidationError) as exc:
        create_run(spec(p, coll, **change))
    assert field in fields(exc)
    assert Run.select().count() == 0


def test_every_problem_is_reported_at_once(setup):
    with pytest.raises(ValidationError) as exc:
        create_run({"targets": [], "collectionIds": [], "judgeModel": "j"})
    assert {"judgeProviderId", "targets", "collectionIds"} <= fields(exc)


def test_the_same_model_with_the_same_params_twice_is_rejected(setup):
    p, coll = setup
    twice = [{"providerId": p.id, "model": "m1"}, {"providerId": p.id, "model": "m1"}]
    with pytest.raises(ValidationError, match=r"with these params is already targets\[0\]"):
        create_run(spec(p, coll, targets=twice))


def test_the_same_model_with_other_params_is_two_targets_with_default_labels(setup):
    p, coll = setup
    twice = [
        {"providerId": p.id, "model": "m1", "params": {"temperature": 0.2}},
        {"providerId": p.id, "model": "m1", "params": {"temperature": 0.8, "max_tokens": 64}},
        {"providerId": p.id, "model": "m2"},
    ]
    run = create_run(spec(p, coll, targets=twice))
    labels = [t.label for t in run.targets.order_by(RunTarget.position)]
    assert labels == ["m1 · temperature 0.2", "m1 · max_tokens 64 · temperature 0.8", "m2"]
    assert Item.select().where(Item.run == run).count() == 3 * coll.memberships.count()


def test_a_target_keeps_the_label_it_is_given(setup):
    p, coll = setup
    targets = [
        {"providerId": p.id, "model": "m1", "label": "cold", "params": {"temperature": 0}},
        {"providerId": p.id, "model": "m1", "label": "hot", "params": {"temperature": 1.5}},
    ]
    run = create_run(spec(p, coll, targets=targets))
    assert [t.label for t in run.targets.order_by(RunTarget.position)] == ["cold", "hot"]


def test_two_targets_with_one_label_are_rejected_naming_the_second(setup):
    p, coll = setup
    targets = [
        {"providerId": p.id, "model": "m1", "label": "same"},
        {"providerId": p.id, "model": "m2", "label": "same"},
    ]
    with pytest.raises(ValidationError) as exc:
        create_run(spec(p, coll, targets=targets))
    assert fields(exc) == {"targets[1].label"}
    assert Run.select().count() == 0


@pytest.mark.parametrize(
    "params, field",
    [
        ({"temperature": 3}, "targets[0].params.temperature"),
        ({"top_p": "x"}, "targets[0].params.top_p"),
        ({"max_tokens": 1.5}, "targets[0].params.max_tokens"),
        ({"stop": [1]}, "targets[0].params.stop"),
        ({"frobnicate": 1}, "targets[0].params.frobnicate"),
    ],
)
def test_bad_generation_params_are_rejected(setup, params, field):
    p, coll = setup
    with pytest.raises(ValidationError) as exc:
        create_run(spec(p, coll, targets=[{"providerId": p.id, "model": "m", "params": params}]))
    assert field in fields(exc)


def test_params_from_a_form_are_cleaned(setup):
    p, coll = setup
    raw = {"temperature": "0.5", "topP": "", "maxTokens": "100", "seed": None, "stop": "END"}
    run = create_run(spec(p, coll, targets=[{"providerId": p.id, "model": "m", "params": raw}]))
    assert run.targets[0].params == {"temperature": 0.5, "max_tokens": 100, "stop": ["END"]}


def test_second_run_while_one_is_running_is_409_naming_it(setup):
    p, coll = setup
    first = create_run(spec(p, coll))
    with pytest.raises(Conflict, match=first.run_id):
        create_run(spec(p, coll))


def test_a_paused_run_keeps_no_new_run_from_starting(setup):
    p, coll = setup
    first = create_run(spec(p, coll))
    pause_run(first.run_id)
    second = create_run(spec(p, coll))
    assert run_state(second) == "running" and run_state(get_run(first.run_id)) == "paused"


def test_items_keep_a_snapshot_of_the_task(setup):
    p, coll = setup
    rubric = [{"id": "r1", "text": "mentions x", "weight": 2, "max_score": 3}]
    task = Task.create(
        task_id="snap",
        category="cat",
        subcategory="sub",
        difficulty="hard",
        question="What is {thing}?",
        system_prompt="You are {role}.",
        excellent="E",
        good="G",
        pass_answer="P",
        incorrect_direction="I",
        rubric=rubric,
        auto_fail=["rude"],
        vars={"thing": "x", "role": "a tutor"},
        template_version="v2",
    )
    run = create_run(spec(p, coll, collectionIds=[], taskIds=[task.id]))
    Task.update(question="changed", excellent="changed").where(Task.id == task.id).execute()
    item = Item.get(Item.run == run)
    assert (item.question, item.system_prompt) == ("What is x?", "You are a tutor.")
    assert (item.excellent, item.good, item.pass_answer, item.incorrect_direction) == (
        "E",
        "G",
        "P",
        "I",
    )
    assert item.rubric == rubric and item.auto_fail_rules == ["rude"]
    assert (item.task_key, item.category, item.subcategory, item.difficulty) == (
        "snap",
        "cat",
        "sub",
        "hard",
    )
    assert item.template_version == "v2" and item.task_id == task.id
    messages = [
        {"role": "system", "content": "You are a tutor."},
        {"role": "user", "content": "What is x?"},
    ]
    assert item.context_hash == context_hash("fake", p.base_url, "m1", {}, messages, "v2")


def test_a_task_that_cannot_be_rendered_leaves_its_items_cant_be_finished(setup):
    p, coll = setup
    task = Task.create(
        task_id="needs-vars", category="c", question="Hi {name} and {other}", vars={"name": "Ann"}
    )
    run = create_run(spec(p, coll, taskIds=[task.id]))
    bad = Item.get((Item.run == run) & (Item.task_key == "needs-vars"))
    assert bad.status == CANT_BE_FINISHED and "{other}" in bad.error_msg
    assert bad.error_msg.startswith("can't be finished: the task cannot be rendered")
    assert Item.select().where((Item.run == run) & (Item.status == NEW)).count() == 2
    line = [e for e in list_logs(run.run_id) if e.event == "cant_be_finished"][0]
    assert "needs-vars" in line.message and "{other}" in line.message
    assert run_summary(run)["counts"][CANT_BE_FINISHED] == 1


def test_when_no_task_can_be_rendered_nothing_is_created(setup):
    p, coll = setup
    task = Task.create(
        task_id="needs-vars", category="c", question="Hi {name} and {other}", vars={"name": "Ann"}
    )
    with pytest.raises(ValidationError, match="needs-vars") as exc:
        create_run(spec(p, coll, collectionIds=[], taskIds=[task.id]))
    assert "{other}" in exc.value.message and Run.select().count() == 0


def test_a_question_without_vars_is_sent_verbatim(setup):
    p, coll = setup
    task = Task.create(task_id="code", category="c", question="Fix: def f(): return {x}")
    run = create_run(spec(p, coll, collectionIds=[], taskIds=[task.id]))
    assert Item.get(Item.run == run).question == "Fix: def f(): return {x}"


def test_category_filter_and_question_limit(setup):
    p, coll = setup
    make_tasks(3, collection=coll.name, prefix="m", category="math")
    run = create_run(spec(p, coll, settings={"categories": ["math"], "questionLimit": 2}))
    assert sorted(i.task_key for i in Item.select().where(Item.run == run)) == ["m0", "m1"]


def test_task_in_two_collections_is_asked_once(setup):
    p, coll = setup
    other = Collection.create(name="other")
    for membership in CollectionTask.select().where(CollectionTask.collection == coll):
        CollectionTask.create(collection=other, task=membership.task)
    run = create_run(spec(p, coll, collectionIds=[coll.id, other.id]))
    assert Item.select().where(Item.run == run).count() == 2
    assert [c.collection_name for c in run.run_collections] == ["c1", "other"]


def test_dataset_hash_changes_with_the_tasks(setup):
    p, coll = setup
    first = create_run(spec(p, coll))
    stop_run(first.run_id)
    again = create_run(spec(p, coll))
    stop_run(again.run_id)
    Task.update(excellent="new reference").where(Task.task_id == "t0").execute()
    changed = create_run(spec(p, coll))
    assert first.dataset_hash == again.dataset_hash != changed.dataset_hash


def test_dataset_hash_is_the_same_as_earlier_versions_made_for_the_same_tasks(app):
    # Runs are compared across versions by this hash (computed task by task since it stopped
    # holding every snapshot): tasks made in another order than their keys sort, unicode,
    # a system prompt, a rubric and vars, as main computed them before the change.
    p = make_provider(None, url="http://127.0.0.1:1")
    make_tasks(3, prefix="z", category="zeta", vars={"x": "1"})
    coll = make_tasks(
        4, prefix="a", system_prompt="Be brief. é", rubric=[{"id": "r", "text": "ü", "weight": 1}]
    )
    run = create_run(spec(p, coll))
    assert run.dataset_hash == "237a301f30063ce751b62a96de4df29663eafb32945f19f928e3364914ba35d2"


def test_three_thousand_items_are_inserted_in_batches(setup, monkeypatch):
    # Speed is measured in bench/, not asserted: here, that the rows go in as a few batches.
    p, _ = setup
    big = make_tasks(1000, collection="big", prefix="b")
    targets = [{"providerId": p.id, "model": f"m{i}"} for i in range(3)]
    batches = []

    def counting(model, rows, **kwargs):
        batches.append(len(rows))
        return insert_rows(model, rows, **kwargs)

    monkeypatch.setattr(lifecycle, "insert_rows", counting)
    run = create_run(spec(p, big, targets=targets))
    while creation.make_more(run):  # a big run's other items, as the engine makes them
        pass
    monkeypatch.undo()
    assert batches == [INSERT_BATCH] * (3000 // INSERT_BATCH)
    assert Item.select().where(Item.run == run).count() == 3000


def test_pause_stop_resume_transitions(setup):
    p, coll = setup
    run = create_run(spec(p, coll))
    assert run_state(pause_run(run.run_id)) == "paused"
    with pytest.raises(ValidationError, match="not running"):
        pause_run(run.run_id)
    assert run_state(resume_run(run.run_id)) == "running"
    with pytest.raises(ValidationError, match="only a paused or stopped"):
        resume_run(run.run_id)
    stopped = stop_run(run.run_id)
    assert run_state(stopped) == "stopped" and stopped.control_reason == "stopped by you"
    with pytest.raises(ValidationError):
        stop_run(run.run_id)
    assert run_state(resume_run(run.run_id)) == "running"
    events = [e.event for e in list_logs(run.run_id) if e.event != "model_check"]
    assert events == ["run_started", "paused", "resumed", "stopped", "resumed"]


def test_resume_is_409_while_another_run_is_active(setup):
    p, coll = setup
    old = create_run(spec(p, coll))
    stop_run(old.run_id)
    active = create_run(spec(p, coll))
    with pytest.raises(Conflict, match=active.run_id):
        resume_run(old.run_id)


def test_control_of_an_unknown_run_is_not_found(setup):
    for action in (pause_run, stop_run, resume_run, delete_run):
        with pytest.raises(NotFound):
            action("nope")


def test_delete_is_409_while_active_and_removes_everything_after(setup):
    p, coll = setup
    run = create_run(spec(p, coll))
    with pytest.raises(Conflict):
        delete_run(run.run_id)
    stop_run(run.run_id)
    delete_run(run.run_id)
    assert Run.select().count() == 0 and Item.select().count() == 0


def test_summary_counts_progress_and_targets(setup):
    p, coll = setup
    run = create_run(spec(p, coll))
    first, second = Item.select().order_by(Item.id)
    Item.update(status=FAILED, error_stage="answer").where(Item.id == first.id).execute()
    summary = run_summary(run)
    assert summary["counts"] == {
        "NEW": 1,
        "WAITING_FOR_JUDGE": 0,
        "COMPLETED": 0,
        "FAILED": 1,
        "CANT_BE_FINISHED": 0,
    }
    assert summary["totalItems"] == 2 and summary["failedItems"] == 1
    assert summary["progress"] == 0.5 and summary["state"] == "running"
    assert summary["targets"][0]["model"] == "m1" and summary["collections"][0]["name"] == "c1"
    assert summary["runId"] == run.run_id and summary["judgeModelName"] == "judge"


def test_item_dict_shows_when_it_will_be_retried(setup):
    p, coll = setup
    run = create_run(spec(p, coll))
    item = Item.get(Item.run == run)
    when = dt.datetime(2030, 1, 1, 12, 0, 5)
    Item.update(next_retry_at=when, error_msg="Server answered 503").where(
        Item.id == item.id
    ).execute()
    data = item_to_dict(Item.get_by_id(item.id))
    assert data["nextRetryAt"] == "2030-01-01T12:00:05.000Z"
    assert data["errorMsg"] == "Server answered 503" and data["targetModelName"] == "m1"
    assert data["status"] == "NEW" and data["benchmarkRunId"] == run.id


def test_logs_since_an_id(setup):
    p, coll = setup
    run = create_run(spec(p, coll))
    first = list_logs(run.run_id)[-1]
    log_event(run, "note", "later")
    assert [e.message for e in list_logs(run.run_id, since=first.id)] == ["later"]
    with pytest.raises(ValidationError):
        list_logs(run.run_id, since="yesterday")


def test_retry_judge_needs_an_answer(setup):
    p, coll = setup
    run = create_run(spec(p, coll))
    item = Item.get(Item.run == run)
    with pytest.raises(ValidationError, match="no answer"):
        retry_judge(run.run_id, item.id)
    with pytest.raises(NotFound):
        retry_judge(run.run_id, 9999)
