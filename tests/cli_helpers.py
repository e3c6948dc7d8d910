"""Helpers for CLI tests: invoke `llmbench` on a tmp database, write configs and datasets for the
fake server, read rows and JSONL events."""

import json

import yaml
from click.testing import CliRunner

from app.cli import main
from app.db.connection import database
from tests.conftest import TEST_KEY_B64

SECRET = "sk-test-0123456789"


def cli_env(tmp_path):
    """The environment of a CLI call: a tmp database, the test key, fast retries."""
    return {
        "LLMBENCH_DB": str(tmp_path / "cli.db"),
        "LLMBENCH_MASTER_KEY_BASE64": TEST_KEY_B64,
        "LLMBENCH_BACKOFF_BASE_SECONDS": "0.01",
        "FAKE_KEY": SECRET,
        # Not a CI job unless a test says so (CI=true, as the CI running the tests may set,
        # makes `run` stop what it leaves paused).
        "CI": "",
        # No built-in tasks in a new database (~1 s each): the tests that want them say so.
        "LLMBENCH_LOAD_DEFAULTS": "0",
    }


def make_cli(tmp_path):
    """invoke(*args, input=None) -> click Result, on one database file for the whole test."""
    runner = CliRunner()
    env = cli_env(tmp_path)

    def invoke(*args, input=None):
        return runner.invoke(main, [str(a) for a in args], env=env, input=input)

    return invoke


def write_bank(path, n, categories=("Water", "Fire")):
    """A strict seed 004 JSONL bank of n tasks (ids q00, q01, ...)."""
    lines = []
    for i in range(n):
        lines.append(
            json.dumps(
                {
                    "id": f"q{i:02d}",
                    "category": categories[i % len(categories)],
                    "difficulty": "Easy",
                    "scenario": [],
                    "prompt": f"Question {i}?",
                    "rubric": [],
                    "auto_fail": ["Gives dangerous advice"],
                }
            )
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def write_config(tmp_path, fake, name="config.yml", tasks=4, targets=("m1", "m2"), **run):
    """Our run config: a fake provider, a judge and targets, a bank of `tasks` tasks."""
    fake.models = ["judge", *targets]
    bank = write_bank(tmp_path / "bank.jsonl", tasks)
    config = {
        "run": {"name": "ci", "dataset": str(bank), **run},
        "providers": [
            {
                "name": "fake",
                "type": "OPENAI",
                "base_url": fake.url,
                "headers": {"Authorization": "Bearer ${FAKE_KEY}"},
            }
        ],
        "judge": {"provider": "fake", "model": "judge", "params": {"temperature": 0}},
        "targets": [{"provider": "fake", "model": m} for m in targets],
    }
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def judge_scores(scores, auto_fail=()):
    """A responder: each target answers "answer from MODEL"; the judge, seeing that answer,
    gives `scores[MODEL]` (default 80) and auto-fails the models in `auto_fail`."""

    def respond(call):
        body = call["body"]
        model = body.get("model")
        if model != "judge":
            return {"text": f"answer from {model}"}
        prompt = json.dumps(body.get("messages"))
        answered = next((m for m in scores if f"answer from {m}" in prompt), None)
        failing = any(f"answer from {m}" in prompt for m in auto_fail)
        score = 0 if failing else scores.get(answered, 80)
        verdict = {"score": score, "reason": f"scored {score}", "auto_fail": failing}
        return {"text": json.dumps(verdict)}

    return respond


def rows(model, *where):
    """Rows of a model (its own connection: the CLI closes the database)."""
    with database.connection_context():
        query = model.select()
        for condition in where:
            query = query.where(condition)
        return list(query)


def events(result):
    """The JSONL events a --json command printed."""
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
