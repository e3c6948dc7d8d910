"""`llmbench run --min-composite N`: exit 4 when a target's composite score is under N, naming
it; with --junit one testcase per target for the gate."""

import pytest
import xmlschema
from junitparser import Failure
from junitparser import JUnitXml

from app.results.gate_limits import Gates
from app.results.gates import check_gates
from tests.cli_helpers import judge_scores
from tests.cli_helpers import make_cli
from tests.cli_helpers import write_config
from tests.factories import add_item
from tests.factories import make_run
from tests.test_cli_outputs import XSD


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


# The fake server answers at once: time and on-target give their full 30 points, so the
# composite is 0.7 × score + 30 (m1 80 -> 86.0, m2 40 -> 58.0).


def test_min_composite_gate_fails_run_with_exit_4(cli, tmp_path, fake):
    fake.responder = judge_scores({"m1": 80, "m2": 40})
    result = cli("run", "-c", write_config(tmp_path, fake), "--min-composite", 70)
    assert result.exit_code == 4
    assert "Gate --min-composite failed: fake/m2: composite 58.0 is under 70.0" in result.stderr
    assert "composite 86.0" not in result.stderr


def test_min_composite_gate_passes_when_every_target_reaches_it(cli, tmp_path, fake):
    fake.responder = judge_scores({"m1": 80, "m2": 40})
    result = cli("run", "-c", write_config(tmp_path, fake), "--min-composite", 58)
    assert result.exit_code == 0, result.output


def test_min_composite_gate_is_a_junit_testcase_per_target(cli, tmp_path, fake):
    fake.responder = judge_scores({"m1": 80, "m2": 40})
    junit = tmp_path / "junit.xml"
    path = write_config(tmp_path, fake)
    result = cli("run", "-c", path, "--min-composite", 70, "--junit", junit)
    assert result.exit_code == 4
    xmlschema.XMLSchema(str(XSD)).validate(str(junit))
    (gates,) = [s for s in JUnitXml.fromfile(str(junit)) if s.name == "quality gates"]
    cases = {c.classname: c for c in gates}
    assert sorted(cases) == ["fake/m1", "fake/m2"]
    assert cases["fake/m1"].name == "--min-composite 70" and cases["fake/m1"].is_passed
    (failure,) = cases["fake/m2"].result
    assert isinstance(failure, Failure) and failure.type == "gate"
    assert failure.message == "fake/m2: composite 58.0 is under 70.0"


def test_min_composite_gate_fails_a_target_without_a_composite(app):
    run, (t1,) = make_run("g-1")
    add_item(run, t1, "a", status="FAILED", error_stage="answer", error_msg="refused")
    (failure,) = check_gates(run, Gates(min_composite=10))
    assert failure["gate"] == "--min-composite"
    assert failure["message"] == (
        "local/m1: no scored answer with a time, so the composite cannot be checked"
    )


def test_min_composite_gate_is_not_checked_overall(app):
    run, (t1, t2) = make_run("g-2", targets=[("local", "m1"), ("local", "m2")])
    add_item(run, t1, "a", score=90, time_taken_ms=1000.0)
    add_item(run, t2, "a", score=10, time_taken_ms=1000.0)
    failures = check_gates(run, Gates(min_composite=50))
    assert [f["scope"] for f in failures] == ["local/m2"]
