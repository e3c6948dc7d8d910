"""The GitHub-Actions-style script in docs/CLI.md, run as written against the fake server: a
good model passes, a regressed one fails on the diff (or on a gate), a bad config stops early."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from junitparser import JUnitXml

from tests.cli_helpers import cli_env
from tests.cli_helpers import judge_scores
from tests.cli_helpers import write_config

DOCS = Path(__file__).resolve().parent.parent / "docs" / "CLI.md"


def ci_script():
    """The script between the ci-script markers of docs/CLI.md."""
    text = DOCS.read_text()
    block = re.search(r"<!-- ci-script -->\s*```sh\n(.*?)```\s*<!-- /ci-script -->", text, re.S)
    assert block, "docs/CLI.md lost its CI script"
    return block.group(1)


@pytest.fixture
def run_script(tmp_path):
    script = tmp_path / "llmbench-gate.sh"
    script.write_text(ci_script())
    bin_dir = str(Path(sys.executable).parent)

    def run(config, run_number, **extra):
        env = {
            **cli_env(tmp_path),
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "CONFIG": str(config),
            "GITHUB_RUN_ID": str(run_number),
            "GITHUB_RUN_ATTEMPT": "1",
            **{k: str(v) for k, v in extra.items()},
        }
        return subprocess.run(
            ["bash", str(script)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    return run


@pytest.mark.slow
def test_the_ci_script_passes_a_good_model_and_fails_a_regressed_one(tmp_path, fake, run_script):
    config = write_config(tmp_path, fake, tasks=12)
    fake.responder = judge_scores({"m1": 80, "m2": 80})
    good = run_script(config, 1)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "llmbench run ci-1-1: exit 0" in good.stdout
    junit = JUnitXml.fromfile(str(tmp_path / "reports" / "junit.xml"))
    assert sum(s.tests for s in junit) == 24 and sum(s.failures for s in junit) == 0

    # The same model again, compared with the good run: no regression.
    again = run_script(config, 2, BASELINE_RUN="ci-1-1")
    assert again.returncode == 0, again.stdout + again.stderr

    # m1 regressed (80 -> 45) but stays above the score gate: the diff fails the job.
    fake.responder = judge_scores({"m1": 45, "m2": 80})
    bad = run_script(config, 3, BASELINE_RUN="ci-1-1", FAIL_UNDER=30)
    assert bad.returncode == 4, bad.stdout + bad.stderr
    assert "Regression: fake/m1 is worse in ci-3-1 than in ci-1-1" in bad.stderr
    assert "fake/m1" in (tmp_path / "reports" / "diff.txt").read_text()

    # With the default gate (70) the score gate fails it as well: still exit 4.
    gated = run_script(config, 4, BASELINE_RUN="ci-1-1")
    assert gated.returncode == 4
    assert "Gate --fail-under failed: fake/m1: score 45.0 is under 70.0" in gated.stderr


def test_the_ci_script_stops_with_2_on_an_invalid_config(tmp_path, fake, run_script):
    config = write_config(tmp_path, fake)
    config.write_text(config.read_text().replace("model: m2", "modle: m2"))
    result = run_script(config, 1)
    assert result.returncode == 2
    assert "targets[1].modle: unknown key" in result.stderr
    assert fake.calls == [] and not (tmp_path / "reports" / "junit.xml").exists()
