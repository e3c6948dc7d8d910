"""`llmbench run --max-ttft-p90 MS --max-itl-p90 MS --min-goodput R`: exit 4 naming the target and
its figure when a target misses one, 0 when every target meets them; with --junit one testcase per
target per gate. The fake server answers at once (TTFT of a few ms, gaps near 0 ms) unless told
to pause between its chunks. With an SLO in the run, the CLI says each target's goodput."""

import json

import pytest
import xmlschema
from junitparser import Failure
from junitparser import JUnitXml
from rich.console import Console

from app.cli.screen import summary_panel
from app.results.gate_limits import Gates
from app.results.gates import check_gates
from tests.cli_helpers import judge_scores
from tests.cli_helpers import make_cli
from tests.cli_helpers import write_config
from tests.factories import add_item
from tests.factories import make_run
from tests.test_cli_outputs import XSD
from tests.test_cli_screen import SUMMARY


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


def paced(scores, chunk_delay):
    """judge_scores, the targets' answers streamed with `chunk_delay` s between chunks."""
    respond = judge_scores(scores)

    def reply(call):
        spec = respond(call)
        if call["body"].get("model") != "judge":
            spec["chunk_delay"] = chunk_delay
        return spec

    return reply


def run_with(cli, tmp_path, fake, *gates, **run):
    return cli("run", "-c", write_config(tmp_path, fake, **run), *gates)


def test_max_ttft_p90_fails_a_run_whose_targets_start_slower(cli, tmp_path, fake):
    fake.responder = judge_scores({})
    result = run_with(cli, tmp_path, fake, "--max-ttft-p90", 0.001)
    assert result.exit_code == 4
    assert "Gate --max-ttft-p90 failed: fake/m1: p90 TTFT" in result.stderr
    assert "is over 0.001 ms" in result.stderr


def test_max_ttft_p90_passes_when_every_target_starts_in_time(cli, tmp_path, fake):
    fake.responder = judge_scores({})
    result = run_with(cli, tmp_path, fake, "--max-ttft-p90", 60_000)
    assert result.exit_code == 0, result.output


def test_max_itl_p90_fails_a_target_pausing_between_tokens(cli, tmp_path, fake):
    fake.responder = paced({}, chunk_delay=0.03)  # gaps of at least 30 ms
    result = run_with(cli, tmp_path, fake, "--max-itl-p90", 5)
    assert result.exit_code == 4
    assert "Gate --max-itl-p90 failed: fake/m1: p90 ITL" in result.stderr
    assert "is over 5 ms" in result.stderr


def test_max_itl_p90_passes_when_the_gaps_are_short_enough(cli, tmp_path, fake):
    fake.responder = paced({}, chunk_delay=0.001)
    result = run_with(cli, tmp_path, fake, "--max-itl-p90", 60_000)
    assert result.exit_code == 0, result.output


def test_min_goodput_counts_only_answers_meeting_the_runs_min_score(cli, tmp_path, fake):
    fake.responder = judge_scores({"m1": 80, "m2": 40})
    result = run_with(cli, tmp_path, fake, "--min-goodput", 0.001, slo={"min_score": 70})
    assert result.exit_code == 4
    assert (
        "Gate --min-goodput failed: fake/m2: goodput 0.00 answers/s is under 0.001 "
        "(SLO: score ≥ 70)"
    ) in result.stderr
    assert "fake/m1: goodput" not in result.stderr


def test_min_goodput_passes_when_every_target_gives_enough_good_answers(cli, tmp_path, fake):
    fake.responder = judge_scores({"m1": 80, "m2": 90})
    result = run_with(cli, tmp_path, fake, "--min-goodput", 0.001, slo={"min_score": 70})
    assert result.exit_code == 0, result.output


def test_min_goodput_without_an_slo_uses_the_latency_gates_bounds(cli, tmp_path, fake):
    fake.responder = paced({}, chunk_delay=0.03)
    # Each answer's own gaps are over 5 ms: none is good, whatever the rate.
    result = run_with(cli, tmp_path, fake, "--min-goodput", 0.001, "--max-itl-p90", 5)
    assert result.exit_code == 4
    assert "fake/m1: goodput 0.00 answers/s is under 0.001 (SLO: p90 ITL ≤ 5 ms)" in (result.stderr)


def test_speed_gates_are_junit_testcases_per_target(cli, tmp_path, fake):
    fake.responder = judge_scores({"m1": 80, "m2": 40})
    junit = tmp_path / "junit.xml"
    gates = ("--max-ttft-p90", 60_000, "--min-goodput", 0.001, "--junit", junit)
    result = run_with(cli, tmp_path, fake, *gates, slo={"min_score": 70})
    assert result.exit_code == 4
    xmlschema.XMLSchema(str(XSD)).validate(str(junit))
    (suite,) = [s for s in JUnitXml.fromfile(str(junit)) if s.name == "quality gates"]
    cases = {(c.classname, c.name): c for c in suite}
    assert sorted(cases) == [
        ("fake/m1", "--max-ttft-p90 60000"),
        ("fake/m1", "--min-goodput 0.001"),
        ("fake/m2", "--max-ttft-p90 60000"),
        ("fake/m2", "--min-goodput 0.001"),
    ]
    assert all(cases[(t, "--max-ttft-p90 60000")].is_passed for t in ("fake/m1", "fake/m2"))
    assert cases[("fake/m1", "--min-goodput 0.001")].is_passed
    (failure,) = cases[("fake/m2", "--min-goodput 0.001")].result
    assert isinstance(failure, Failure) and failure.type == "gate"
    assert failure.message.startswith("fake/m2: goodput 0.00 answers/s is under 0.001")


def test_a_target_without_ttft_fails_the_ttft_gate(app):
    run, (t1,) = make_run("sg-1")
    add_item(run, t1, "a", score=80, ttft_ms=None)
    (failure,) = check_gates(run, Gates(max_ttft_p90=500))
    assert failure["message"] == (
        "local/m1: no answer with a TTFT, so the p90 TTFT cannot be checked"
    )


def test_a_target_without_send_times_fails_the_goodput_gate(app):
    run, (t1,) = make_run("sg-2")
    add_item(run, t1, "a", score=80)  # an answer from before send times were stored
    (failure,) = check_gates(run, Gates(min_goodput=0.1))
    assert failure["message"] == (
        "local/m1: no answer with a send time, so the goodput cannot be checked"
    )


def test_the_end_of_a_run_says_each_targets_goodput_and_slo(cli, tmp_path, fake):
    fake.responder = judge_scores({"m1": 80, "m2": 40})
    result = run_with(cli, tmp_path, fake, slo={"min_score": 70})
    assert result.exit_code == 0, result.output
    assert "SLO: 4 of 4 answers good, goodput" in result.stdout
    assert "serves fake/m1 at this run's load with score ≥ 70" in result.stdout
    assert "fake/m2: no step met the SLO (score ≥ 70)" in result.stdout


def test_show_json_has_each_targets_slo(cli, tmp_path, fake):
    fake.responder = judge_scores({"m1": 80, "m2": 40})
    assert run_with(cli, tmp_path, fake, "--quiet", slo={"min_score": 70}).exit_code == 0
    run_id = json.loads(cli("runs", "--json").stdout.splitlines()[0])["runId"]
    models = json.loads(cli("show", run_id, "--json").stdout)["models"]
    assert [(m["slo"]["good"], m["slo"]["met"]) for m in models] == [(4, True), (0, False)]


def test_the_summary_panel_gives_an_slo_line_per_target():
    console = Console(record=True, width=200)
    summary = {**SUMMARY, "state": "finished", "completedItems": 4, "failedItems": 0}
    summary["counts"] = {"NEW": 0}
    slo = {"good": 3, "answers": 4, "goodput": 1.5, "met": True, "highestLoad": None}
    slo["sentence"] = "serves p/m1 at concurrency 2 with p90 TTFT ≤ 500 ms"
    row = {"target": "p/m1", "avgScore": 72.5, "completed": 4, "failed": 0, "slo": slo}
    console.print(summary_panel(summary, [row], {}, [], None))
    assert (
        "p/m1: SLO: 3 of 4 answers good, goodput 1.50 answers/s; serves p/m1 at concurrency 2 "
        "with p90 TTFT ≤ 500 ms"
    ) in console.export_text()
