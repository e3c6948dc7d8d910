"""A run with load steps: the end-of-run summary and `llmbench show` print a table per load
step (step, load, requests, output tok/s, p90 TTFT and ITL, SLO attainment, goodput, score)."""

import json

import pytest

from app.db.models import Run
from tests.cli_helpers import events
from tests.cli_helpers import judge_scores
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows
from tests.cli_helpers import write_config

LOAD = "run.load={mode: concurrency, steps: [1, 2]}"
SLO = "run.slo={ttft_p90_ms: 60000, min_score: 50}"
HEADER = "step concurrency requests out tok/s p90 TTFT ms p90 ITL ms   SLO met goodput  score"


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


def _run(cli, tmp_path, fake, *more):
    fake.responder = judge_scores({})
    config = write_config(tmp_path, fake, tasks=2, targets=("m1",))
    return cli("run", "-c", config, "--set", LOAD, *more)


def test_the_end_of_run_summary_has_a_row_per_load_step(cli, tmp_path, fake):
    result = _run(cli, tmp_path, fake, "--set", SLO)
    assert result.exit_code == 0, result.output
    lines = [line.strip() for line in result.stdout.splitlines()]
    at = lines.index(HEADER.strip())
    first, second = lines[at + 1].split(), lines[at + 2].split()
    assert first[:3] == ["1", "1", "2"] and second[:3] == ["2", "2", "2"]
    assert first[-4:-1] == ["2/2", "yes", first[-2]] and first[-1] == "80.0"


def test_show_prints_the_same_table(cli, tmp_path, fake):
    assert _run(cli, tmp_path, fake).exit_code == 0
    (run,) = rows(Run)
    result = cli("show", run.run_id)
    assert HEADER.strip() in result.stdout
    step = next(line for line in result.stdout.splitlines() if line.strip().startswith("2 "))
    assert step.split()[6] == "-"  # no SLO in the run: no attainment


def test_json_summary_rows_carry_the_steps(cli, tmp_path, fake):
    result = _run(cli, tmp_path, fake, "--json")
    summary = next(e for e in events(result) if e["event"] == "run_summary")
    (model,) = summary["models"]
    assert [s["step"] for s in model["steps"]] == [1, 2]
    assert [s["requests"] for s in model["steps"]] == [2, 2]
    assert json.dumps(model["steps"])  # plain JSON


def test_a_run_without_load_steps_prints_no_step_table(cli, tmp_path, fake):
    fake.responder = judge_scores({})
    result = cli("run", "-c", write_config(tmp_path, fake, tasks=1, targets=("m1",)))
    assert "p90 TTFT ms" not in result.stdout
