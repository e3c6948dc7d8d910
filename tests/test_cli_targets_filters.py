"""Targets and filters from the command line: --model replaces the config's targets, --set
takes YAML values, --filter-pattern, --filter-failing, --sample --seed and --repeat choose what
the run asks; the plan (--dry-run, validate) counts what the run really makes."""

import json

import pytest

from app.db.models import Item
from app.db.models import Run
from app.db.models import RunTarget
from tests.cli_helpers import events
from tests.cli_helpers import judge_scores
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows
from tests.cli_helpers import write_config


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


def _plan(cli, config, *args):
    (plan,) = events(cli("run", "-c", config, "--dry-run", "--json", *args))
    return plan


def _tasks_asked(run_id=None):
    runs = sorted(rows(Run), key=lambda r: r.id)
    run = runs[-1] if run_id is None else next(r for r in runs if r.run_id == run_id)
    return sorted({i.task_key for i in rows(Item, Item.run == run)})


def _chat_calls(fake):
    return [c for c in fake.calls if str(c.get("path", "")).endswith("/chat/completions")]


def test_model_options_replace_the_configs_targets(cli, tmp_path, fake):
    fake.responder = judge_scores({})
    config = write_config(tmp_path, fake, tasks=2, targets=("m1", "m2", "m3"))
    result = cli("run", "-c", config, "--model", "fake/m3:fast", "--model", "fake/m1")
    assert result.exit_code == 0, result.output
    targets = sorted((t.model, t.label) for t in rows(RunTarget))
    assert targets == [("m1", "m1"), ("m3", "fast")]


def test_a_malformed_model_option_is_named(cli, tmp_path, fake):
    result = cli("run", "-c", write_config(tmp_path, fake), "--model", "m1", "--dry-run")
    assert result.exit_code == 2 and "--model" in result.output


def test_set_takes_a_yaml_list_of_targets(cli, tmp_path, fake):
    config = write_config(tmp_path, fake, tasks=2)
    plan = _plan(cli, config, "--set", "targets=[{provider: fake, model: m2}]")
    assert [t["model"] for t in plan["targets"]] == ["m2"]


def test_filter_pattern_keeps_the_tasks_whose_id_or_question_it_finds(cli, tmp_path, fake):
    config = write_config(tmp_path, fake, tasks=6, targets=("m1",))
    assert _plan(cli, config, "--filter-pattern", "q0[12]")["tasks"] == 2
    assert _plan(cli, config, "--filter-pattern", r"Question 5\?")["tasks"] == 1
    fake.responder = judge_scores({})
    assert cli("run", "-c", config, "--filter-pattern", "q0[12]").exit_code == 0
    assert _tasks_asked() == ["q01", "q02"]


def test_a_bad_filter_pattern_is_named(cli, tmp_path, fake):
    result = cli("validate", write_config(tmp_path, fake), "--filter-pattern", "q[")
    assert result.exit_code == 2
    assert "--filter-pattern: not a regular expression" in result.output
    assert "bank.jsonl" not in result.output


def _failing_q1(call):
    body = call["body"]
    if body.get("model") == "m1" and "Question 1?" in json.dumps(body):
        return {"status": 400}
    if body.get("model") == "m1" and "Question 2?" in json.dumps(body):
        return {"text": "answer from low"}
    return judge_scores({"low": 20})(call)


def test_filter_failing_re_runs_the_failed_and_low_scored_tasks(cli, tmp_path, fake):
    fake.responder = _failing_q1
    config = write_config(tmp_path, fake, tasks=4, targets=("m1",), max_attempts=1)
    assert cli("run", "-c", config, "--quiet").exit_code == 0
    (first,) = rows(Run)
    assert _plan(cli, config, "--filter-failing", first.run_id)["tasks"] == 2
    fake.responder = judge_scores({})
    result = cli("run", "-c", config, "--filter-failing", first.run_id)
    assert result.exit_code == 0, result.output
    assert _tasks_asked() == ["q01", "q02"]


def test_filter_failing_reads_a_results_jsonl_kept_from_another_job(cli, tmp_path, fake):
    fake.responder = _failing_q1
    config = write_config(tmp_path, fake, tasks=4, targets=("m1",), max_attempts=1)
    results = tmp_path / "r.jsonl"
    assert cli("run", "-c", config, "--quiet", "-o", results).exit_code == 0
    assert _plan(cli, config, "--filter-failing", results)["tasks"] == 2


def test_filter_failing_of_an_unknown_run_is_named(cli, tmp_path, fake):
    result = cli("validate", write_config(tmp_path, fake), "--filter-failing", "nope")
    assert result.exit_code == 2 and "--filter-failing" in result.output


def test_sample_picks_n_tasks_the_same_for_the_same_seed(cli, tmp_path, fake):
    config = write_config(tmp_path, fake, tasks=10, targets=("m1",))
    assert _plan(cli, config, "--sample", 3, "--seed", 7)["tasks"] == 3
    fake.responder = judge_scores({})
    assert cli("run", "-c", config, "--sample", 3, "--seed", 7, "--quiet").exit_code == 0
    first = _tasks_asked()
    assert cli("run", "-c", config, "--sample", 3, "--seed", 7, "--quiet").exit_code == 0
    assert _tasks_asked() == first and len(first) == 3


def test_the_plan_counts_repeats_as_the_run_makes_them(cli, tmp_path, fake):
    """2 tasks x 2 targets x 3 repeats: 12 items, 27 calls (3 warm-ups, 12 answers, 12
    judgements), counted from what the fake server was asked."""
    fake.responder = judge_scores({})
    config = write_config(tmp_path, fake, tasks=2)
    plan = _plan(cli, config, "--repeat", 3)
    assert (plan["items"], plan["estimatedCalls"]) == (12, 27)
    fake.calls.clear()
    assert cli("run", "-c", config, "--repeat", 3, "--quiet").exit_code == 0
    assert len(rows(Item)) == 12
    assert len(_chat_calls(fake)) == 27


def test_the_plan_counts_load_steps_and_their_warm_ups(cli, tmp_path, fake):
    fake.responder = judge_scores({})
    config = write_config(tmp_path, fake, tasks=2, targets=("m1",))
    load = "run.load={mode: concurrency, steps: [1, 2], warmup: 1}"
    plan = _plan(cli, config, "--set", load)
    fake.calls.clear()
    assert cli("run", "-c", config, "--set", load, "--quiet").exit_code == 0
    assert plan["items"] == len(rows(Item)) == 4
    assert plan["estimatedCalls"] == len(_chat_calls(fake))


def test_the_dry_run_says_which_filters_chose_the_tasks(cli, tmp_path, fake):
    config = write_config(tmp_path, fake, tasks=6, targets=("m1",))
    result = cli("run", "-c", config, "--dry-run", "--filter-pattern", "q0[12]", "--sample", 1)
    assert "Filters: --filter-pattern q0[12], --sample 1 --seed 0: 1 tasks" in result.stdout
