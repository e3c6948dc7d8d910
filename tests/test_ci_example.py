"""docs/examples/ci/github-actions.sh, run as a CI job runs it (no terminal, CI=true) against
the fake server: a run whose gates fail (exit 4) writes its -o files and job summary, the
re-run of only its failures (--filter-failing, from its results.jsonl) passes, and the diff of
the two artifact files finds no regression; every step's exit code is the documented one.

The install step (build the wheel, a fresh venv) needs the network; here LLMBENCH names this
checkout's CLI in the test's own venv instead."""

import json
import os
import subprocess
import sys
from pathlib import Path

import xmlschema

from tests.cli_helpers import cli_env
from tests.test_cli_outputs import XSD

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "docs" / "examples" / "ci" / "github-actions.sh"
LOW_FIRST = ("fire-001", "fire-002")  # judged 30 the first time, 90 once fixed


def _fixed_on_the_second_try():
    """The model answers with the task's question; the judge gives the tasks in LOW_FIRST 30
    the first time it sees them and 90 after; every other task 90."""
    seen = {}
    questions = {
        json.loads(line)["prompt"]: json.loads(line)["id"]
        for line in (SCRIPT.parent / "tasks.jsonl").read_text().splitlines()
    }

    def respond(call):
        body = call["body"]
        prompt = json.dumps(body.get("messages"))
        if body.get("model") != "judge":
            return {"text": "answer: " + next((q for q in questions if q in prompt), "?")}
        task = next((t for q, t in questions.items() if "answer: " + q in prompt), None)
        seen[task] = seen.get(task, 0) + 1
        score = 30 if task in LOW_FIRST and seen[task] == 1 else 90
        return {"text": json.dumps({"score": score, "reason": f"scored {score}"})}

    return respond


def test_the_ci_example_gates_re_runs_the_failures_and_diffs_the_artifacts(tmp_path, fake):
    fake.models = ["judge", "tiny"]
    fake.responder = _fixed_on_the_second_try()
    summary = tmp_path / "step-summary.md"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("LLMBENCH_")},
        **cli_env(tmp_path),
        "MODEL_URL": fake.url,
        "LLMBENCH": f"{sys.executable} -m app.cli",
        "PYTHONPATH": str(ROOT),
        "OUT": str(tmp_path / "artifacts"),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    result = subprocess.run(
        ["sh", str(SCRIPT)],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,  # no terminal, as in CI
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log
    assert "== run: exit 4" in log, log
    assert "Gate --fail-under failed: local/tiny" in log
    assert "== re-run: exit 0" in log and "== diff: exit 0" in log
    out = tmp_path / "artifacts"
    first = [json.loads(line) for line in (out / "run" / "results.jsonl").read_text().splitlines()]
    rerun = [
        json.loads(line) for line in (out / "rerun" / "results.jsonl").read_text().splitlines()
    ]
    assert len(first) == 6 and sorted(r["taskId"] for r in rerun) == sorted(LOW_FIRST)
    xmlschema.XMLSchema(str(XSD)).validate(str(out / "run" / "junit.xml"))
    assert json.loads((out / "run" / "summary.json").read_text())["models"]
    assert "| local/tiny · temperature 0 |" in (out / "run" / "summary.md").read_text()
    assert summary.read_text().count("### llmbench run") == 2  # each run appended its part
