"""`llmbench run -c promptfooconfig.yaml --skip-unsupported` (and `validate`): asserts llmbench
cannot run are left out and listed (file, line, assert) before the run starts; without the flag
they are an error (exit 2) as for `import`."""

import pytest

from app.db.models import Task
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows

SUITE = """\
providers:
  - ollama:chat:m1
prompts:
  - "Q: {{question}}"
tests:
  - vars:
      question: one?
    assert:
      - type: icontains
        value: answer
  - vars:
      question: two?
    assert:
      - type: icontains
        value: answer
      - type: javascript
        value: output.length > 0
"""


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


@pytest.fixture
def suite(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("OLLAMA_BASE_URL", fake.url)
    fake.models = ["m1"]
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(SUITE)
    return path


def test_run_without_skip_unsupported_refuses_an_unsupported_assert(cli, suite):
    result = cli("run", "-c", suite, "--quiet")
    assert result.exit_code == 2
    assert "'javascript'" in result.stderr and "--skip-unsupported" in result.stderr


def test_run_with_skip_unsupported_lists_what_it_left_out_and_runs_the_rest(cli, suite):
    result = cli("run", "-c", suite, "--skip-unsupported", "--quiet")
    assert result.exit_code == 0, result.output + result.stderr
    assert f"Left out {suite}:16: tests[1].assert[1]: assert 'javascript'" in result.stderr
    assert all(t.checks == [{"type": "icontains", "value": "answer"}] for t in rows(Task))


def test_validate_with_skip_unsupported_lists_what_it_leaves_out(cli, suite):
    result = cli("validate", "-c", suite, "--skip-unsupported")
    assert result.exit_code == 0, result.output
    assert f"Left out {suite}:16: tests[1].assert[1]: assert 'javascript'" in result.output
