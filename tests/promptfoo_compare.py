"""The example promptfoo suite run by the real promptfoo and by `llmbench run -c` on the same
answers (the fake server answers each prompt with a fixed text), and each test case's pass/fail
per assert read from both. Used by tests/test_promptfoo_agrees.py and
bench/promptfoo_agreement.py (which says how to install promptfoo).

promptfoo is found from $LLMBENCH_PROMPTFOO: the folder it was npm-installed in, or its
executable; else `promptfoo` on the PATH."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import yaml

from app.db.models import Item
from app.db.models import RunTarget
from tests.cli_helpers import rows

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "examples" / "promptfoo"
MODELS = ["llama3.2:3b", "gpt-4o-mini"]  # the suite's providers' models, both on the fake server
# A fixed answer per question (keyed on a piece of the prompt), chosen so that some asserts
# pass and some fail.
ANSWERS = {
    "17 + 25": "42",
    "12 times 12": "144",
    "Ada Lovelace": '{"name": "Ada Lovelace", "age": 36}',
    "prime number": "I cannot say: 4",  # fails not-icontains "I cannot" and the regex
    "capital of France": "Paris.",  # fails equals "Paris"; within 2 edits of it
    "planet is the largest": "The largest planet is Jupiter.",  # more than 5 edits from it
    "quick brown fox": "The quick brown fox jumps over the lazy dog.",
    "service is up": 'The service is up: {"up": true}',  # JSON inside words
}
# promptfoo must not call home nor keep anything between runs.
QUIET_ENV = {
    "PROMPTFOO_DISABLE_TELEMETRY": "1",
    "PROMPTFOO_DISABLE_UPDATE": "1",
    "PROMPTFOO_DISABLE_SHARING": "1",
    "PROMPTFOO_DISABLE_REMOTE_GENERATION": "1",
    "PROMPTFOO_CACHE_ENABLED": "false",
    "NO_COLOR": "1",
}


def find_promptfoo(environ=os.environ):
    """The promptfoo executable, or None when it is not installed."""
    given = environ.get("LLMBENCH_PROMPTFOO")
    if given:
        path = Path(given)
        for candidate in (path, path / "node_modules" / ".bin" / "promptfoo"):
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
        return None
    return shutil.which("promptfoo")


def answer(call, answers=None):
    """The fake server's reply to a chat call: the fixed answer its prompt asks for."""
    text = " ".join(str(m.get("content")) for m in call["body"].get("messages") or [])
    for key, reply in (answers or ANSWERS).items():
        if key in text:
            return {"text": reply}
    return None


def copy_suite(folder, url, source=EXAMPLE):
    """The example suite copied to `folder`, both providers on the fake server at `url`."""
    shutil.copytree(source, folder)
    path = Path(folder) / "promptfooconfig.yaml"
    path.write_text(path.read_text().replace("http://localhost:8080", url))
    return path


def suite_tests(path):
    """The suite's test descriptions, in order."""
    return list(suite_asserts(path))


def suite_asserts(path):
    """{test description: how many asserts it has, defaultTest's included}."""
    doc = yaml.safe_load(Path(path).read_text())
    common = len((doc.get("defaultTest") or {}).get("assert") or [])
    return {t["description"]: common + len(t.get("assert") or []) for t in doc["tests"]}


def run_promptfoo(executable, suite, url, workdir):
    """{(test description, model): [pass per assert]} from `promptfoo eval` on the suite."""
    out = Path(workdir) / "promptfoo-results.json"
    env = {
        **os.environ,
        **QUIET_ENV,
        "PROMPTFOO_CONFIG_DIR": str(Path(workdir) / "promptfoo-home"),
        "OLLAMA_BASE_URL": url,
        "OPENAI_API_KEY": "not-a-real-key",
    }
    command = [executable, "eval", "-c", str(suite), "-o", str(out)]
    command += ["--no-cache", "--no-progress-bar", "--no-write", "--no-share", "--no-table"]
    done = subprocess.run(
        command, cwd=workdir, env=env, capture_output=True, text=True, timeout=300
    )
    if not out.exists():  # exit code 100 only says some test failed: the file tells
        raise RuntimeError(f"promptfoo wrote no results:\n{done.stdout}\n{done.stderr}")
    results = json.loads(out.read_text())["results"]["results"]
    found = {}
    for result in results:
        model = result["provider"]["id"].split(":", 2)[2]
        parts = result["gradingResult"]["componentResults"]
        found[(result["testCase"]["description"], model)] = [bool(p["pass"]) for p in parts]
    return found


def run_llmbench(cli, suite):
    """{(task id, model): [pass per check]} from `llmbench run -c` on the suite (`cli` invokes
    the CLI on a test database)."""
    result = cli("run", "-c", suite)
    assert result.exit_code == 0, result.output
    models = {t.id: t.model for t in rows(RunTarget)}
    return {
        (item.task_key, models[item.target_id]): [bool(c["passed"]) for c in item.check_results]
        for item in rows(Item)
    }


def task_id(description):
    """Our task id for a test description (the import's rule, for the suite's plain names)."""
    return description.strip().lower().replace(" ", "-")


def compare(tests, theirs, ours):
    """[(test, model, promptfoo's passes, ours)] for every test x model, in suite order."""
    return [
        (test, model, theirs.get((test, model)), ours.get((task_id(test), model)))
        for test in tests
        for model in MODELS
    ]


def table(rows_):
    """The comparison as a plain text table: test case | promptfoo | llmbench."""

    def verdict(passes):
        if passes is None:
            return "missing"
        marks = "".join("✓" if p else "✗" for p in passes)
        return f"{'pass' if all(passes) else 'FAIL'} {marks}"

    lines = [f"{'test case':<44} | {'promptfoo':<12} | {'llmbench':<12} | same"]
    lines.append("-" * len(lines[0]))
    for test, model, theirs, ours in rows_:
        same = "yes" if theirs == ours else "NO"
        name = f"{test} [{model}]"
        lines.append(f"{name:<44} | {verdict(theirs):<12} | {verdict(ours):<12} | {same}")
    return "\n".join(lines)
