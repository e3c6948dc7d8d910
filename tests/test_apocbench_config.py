"""Seed 004's own config (docs/examples/apocbench.yml, the seed's schema) runs as it is, with the
base URLs pointed at the fake server; its errors name the seed's keys and lines."""

import json
import shutil
from pathlib import Path

import pytest
import yaml

from app.catalog.defaults import DEFAULT_PROVIDERS
from app.db.models import COMPLETED
from app.db.models import Item
from app.db.models import Price
from app.db.models import Provider
from app.db.models import ProviderHeader
from app.db.models import Run
from app.errors import ValidationError
from app.runconfig import reader
from tests.cli_helpers import SECRET
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"
MODELS = ["google/gemini-3-flash-preview", "llama3.2:3b", "qwen/qwen-2.5-7b-instruct"]


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


@pytest.fixture
def example(tmp_path, fake):
    """The example config and its question bank, with both routers on the fake server."""
    fake.models = MODELS
    for name in ("apocbench.yml", "question_bank_v7.jsonl"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    path = tmp_path / "apocbench.yml"
    text = path.read_text()
    text = text.replace("http://localhost:11434", fake.url)
    text = text.replace("https://openrouter.ai/api/v1", fake.url + "/v1")
    path.write_text(text)
    return path


# The fake server stands in for OpenRouter but reports no cost, so the example's budget is
# taken as the user's word (a router on 127.0.0.1 is no cost-reporting OpenRouter).
UNPRICED = "--allow-unpriced"


def _env(monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", SECRET)


def rubric_judge(call):
    """The judge gives every rubric item its full score (the ids come from the JSON schema)."""
    body = call["body"]
    if "response_format" not in body:
        return None
    schema = body["response_format"]["json_schema"]["schema"]["properties"]
    rubric = schema.get("rubric_scores", {}).get("properties", {})
    verdict = {"score": 90, "reason": "full marks", "auto_fail": False}
    verdict["rubric_scores"] = {key: spec["maximum"] for key, spec in rubric.items()}
    return {"text": json.dumps(verdict)}


def test_the_seed_004_example_config_validates_as_is(cli, example, monkeypatch):
    _env(monkeypatch)
    result = cli("validate", "-c", example, UNPRICED)
    assert result.exit_code == 0, result.output
    assert "Items: 3 tasks x 2 targets = 6" in result.stdout


def test_the_seed_004_example_config_runs_against_the_fake_server(cli, example, monkeypatch, fake):
    _env(monkeypatch)
    fake.responder = rubric_judge
    result = cli("run", "-c", example, UNPRICED)
    assert result.exit_code == 0, result.output
    (run,) = rows(Run)
    assert run.run_id.startswith("mbp-small-pack-")
    assert run.settings == {"maxBudgetUsd": 5.0, "concurrency": 2, "judgeConcurrency": 2}
    assert {i.status for i in rows(Item)} == {COMPLETED}, [i.error_msg for i in rows(Item)]
    assert len(rows(Item)) == 6
    # routers -> providers: ollama (native wire) and openrouter (OpenAI wire, key from the env)
    built_in = {p["name"] for p in DEFAULT_PROVIDERS}  # a new database's example providers
    providers = {p.name: p.type for p in rows(Provider) if p.name not in built_in}
    assert providers == {"ollama": "OLLAMA", "openrouter": "OPENAI"}
    (header,) = [h for h in rows(ProviderHeader) if h.key == "Authorization"]
    assert header.is_secret and SECRET not in header.value
    calls = fake.chat_calls()
    assert {c["path"] for c in calls} == {"/api/chat", "/v1/chat/completions"}
    judge = [c for c in calls if c["body"]["model"] == MODELS[0]][-1]
    assert judge["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert judge["body"]["provider"] == {"require_parameters": True}
    assert (judge["body"]["temperature"], judge["body"]["max_tokens"]) == (0, 2048)
    qwen = [c for c in calls if c["body"]["model"] == MODELS[2]][-1]["body"]
    assert qwen["provider"] == {
        "allow_fallbacks": True,
        "sort": "price",
        "data_collection": "deny",
        "max_price": {"prompt": 1, "completion": 2},
    }
    assert (qwen["temperature"], qwen["max_tokens"]) == (0.2, 1024)  # the router's defaults
    llama = [
        c["body"]["options"]
        for c in calls
        if c["body"]["model"] == MODELS[1] and "options" in c["body"]  # not the unload call
    ][1:]
    # past the warm-up: the model's own temperature wins, maxTokens from the router's defaults
    assert llama == [{"temperature": 0.1, "num_predict": 1024}] * 3
    # outDir is relative to the config: runs/<runId>/summary.json
    summary = json.loads((example.parent / "runs" / run.run_id / "summary.json").read_text())
    assert summary["runId"] == run.run_id
    # Ollama is local and free (seed 004: it never counts toward the budget).
    assert {(p.provider_name, p.model, p.input_per_1m) for p in rows(Price)} == {
        ("ollama", "llama3.2:3b", 0.0)
    }


def test_resume_true_continues_the_latest_unfinished_run_of_that_name(
    cli, example, monkeypatch, fake
):
    _env(monkeypatch)
    fake.responder = lambda call: (
        {"status": 400} if call["body"]["model"] == MODELS[1] else rubric_judge(call)
    )
    example.write_text(example.read_text().replace("resume: false", "resume: true"))
    cli("run", "-c", example, "--quiet", UNPRICED)
    (first,) = rows(Run)
    assert cli("stop", first.run_id).exit_code == 2  # finished already: nothing to continue
    # An unfinished one is continued instead of starting a new run.
    from app.db.connection import database

    with database.connection_context():
        Run.update(status="PENDING", control="stopped").execute()
        Item.update(status="NEW").where(Item.status == "FAILED").execute()
    fake.responder = rubric_judge
    result = cli("run", "-c", example, UNPRICED)
    assert result.exit_code == 0, result.output
    assert f"continuing {first.run_id}" in result.stderr
    assert [r.run_id for r in rows(Run)] == [first.run_id]


def _errors(text, tmp_path, environ=None):
    with pytest.raises(ValidationError) as info:
        reader.parse(text, "apocbench.yml", base_dir=tmp_path, environ=environ or {})
    return [(e["line"], e["field"], e["message"]) for e in info.value.errors]


def _example(**changes):
    doc = yaml.safe_load((EXAMPLES / "apocbench.yml").read_text())
    for path, value in changes.items():
        node = doc
        *parents, last = path.split(".")
        for key in parents:
            node = node[int(key)] if key.isdigit() else node[key]
        node[int(last) if last.isdigit() else last] = value
    return yaml.safe_dump(doc, sort_keys=False)


def _line(text, needle):
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_seed_errors_name_the_seed_keys_and_lines(app, tmp_path):
    shutil.copy(EXAMPLES / "question_bank_v7.jsonl", tmp_path)
    text = _example(
        **{
            "run.concurrency.judge": 0,
            "run.questionLimit": "ten",
            "judge.structured": False,
            "models.0.router": "nowhere",
            "models.1.routing.sort": "fastest",
            "models.1.params": {"temperature": 7},
            "models.1.promptFormat": "completion",
        }
    )
    errors = _errors(text, tmp_path, {"OPENROUTER_API_KEY": "k"})
    fields = {field: line for line, field, _message in errors}
    assert fields == {
        "run.questionLimit": _line(text, "questionLimit"),
        "run.concurrency.judge": _line(text, "judge: 0"),
        "judge.structured": _line(text, "structured"),
        "models[0].router": _line(text, "router: nowhere"),
        "models[1].routing.sort": _line(text, "sort: fastest"),
        "models[1].params.temperature": _line(text, "temperature: 7"),
        "models[1].promptFormat": _line(text, "promptFormat"),
    }


def test_a_missing_api_key_env_is_named_at_api_key_env(app, tmp_path):
    shutil.copy(EXAMPLES / "question_bank_v7.jsonl", tmp_path)
    text = _example()
    ((line, field, message),) = _errors(text, tmp_path)
    assert (line, field) == (_line(text, "apiKeyEnv: OPENROUTER"), "routers.openrouter.apiKeyEnv")
    assert message == "environment variable OPENROUTER_API_KEY is not set"


def test_unknown_seed_keys_are_errors(app, tmp_path):
    shutil.copy(EXAMPLES / "question_bank_v7.jsonl", tmp_path)
    text = _example(**{"models.0.colour": "red", "routers.ollama.port": 1})
    fields = [f for _line_no, f, _m in _errors(text, tmp_path, {"OPENROUTER_API_KEY": "k"})]
    assert fields == ["routers.ollama.port", "models[0].colour"]


def test_routing_on_an_ollama_model_is_an_error(app, tmp_path):
    shutil.copy(EXAMPLES / "question_bank_v7.jsonl", tmp_path)
    text = _example(**{"models.0.routing": {"sort": "price"}})
    fields = [f for _l, f, _m in _errors(text, tmp_path, {"OPENROUTER_API_KEY": "k"})]
    assert fields == ["models[0].routing"]


def test_a_router_named_openrouter_on_127_0_0_1_reports_no_cost(cli, example, monkeypatch):
    """Its name is not its server: the budget needs prices (or --allow-unpriced)."""
    _env(monkeypatch)
    result = cli("validate", "-c", example)
    assert result.exit_code == 2
    assert "run.maxBudgetUsd: the budget cannot count what these cost" in result.output


def test_a_router_at_openrouter_ai_reports_its_cost_whatever_its_name(cli, tmp_path):
    text = (EXAMPLES / "apocbench.yml").read_text().replace("openrouter:", "cloud:", 1)
    text = text.replace("router: openrouter", "router: cloud")
    path = tmp_path / "apocbench.yml"
    path.write_text(text)
    shutil.copy(EXAMPLES / "question_bank_v7.jsonl", tmp_path / "question_bank_v7.jsonl")
    result = cli("validate", "-c", path)
    assert "maxBudgetUsd" not in result.output


def test_a_null_judge_temperature_stays_unset(cli, example, monkeypatch):
    _env(monkeypatch)
    text = example.read_text()
    judge = text.index("\njudge:")
    example.write_text(
        text[:judge] + text[judge:].replace("  temperature: 0\n", "  temperature: null\n", 1)
    )
    result = cli("run", "-c", example, "--dry-run", "--json", UNPRICED)
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert "temperature" not in (plan["judge"]["params"] or {})
