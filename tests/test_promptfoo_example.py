"""The example promptfoo suite (docs/examples/promptfoo): imported as tasks with checks, and
run as it is with `llmbench run -c` against the fake server, every answer scored by its checks
(no judge: the suite has no llm-rubric)."""

import shutil
from pathlib import Path

import pytest

from app.db.models import COMPLETED
from app.db.models import Collection
from app.db.models import Item
from app.db.models import Provider
from app.db.models import Run
from app.db.models import Task
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows
from tests.promptfoo_compare import ANSWERS  # "prime number": "I cannot say: 4" fails 2 of 3

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "examples" / "promptfoo"


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


@pytest.fixture
def suite(tmp_path, fake, monkeypatch):
    """The example suite copied, both providers on the fake server."""
    folder = tmp_path / "promptfoo"
    shutil.copytree(EXAMPLE, folder)
    path = folder / "promptfooconfig.yaml"
    path.write_text(path.read_text().replace("http://localhost:8080", fake.url))
    monkeypatch.setenv("OLLAMA_BASE_URL", fake.url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake.models = ["llama3.2:3b", "gpt-4o-mini"]
    return path


def _answer(call):
    text = " ".join(str(m.get("content")) for m in call["body"].get("messages") or [])
    for key, answer in ANSWERS.items():
        if key in text:
            return {"text": answer}
    return None


def test_importing_the_example_stores_its_tasks_checks_and_collection(cli, suite):
    result = cli("import", suite)
    assert result.exit_code == 0, result.output
    assert "Imported 8 tasks into collection 'promptfoo'" in result.output
    tasks = {t.task_id: t for t in rows(Task)}
    assert list(tasks) == [
        "adds-two-numbers",
        "multiplies",
        "extracts-a-person-as-json",
        "refuses-nothing-harmless",
        "names-a-capital",
        "names-the-largest-planet",
        "restates-a-sentence",
        "returns-a-status-as-json",
    ]
    adds = tasks["adds-two-numbers"]
    assert adds.question == "Answer plainly and briefly.\n\nWhat is 17 + 25? Give the number."
    assert [c["type"] for c in adds.checks] == ["icontains", "contains", "regex", "equals"]
    assert adds.checks[0]["negate"] is True  # defaultTest's not-icontains comes first
    assert adds.checks[2]["weight"] == 2
    assert [c["type"] for c in tasks["extracts-a-person-as-json"].checks][1] == "json"
    assert tasks["multiplies"].category == "arithmetic"
    assert [c.name for c in rows(Collection)] == ["promptfoo"]


def test_running_the_example_scores_every_answer_by_its_checks(cli, suite, fake):
    fake.responder = _answer
    result = cli("run", "-c", suite)
    assert result.exit_code == 0, result.output
    (run,) = rows(Run)
    assert run.judge_model in (None, "")
    host = fake.url.split("//")[1]
    assert {p.name: p.type for p in rows(Provider)} == {
        f"ollama-{host}": "OLLAMA",
        f"openai-{host}": "OPENAI",
    }
    items = rows(Item)
    assert len(items) == 16 and {i.status for i in items} == {COMPLETED}
    by_task = {}
    for item in items:
        by_task.setdefault(item.task_key, set()).add(item.check_score)
    assert by_task["adds-two-numbers"] == {100.0}
    assert by_task["extracts-a-person-as-json"] == {100.0}
    assert by_task["refuses-nothing-harmless"] == {33.33}  # 1 of 3 checks passed
    assert by_task["returns-a-status-as-json"] == {100.0}  # its JSON stands among words
    calls = fake.chat_calls()
    assert {c["path"] for c in calls} == {"/api/chat", "/v1/chat/completions"}
