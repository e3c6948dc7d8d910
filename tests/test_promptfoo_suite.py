"""A promptfoo suite read as tasks (prompts x tests, defaultTest merged, file:// prompts and
tests), its unsupported asserts refused with file and line or skipped, and its providers read
as the run's targets."""

import json

import pytest

from app.datasets import promptfoo
from app.errors import ValidationError
from app.runconfig import reader
from tests.cli_helpers import make_cli

SUITE = """\
prompts:
  - "Q: {{question}}"
tests:
  - description: First one
    vars:
      question: one?
    assert:
      - type: contains
        value: "1"
  - vars:
      question: two?
    assert:
      - type: javascript
        value: output.length > 0
"""


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


def write(folder, text, name="promptfooconfig.yaml"):
    path = folder / name
    path.write_text(text)
    return path


def tasks(path):
    dataset = promptfoo.parse(path.read_text(), str(path))
    assert dataset.problems == []
    return {t.data["task_id"]: t.data for t in dataset.tasks}


def test_an_unsupported_assert_fails_the_import_naming_file_and_line(cli, tmp_path):
    path = write(tmp_path, SUITE)
    result = cli("import", path, "--json")
    assert result.exit_code == 2
    (error,) = json.loads(result.output.splitlines()[0])["errors"]
    assert (error["file"], error["line"], error["field"]) == (str(path), 13, "tests[1].assert[0]")
    assert "'javascript'" in error["message"] and "--skip-unsupported" in error["message"]


def test_nothing_is_stored_when_an_assert_is_unsupported(cli, tmp_path):
    path = write(tmp_path, SUITE)
    cli("import", path)
    assert "first-one" not in cli("export").output


def test_skip_unsupported_imports_the_rest_and_lists_each_skipped_assert(cli, tmp_path):
    path = write(tmp_path, SUITE)
    result = cli("import", path, "--skip-unsupported")
    assert result.exit_code == 0, result.output
    assert f"Skipped {path}:13: tests[1].assert[0]: assert 'javascript'" in result.output
    assert "Imported 2 tasks" in result.output


def test_the_format_is_detected_from_prompts_and_tests(cli, tmp_path):
    path = write(tmp_path, SUITE.replace("javascript", "contains"), "suite.yml")
    result = cli("import", path)
    assert result.exit_code == 0, result.output
    assert "collection 'suite'" in result.output


def test_default_test_vars_yield_to_the_tests_and_its_asserts_come_first(tmp_path):
    path = write(
        tmp_path,
        """\
prompts: ["{{greeting}}, {{name}}"]
defaultTest:
  vars: {greeting: Hello, name: you}
  assert: [{type: not-icontains, value: sorry}]
tests:
  - vars: {name: Ada}
    assert: [{type: contains, value: Ada}]
""",
    )
    (task,) = tasks(path).values()
    assert task["question"] == "Hello, Ada"
    assert [c["type"] for c in task["checks"]] == ["icontains", "contains"]


def test_file_prompts_are_read_beside_the_config_each_a_task_per_test(tmp_path):
    (tmp_path / "prompts.txt").write_text("Short: {{q}}\n---\nLong: {{q}}\n")
    (tmp_path / "chat.json").write_text(
        json.dumps(
            [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "{{q}}"}]
        )
    )
    path = write(
        tmp_path,
        "prompts: [file://prompts.txt, file://chat.json]\ntests:\n  - vars: {q: Why?}\n",
    )
    found = tasks(path)
    assert {k: v["question"] for k, v in found.items()} == {
        "test-1-p1": "Short: Why?",
        "test-1-p2": "Long: Why?",
        "test-1-p3": "Why?",
    }
    assert found["test-1-p3"]["system_prompt"] == "Be terse."


def test_tests_from_a_file_name_that_file_in_their_errors(tmp_path):
    (tmp_path / "tests.yaml").write_text("- vars: {q: x}\n  assert:\n    - type: python\n")
    path = write(tmp_path, "prompts: ['{{q}}']\ntests: file://tests.yaml\n")
    dataset = promptfoo.parse(path.read_text(), str(path))
    (entry,) = dataset.unsupported
    assert (entry["file"], entry["line"]) == (str(tmp_path / "tests.yaml"), 3)


def test_a_missing_var_is_a_problem_naming_the_test(tmp_path):
    path = write(tmp_path, "prompts: ['{{q}} {{other}}']\ntests:\n  - vars: {q: x}\n")
    dataset = promptfoo.parse(path.read_text(), str(path))
    (problem,) = dataset.problems
    assert (problem["field"], problem["line"]) == ("tests[0].vars", 3)
    assert "other" in problem["message"]


def test_the_category_comes_from_metadata_else_the_suite(tmp_path):
    path = write(
        tmp_path,
        "prompts: ['{{q}}']\ntests:\n  - vars: {q: a}\n    metadata: {category: maths}\n"
        "  - vars: {q: b}\n",
        "arith.yaml",
    )
    assert [t["category"] for t in tasks(path).values()] == ["maths", "arith"]


PROVIDERS = """\
prompts: ['{{q}}']
providers:
  - ollama:chat:llama3.2:3b
  - ollama:qwen3:8b
  - openai:gpt-4o-mini
  - id: openai:chat:local-model
    label: local
    config: {apiBaseUrl: "http://127.0.0.1:8080/v1", temperature: 0.2}
tests:
  - vars: {q: a}
"""


def test_providers_become_the_runs_targets_and_providers(app, tmp_path):
    path = write(tmp_path, PROVIDERS)
    plan = reader.load(path, environ={"OPENAI_API_KEY": "sk-x"})
    assert [(t["provider"], t["model"], t.get("label")) for t in plan.targets] == [
        ("ollama", "llama3.2:3b", None),
        ("ollama", "qwen3:8b", None),
        ("openai", "gpt-4o-mini", None),
        ("openai-127.0.0.1:8080", "local-model", "local"),
    ]
    assert plan.targets[3]["params"] == {"temperature": 0.2}
    data = {name: p.data for name, p in plan.providers.items()}
    assert data["ollama"]["base_url"] == "http://localhost:11434"
    assert data["openai-127.0.0.1:8080"]["base_url"] == "http://127.0.0.1:8080"
    assert data["openai"]["headers"][0]["key"] == "Authorization"
    assert plan.judge == {} and plan.task_ids == ["test-1"]


def test_an_unsupported_provider_is_an_error_naming_it(app, tmp_path):
    path = write(tmp_path, PROVIDERS.replace("ollama:qwen3:8b", "anthropic:claude"))
    with pytest.raises(ValidationError) as info:
        reader.load(path, environ={"OPENAI_API_KEY": "sk-x"})
    (error,) = info.value.errors
    assert error["field"] == "providers[1]" and "anthropic:claude" in error["message"]


RUBRIC = """\
prompts: ['{{q}}']
providers: [ollama:llama3.2:3b]
tests:
  - description: Polite
    vars: {q: a}
    assert: [{type: llm-rubric, value: Is polite}]
"""


def test_an_llm_rubric_is_the_tasks_rubric(tmp_path):
    (task,) = tasks(write(tmp_path, RUBRIC)).values()
    assert task["rubric"] == [{"id": "r1", "text": "Is polite", "weight": 1, "max_score": 1}]


def test_an_llm_rubric_without_a_judge_is_an_error_naming_its_tasks(app, tmp_path):
    with pytest.raises(ValidationError) as info:
        reader.load(write(tmp_path, RUBRIC), environ={})
    (error,) = info.value.errors
    assert error["field"] == "judge" and "polite" in error["message"]
    assert "--judge" in error["message"]


def test_the_judge_is_default_test_options_provider(app, tmp_path):
    text = RUBRIC + "defaultTest:\n  options:\n    provider: ollama:chat:judge-model\n"
    plan = reader.load(write(tmp_path, text), environ={})
    assert (plan.judge["provider"], plan.judge["model"]) == ("ollama", "judge-model")


def test_the_run_is_named_after_the_suite(app, tmp_path):
    text = RUBRIC + "defaultTest:\n  options:\n    provider: ollama:judge\n"
    plan = reader.load(write(tmp_path, text, "smoke.yaml"), environ={})
    assert plan.name == "smoke"
