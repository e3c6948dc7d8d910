"""The `llmbench` CLI end to end: validate, dry run, run against the fake server, --json events,
exit codes, Ctrl-C then resume, report, diff, import and export (CliRunner, a tmp LLMBENCH_DB)."""

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from app.cli import main
from app.clock import utcnow
from app.config import REPO_ROOT
from app.db.connection import database
from app.db.connection import init_db
from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import Item
from app.db.models import Lease
from app.db.models import Run
from tests.conftest import TEST_KEY_B64

DATA = Path(__file__).parent / "data"


def CLI_ENV(tmp_path):  # noqa: N802 - a constant of the test's folder
    """The environment every CLI call of a test gets: its own database file and key."""
    return {
        "LLMBENCH_DB": str(tmp_path / "cli.db"),
        "LLMBENCH_MASTER_KEY_BASE64": TEST_KEY_B64,
        "LLMBENCH_BACKOFF_BASE_SECONDS": "0.01",
        "FAKE_KEY": SECRET,
        # No built-in tasks in a new database (~1 s each): the tests that want them say so.
        "LLMBENCH_LOAD_DEFAULTS": "0",
    }


SECRET = "sk-test-0123456789"
WARMUP = "Reply with the single word OK."


@pytest.fixture
def cli(tmp_path):
    """invoke(*args) -> Result, on a fresh database file shared by the calls of one test."""
    env = CLI_ENV(tmp_path)
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(main, [str(a) for a in args], env=env)

    yield invoke
    if not database.is_closed():
        database.close()


def write_config(tmp_path, fake, name="config.yml", **run):
    fake.models = ["judge", "m1", "m2"]  # a run checks that its models are served
    config = {
        "run": {"name": "ci", "dataset": str(DATA / "seed001_tasks.yml"), **run},
        "providers": [
            {
                "name": "fake",
                "type": "OPENAI",
                "base_url": fake.url,
                "headers": {"Authorization": "Bearer ${FAKE_KEY}"},
            }
        ],
        "judge": {"provider": "fake", "model": "judge", "params": {"temperature": 0}},
        "targets": [
            {"provider": "fake", "model": "m1"},
            {"provider": "fake", "model": "m2", "params": {"max_tokens": 64}},
        ],
    }
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def rows(model, *where):
    with database.connection_context():
        query = model.select()
        for condition in where:
            query = query.where(condition)
        return list(query)


def events(result):
    return [json.loads(line) for line in result.stdout.splitlines()]


def answer_calls(fake):
    """Chat calls to targets (not warm-ups, not the judge)."""
    return [
        c
        for c in fake.chat_calls()
        if c["body"]["model"] != "judge" and c["body"]["messages"][-1]["content"] != WARMUP
    ]


# ---- help, validate, dry run -------------------------------------------------------------


def test_help_documents_the_exit_codes(cli):
    for args in (["--help"], ["run", "--help"]):
        text = " ".join(cli(*args).output.split())
        assert "0 finished" in text or "0 done" in text
        assert "2 invalid config or dataset" in text and "3 interrupted" in text


def test_validate_a_good_dataset_exits_0(cli):
    result = cli("validate", DATA / "seed004_bank.jsonl")
    assert result.exit_code == 0
    assert "valid dataset, 2 tasks (2 new, 0 already stored)" in result.output


def test_validate_a_bad_dataset_exits_2_naming_file_line_and_field(cli, tmp_path):
    bad = tmp_path / "bank.jsonl"
    bad.write_text('{"id": "a", "category": "C", "prompt": "Q"}\n{"id": "b", "colour": 1}\n')
    result = cli("validate", bad)
    assert result.exit_code == 2
    assert f"{bad}, line 2: colour: unknown key" in result.stderr
    assert not (tmp_path / "cli.db").exists()  # nothing saved, not even an empty database


def test_validate_a_config_names_the_key_path_and_yaml_line(cli, tmp_path, fake):
    path = write_config(tmp_path, fake)
    path.write_text(path.read_text().replace("model: m2", "modle: m2"))
    result = cli("validate", path)
    assert result.exit_code == 2
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "modle" in text)
    assert f"line {line}: targets[1].modle: unknown key" in result.stderr
    assert "targets[1].model: is required" in result.stderr


def test_a_missing_environment_variable_is_named_and_exits_2(cli, tmp_path, fake):
    path = write_config(tmp_path, fake)
    path.write_text(path.read_text().replace("${FAKE_KEY}", "${NOT_SET_ANYWHERE}"))
    result = cli("run", "-c", path)
    assert result.exit_code == 2
    assert "environment variable NOT_SET_ANYWHERE is not set" in result.stderr


def test_a_bad_dataset_in_the_config_exits_2_with_the_datasets_line(cli, tmp_path, fake):
    bank = tmp_path / "bank.yml"
    bank.write_text("- task_id: a\n  category: C\n  questoin: Q\n")
    result = cli("run", "-c", write_config(tmp_path, fake, dataset=str(bank)))
    assert result.exit_code == 2
    assert f"{bank}, line 3: questoin: unknown key" in result.stderr


def test_dry_run_prints_the_plan_and_calls_or_saves_nothing(cli, tmp_path, fake):
    result = cli("run", "-c", write_config(tmp_path, fake), "--dry-run")
    assert result.exit_code == 0
    assert "Items: 2 tasks x 2 targets = 4" in result.output
    assert "Judge: fake/judge" in result.output and "Authorization: ****" in result.output
    assert SECRET not in result.output
    assert fake.calls == []
    assert not (tmp_path / "cli.db").exists()  # nothing saved, not even an empty database


@pytest.mark.parametrize("command", ["dry-run", "validate-config", "validate-dataset"])
def test_checks_create_no_database_file(cli, tmp_path, fake, command):
    path = write_config(tmp_path, fake)
    args = {
        "dry-run": ["run", "-c", path, "--dry-run"],
        "validate-config": ["validate", path],
        "validate-dataset": ["validate", DATA / "seed004_bank.jsonl"],
    }[command]
    result = cli(*args)
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "cli.db").exists()


def test_a_check_that_needs_the_missing_database_says_so(cli, tmp_path, fake):
    path = write_config(tmp_path, fake)
    path.write_text(
        path.read_text()
        .replace("provider: fake, model: judge", "provider: stored-elsewhere, model: judge")
        .replace("judge:\n  provider: fake", "judge:\n  provider: stored-elsewhere")
    )
    result = cli("validate", path)
    assert result.exit_code == 2
    assert "no provider named 'stored-elsewhere'" in result.stderr
    assert f"the database {tmp_path / 'cli.db'} does not exist yet" in result.stderr
    assert not (tmp_path / "cli.db").exists()


def test_checks_use_the_database_when_it_exists(cli, tmp_path, fake):
    cli("import", DATA / "seed004_bank.jsonl")  # creates the database with 2 tasks
    result = cli("validate", DATA / "seed004_bank.jsonl")
    assert "2 tasks (0 new, 2 already stored)" in result.output


def test_a_built_in_collection_works_on_a_new_database(cli, tmp_path, fake):
    # The docs' `collections: [quick]`: a new database gets the built-in tasks, as under
    # `llmbench serve` (catalog/startup.py).
    config = write_config(tmp_path, fake, dataset=None, collections=["quick"])
    env = {**CLI_ENV(tmp_path), "LLMBENCH_LOAD_DEFAULTS": "1"}  # as every database has
    result = CliRunner().invoke(main, ["run", "-c", str(config), "--quiet"], env=env)
    assert result.exit_code == 0, result.output
    (run,) = rows(Run)
    assert len(rows(Item, Item.run == run)) == 10 * 2


def test_a_built_in_collection_validates_before_the_database_exists(tmp_path, fake):
    config = write_config(tmp_path, fake, dataset=None, collections=["quick"])
    env = {**CLI_ENV(tmp_path), "LLMBENCH_LOAD_DEFAULTS": "1"}  # as every database has
    result = CliRunner().invoke(main, ["validate", "-c", str(config)], env=env)
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "cli.db").exists()


def test_dry_run_json_is_one_plan_object(cli, tmp_path, fake):
    result = cli("run", "-c", write_config(tmp_path, fake, question_limit=1), "--dry-run", "--json")
    (plan,) = events(result)
    assert (plan["event"], plan["items"], plan["estimatedCalls"]) == ("plan", 2, 7)
    assert plan["providers"][0]["fields"]["headers"][0]["value"] == "****"


# ---- a real run against the fake server ---------------------------------------------------


def test_a_run_with_two_targets_and_a_judge_finishes_and_writes_reports(cli, tmp_path, fake):
    out = tmp_path / "runs"
    result = cli("run", "-c", write_config(tmp_path, fake, out_dir=str(out)))
    assert result.exit_code == 0, result.output
    items = rows(Item)
    assert len(items) == 4 and {i.status for i in items} == {COMPLETED}
    assert {c["body"]["model"] for c in fake.chat_calls()} == {"m1", "m2", "judge"}
    assert {c["headers"].get("Authorization") for c in fake.chat_calls()} == {f"Bearer {SECRET}"}
    run_id = rows(Run)[0].run_id
    assert json.loads((out / run_id / "summary.json").read_text())["runId"] == run_id
    assert (out / run_id / "report.html").read_text().lstrip().lower().startswith("<!doctype")
    assert "fake/m1" in result.stdout and "80.0" in result.stdout
    assert SECRET not in result.output


def test_json_prints_one_event_per_line_from_start_to_summary(cli, tmp_path, fake):
    result = cli("run", "-c", write_config(tmp_path, fake), "--json")
    assert result.exit_code == 0
    names = [e["event"] for e in events(result)]
    assert names[0] == "run_started" and names[-1] == "run_summary"
    assert {"phase_changed", "item_done", "item_judged", "run_finished"} <= set(names)
    summary = events(result)[-1]
    assert (summary["state"], summary["exitCode"], len(summary["models"])) == ("finished", 0, 2)


def test_quiet_prints_nothing_when_all_goes_well(cli, tmp_path, fake):
    result = cli("run", "-c", write_config(tmp_path, fake), "--quiet")
    assert (result.exit_code, result.output) == (0, "")


def test_failed_items_still_exit_0_and_are_reported(cli, tmp_path, fake):
    fake.responder = lambda call: {"status": 400} if call["body"].get("model") == "m2" else None
    result = cli("run", "-c", write_config(tmp_path, fake, max_attempts=1))
    assert result.exit_code == 0
    assert {i.status for i in rows(Item) if i.target.model == "m2"} == {FAILED}
    assert "2 failed" in result.stdout


def test_ctrl_c_stops_the_run_resumably_then_resume_finishes_it(cli, tmp_path, fake):
    # A real `llmbench run` process gets a real SIGINT (what Ctrl-C sends) when its first answer
    # is asked; that answer is held until the run reads "stopped", so a busy machine can delay
    # the signal but cannot let the run finish first.
    config = write_config(tmp_path, fake)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLMBENCH_")}
    env.update(CLI_ENV(tmp_path))
    sent = threading.Event()
    child = {}

    def interrupt_on_first_answer(call):
        body = call["body"]
        if body.get("model") == "m1" and body["messages"][-1]["content"] != WARMUP:
            if not sent.is_set():
                sent.set()
                child["proc"].send_signal(signal.SIGINT)
            _wait_until(lambda: _run_controls(tmp_path) == ["stopped"], 60)
            return {"text": "late"}
        return None

    fake.responder = interrupt_on_first_answer
    # A suite started in the background (`pytest &`) ignores SIGINT, and a child inherits that:
    # with a handler here instead, the child starts with the default, as from a terminal.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(
            [str(Path(sys.executable).with_name("llmbench")), "run", "-c", str(config)],
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    child["proc"] = proc
    out, err = proc.communicate(timeout=180)
    _run_controls(tmp_path)  # binds this process to the child's database for the checks below
    assert sent.is_set() and proc.returncode == 3, (out, err)
    run_id = rows(Run)[0].run_id
    assert f"Continue it with: llmbench resume {run_id}" in err
    assert [r.control for r in rows(Run)] == ["stopped"]
    fake.responder = None
    result = cli("resume", run_id)
    assert result.exit_code == 0, result.output
    assert {i.status for i in rows(Item)} == {COMPLETED}


def _run_controls(tmp_path):
    """The controls of the runs in the CLI child's database (bound here to read it)."""
    if database.database != str(tmp_path / "cli.db"):
        init_db(str(tmp_path / "cli.db"))
    with database.connection_context():
        return [r.control for r in Run.select()]


def _wait_until(condition, timeout):
    """Wait (bounded) until `condition()` holds; the caller's assertions say what failed."""
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)


def test_a_spent_budget_pauses_with_exit_3_and_a_higher_budget_finishes(cli, tmp_path, fake):
    # OpenRouter-style provider-reported cost: $1 per answer, judge calls free.
    fake.responder = lambda call: (
        None
        if call["body"].get("model") == "judge"
        else {
            "text": "paid",
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2, "cost": 1.0},
        }
    )
    # The fake server reports each call's cost (like OpenRouter): no price needed.
    result = cli("run", "-c", write_config(tmp_path, fake, max_budget_usd=1.5), "--allow-unpriced")
    assert result.exit_code == 3
    assert "budget reached" in result.stderr
    (run,) = rows(Run)
    assert f"Continue it with: llmbench resume {run.run_id} --max-budget-usd " in result.stderr
    assert [i.status for i in rows(Item)].count("NEW") >= 2
    result = cli("resume", run.run_id, "--max-budget-usd", 100)
    assert result.exit_code == 0, result.output
    assert {i.status for i in rows(Item)} == {COMPLETED}


def test_resume_continues_a_run_whose_process_died(cli, tmp_path, fake):
    # A run left "running" with no live orchestrator (the process was killed).
    assert cli("import", DATA / "seed001_tasks.yml").exit_code == 0  # creates the database
    write_config(tmp_path, fake)
    from app.runconfig import reader
    from app.runconfig import run_plan

    with database.connection_context():
        run = run_plan.apply(reader.load(tmp_path / "config.yml", environ={"FAKE_KEY": "x"}))
    result = cli("resume", run.run_id, "--json")
    assert result.exit_code == 0
    assert events(result)[0]["event"] == "run_resumed"
    assert {i.status for i in rows(Item)} == {COMPLETED}


def test_a_server_holding_the_orchestrator_makes_the_cli_exit_1(cli, tmp_path, fake):
    cli("import", DATA / "seed001_tasks.yml")  # creates the database
    with database.connection_context():
        Lease.create(
            name="orchestrator",
            holder="server:1:abcd",
            expires_at=utcnow() + dt.timedelta(seconds=60),
        )
    result = cli("run", "-c", write_config(tmp_path, fake))
    assert result.exit_code == 1
    assert "held by a process on host server (pid 1; holder server:1:abcd)" in result.stderr
    assert rows(Run) == [] and fake.calls == []


# ---- report, diff, unknown runs ------------------------------------------------------------


def test_report_writes_summary_json_and_report_html(cli, tmp_path, fake):
    cli("run", "-c", write_config(tmp_path, fake), "--quiet")
    run_id = rows(Run)[0].run_id
    result = cli("report", run_id, "--out", tmp_path / "out")
    assert result.exit_code == 0
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["runId"] == run_id
    assert (tmp_path / "out" / "report.html").stat().st_size > 0


def test_diff_shows_per_model_and_per_task_deltas(cli, tmp_path, fake):
    cli("run", "-c", write_config(tmp_path, fake), "--quiet")
    fake.responder = lambda call: (
        {"text": json.dumps({"score": 50, "reason": "worse"})}
        if call["body"].get("model") == "judge"
        else None
    )
    cli("run", "-c", write_config(tmp_path, fake), "--quiet")
    run_a, run_b = [r.run_id for r in sorted(rows(Run), key=lambda r: r.id)]
    result = cli("diff", run_a, run_b, "--json")
    assert result.exit_code == 0
    deltas = {m["label"]: m["scoreDelta"] for m in json.loads(result.stdout)["models"]}
    assert deltas == {"fake/m1": -30.0, "fake/m2 · max_tokens 64": -30.0}
    text = cli("diff", run_a, run_b).stdout
    # Two shared tasks give no verdict, so the four drops are listed below the threshold, as on
    # the compare page: the lists never contradict the verdict.
    assert "fake/m1" in text and "-30.0" in text and "too few shared tasks" in text
    assert "Regressions" not in text and "Changes below the threshold (4):" in text


@pytest.mark.parametrize("args", [["report", "nope"], ["resume", "nope"], ["diff", "nope", "nada"]])
def test_an_unknown_run_exits_2(cli, args):
    result = cli(*args)
    assert result.exit_code == 2 and "nope" in result.stderr


def test_report_to_an_unwritable_folder_is_an_error_naming_it(cli, tmp_path):
    from tests.factories import make_run

    cli("import", DATA / "seed001_tasks.yml")  # creates the database
    with database.connection_context():
        make_run("done")
    result = cli("report", "done", "--out", "/proc/llmbench-x")
    assert result.exit_code == 1
    assert "cannot write the reports to /proc/llmbench-x" in result.stderr
    assert result.exc_info[0] is SystemExit  # a message, not a traceback


@pytest.mark.parametrize("command", ["validate", "dry-run", "run"])
def test_an_unwritable_out_dir_is_a_config_error_before_any_call(cli, tmp_path, fake, command):
    path = write_config(tmp_path, fake, out_dir="/proc/llmbench-x")
    args = {
        "validate": ["validate", path],
        "dry-run": ["run", "-c", path, "--dry-run"],
        "run": ["run", "-c", path],
    }[command]
    result = cli(*args)
    assert result.exit_code == 2
    assert "run.out_dir: reports cannot be written to /proc/llmbench-x" in result.stderr
    assert fake.calls == []


def test_reports_that_cannot_be_written_after_the_run_say_so_and_exit_0(cli, tmp_path, fake):
    out = tmp_path / "out"
    out.mkdir()
    (out / "fixed").write_text("a file where the run's report folder would go")
    result = cli("run", "-c", write_config(tmp_path, fake, id="fixed", out_dir=str(out)))
    assert result.exit_code == 0
    assert f"cannot write the reports to {out / 'fixed'}" in result.stderr
    assert "llmbench report fixed --out DIR" in result.stderr
    assert {i.status for i in rows(Item)} == {COMPLETED}


# ---- import, export --------------------------------------------------------------------------


def test_export_to_an_unwritable_file_is_an_error_naming_it(cli):
    result = cli("export", "-o", "/proc/llmbench-nope/x.json")
    assert result.exit_code == 1
    assert "cannot write /proc/llmbench-nope/x.json" in result.stderr
    assert result.exc_info[0] is SystemExit


def test_import_then_export_round_trips_through_files(cli, tmp_path):
    result = cli("import", DATA / "seed001_tasks.yml", DATA / "yaml_folder", "--collection", "c")
    assert result.exit_code == 0
    assert "Imported 4 tasks into collection 'c': 4 created" in result.output
    out = tmp_path / "tasks.jsonl"
    assert cli("export", "--format", "jsonl", "--collection", "c", "-o", out).exit_code == 0
    assert len(out.read_text().splitlines()) == 4
    again = cli("import", out, "--on-duplicate", "skip", "--json")
    assert json.loads(again.stdout)["skipped"] == 4


def test_import_of_a_duplicate_is_rejected_with_exit_2(cli):
    cli("import", DATA / "seed001_tasks.yml")
    result = cli("import", DATA / "seed001_tasks.yml")
    assert result.exit_code == 2 and "already exists" in result.stderr


def test_export_to_stdout_in_yaml(cli):
    cli("import", DATA / "seed001_tasks.yml", "--collection", "seed001")
    result = cli("export", "--format", "yaml", "--collection", "seed001")
    assert [t["task_id"] for t in yaml.safe_load(result.stdout)] == [
        "java_hello_world",
        "french_greeting",
    ]


# ---- the config schema ----------------------------------------------------------------------

BAD_CONFIG = """\
run:
  name: x
  question_limit: -3
  collections: [nope]
  colour: red
providers:
  - name: p1
    type: OPENAI
    base_url: ftp://x
    headers: {Authorization: "Bearer ${NOPE_ENV}"}
judge: {provider: ghost, model: j}
targets:
  - provider: {type: OLLAMA, base_url: "http://127.0.0.1:11434"}
    model: m
    params: {temperature: 9}
  - provider: p1
"""


def test_config_problems_come_in_line_order_with_key_paths_and_no_cascade(app):
    from app.errors import ValidationError
    from app.runconfig import reader

    with pytest.raises(ValidationError) as info:
        reader.parse(BAD_CONFIG, "bad.yml", environ={})
    assert [(e["line"], e["field"]) for e in info.value.errors] == [
        (3, "run.question_limit"),
        (4, "run.collections"),
        (5, "run.colour"),
        (9, "providers[0].base_url"),
        (10, "providers[0].headers.Authorization"),
        (11, "judge.provider"),
        (15, "targets[0].params.temperature"),
        (16, "targets[1].model"),
    ]


def test_a_config_may_use_seed_004_spellings_and_json(app):
    from app.runconfig import reader

    importer_config = json.dumps(
        {
            "run": {
                "name": "j",
                "datasetPath": str(DATA / "seed004_bank.jsonl"),
                "questionLimit": 1,
                "maxBudgetUsd": 2,
            },
            "providers": [{"name": "p", "type": "OLLAMA", "base_url": "http://127.0.0.1:11434"}],
            "judge": {"provider": "p", "model": "j"},
            "targets": [{"provider": "p", "model": "m"}],
        }
    )
    plan = reader.parse(importer_config, "c.json", environ={}, allow_unpriced=True)
    assert plan.settings == {"questionLimit": 1, "maxBudgetUsd": 2.0}
    assert (plan.items, plan.dataset_collection) == (1, "seed004_bank")


@pytest.mark.parametrize("db", [None, "instance/llmbench.db", "sqlite:///tmp/x.db"])
def test_worker_refuses_sqlite_naming_postgres(monkeypatch, db):
    monkeypatch.delenv("LLMBENCH_DB", raising=False)
    result = CliRunner().invoke(main, ["worker"] + (["--db", db] if db else []))
    assert result.exit_code == 2
    assert "llmbench worker needs PostgreSQL" in result.output
