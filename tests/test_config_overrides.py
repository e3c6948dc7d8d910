"""Overrides for one invocation: --limit, --categories, --concurrency, --name, --set, --judge;
checked by the config's own rules, their errors naming the option instead of a line."""

import pytest

from app.db.models import Item
from app.db.models import Run
from app.errors import ValidationError
from app.runconfig import reader
from app.runconfig.invocation import Overrides
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows
from tests.cli_helpers import write_config


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


def _plan(path, **overrides):
    return reader.load(path, environ={"FAKE_KEY": "k"}, overrides=Overrides(**overrides))


def _errors(path, **overrides):
    with pytest.raises(ValidationError) as info:
        _plan(path, **overrides)
    return [(e.get("file"), e.get("line"), e["field"]) for e in info.value.errors]


def test_limit_keeps_the_first_n_tasks(app, tmp_path, fake):
    assert _plan(write_config(tmp_path, fake, tasks=6), limit="2").task_ids == ["q00", "q01"]


def test_categories_filter_the_tasks(app, tmp_path, fake):
    plan = _plan(write_config(tmp_path, fake, tasks=6), categories="Fire")
    assert plan.task_ids == ["q01", "q03", "q05"]


def test_name_names_the_run(app, tmp_path, fake):
    assert _plan(write_config(tmp_path, fake), name="nightly").name == "nightly"


def test_concurrency_is_a_run_setting(app, tmp_path, fake):
    assert _plan(write_config(tmp_path, fake), concurrency="3").settings["concurrency"] == 3


def test_judge_replaces_provider_and_model_keeping_params(app, tmp_path, fake):
    plan = _plan(write_config(tmp_path, fake), judge="fake/other/judge-2")
    assert plan.judge == {
        "provider": "fake",
        "model": "other/judge-2",
        "params": {"temperature": 0},
    }


def test_set_changes_any_key_as_the_file_names_it(app, tmp_path, fake):
    plan = _plan(
        write_config(tmp_path, fake),
        sets=("targets[1].params.temperature=0.3", "run.max_attempts=5"),
    )
    assert plan.targets[1]["params"] == {"temperature": 0.3}
    assert plan.settings["maxAttempts"] == 5


def test_set_accepts_yaml_values(app, tmp_path, fake):
    plan = _plan(write_config(tmp_path, fake, tasks=6), sets=("run.categories=[Water]",))
    assert plan.settings["categories"] == ["Water"]


@pytest.mark.parametrize(
    "overrides, expected",
    [
        ({"limit": "0"}, ("--limit", None, "run.question_limit")),
        ({"limit": "abc"}, ("--limit", None, "run.question_limit")),
        ({"concurrency": "100"}, ("--concurrency", None, "run.concurrency")),
        (
            {"sets": ("run.question_limit=abc",)},
            ("--set run.question_limit=abc", None, "run.question_limit"),
        ),
        (
            {"sets": ("targets[0].params.temperature=9",)},
            ("--set targets[0].params.temperature=9", None, "targets[0].params.temperature"),
        ),
        ({"sets": ("run.colour=red",)}, ("--set run.colour=red", None, "run.colour")),
        ({"sets": ("targets[7].model=x",)}, ("--set targets[7].model=x", None, "targets[7].model")),
        ({"sets": ("no-equals-sign",)}, ("--set no-equals-sign", None, None)),
        ({"judge": "ghost/j"}, ("--judge", None, "judge.provider")),
        ({"judge": "no-slash"}, ("--judge", None, None)),
    ],
)
def test_a_bad_override_is_named_by_its_option_without_a_line(
    app, tmp_path, fake, overrides, expected
):
    assert _errors(write_config(tmp_path, fake), **overrides) == [expected]


def test_an_override_error_comes_with_the_files_own_errors(app, tmp_path, fake):
    path = write_config(tmp_path, fake)
    path.write_text(path.read_text().replace("name: ci", "name: ci\n  colour: red"))
    errors = _errors(path, limit="0")
    assert (str(path), 3, "run.colour") in errors
    assert ("--limit", None, "run.question_limit") in errors


def test_the_cli_applies_the_overrides_to_the_run(cli, tmp_path, fake):
    path = write_config(tmp_path, fake, tasks=6)
    result = cli(
        "run",
        "-c",
        path,
        "--limit",
        2,
        "--name",
        "nightly",
        "--set",
        "targets[0].params.seed=7",
        "--quiet",
    )
    assert result.exit_code == 0, result.output
    (run,) = rows(Run)
    assert run.run_id.startswith("nightly-") and len(rows(Item)) == 4
    answers = [c for c in fake.chat_calls() if c["body"]["model"] == "m1"][1:]  # past the warm-up
    assert {c["body"].get("seed") for c in answers} == {7}


def test_the_cli_names_a_bad_override_and_exits_2(cli, tmp_path, fake):
    result = cli("run", "-c", write_config(tmp_path, fake), "--set", "run.question_limit=abc")
    assert result.exit_code == 2
    assert "--set run.question_limit=abc: run.question_limit: must be a whole number" in (
        result.stderr
    )
    assert fake.calls == []


def test_validate_takes_the_same_overrides(cli, tmp_path, fake):
    result = cli("validate", write_config(tmp_path, fake), "--limit", 0)
    assert result.exit_code == 2 and "--limit: run.question_limit" in result.stderr


def test_concurrency_sets_how_many_answers_are_in_flight(cli, tmp_path, fake):
    fake.default_latency = 0.2
    path = write_config(tmp_path, fake, tasks=6, targets=("m1",))
    assert cli("run", "-c", path, "--concurrency", 3, "--quiet").exit_code == 0
    # One provider with max_concurrency 1: only the run's own setting lets 3 run at once.
    assert fake.max_active == 3
    assert rows(Run)[0].settings["concurrency"] == 3
