"""The example promptfoo suite gives the same pass/fail per test case, and per assert, under
the real promptfoo and under `llmbench run -c`, on the same answers from the fake server.

Skipped unless promptfoo is installed: `bench/promptfoo_agreement.py` says how, and prints the
comparison as a table."""

import pytest

from tests import promptfoo_compare as pf
from tests.cli_helpers import make_cli

pytestmark = [pytest.mark.process, pytest.mark.promptfoo]
# Read at collection: every test's environment loses LLMBENCH_* (conftest's _clean_env).
PROMPTFOO = pf.find_promptfoo()


@pytest.fixture
def promptfoo():
    if PROMPTFOO is None:
        pytest.skip(
            "promptfoo is not installed: npm install promptfoo@0.121 in a folder and set "
            "LLMBENCH_PROMPTFOO to it (see bench/promptfoo_agreement.py)"
        )
    return PROMPTFOO


@pytest.fixture
def compared(promptfoo, tmp_path, fake, monkeypatch):
    """Every test case x model of the example suite: (test, model, promptfoo's, ours)."""
    suite = pf.copy_suite(tmp_path / "promptfoo", fake.url)
    monkeypatch.setenv("OLLAMA_BASE_URL", fake.url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake.models = list(pf.MODELS)
    fake.responder = pf.answer
    theirs = pf.run_promptfoo(promptfoo, suite, fake.url, tmp_path)
    ours = pf.run_llmbench(make_cli(tmp_path), suite)
    return pf.compare(pf.suite_tests(suite), theirs, ours)


def test_every_test_case_is_compared_and_both_passes_and_failures_occur(compared):
    asserts = pf.suite_asserts(pf.EXAMPLE / "promptfooconfig.yaml")
    assert len(compared) == len(asserts) * len(pf.MODELS)
    for test, _, theirs, ours in compared:
        assert theirs is not None and ours is not None, test
        assert len(theirs) == len(ours) == asserts[test], test  # each assert, in order
    outcomes = {all(theirs) for _, _, theirs, _ in compared}
    assert outcomes == {True, False}


def test_promptfoo_and_llmbench_agree_on_each_assert_of_each_test_case(compared):
    differ = [row for row in compared if row[2] != row[3]]
    assert not differ, "\n" + pf.table(compared)


# Where llmbench differs from promptfoo on purpose (docs/CLI.md, "A promptfoo suite"): leading
# whitespace is not the model's choice of words, and a fenced ```json block is JSON. Kept out of
# the example suite; pinned here so a change on either side shows.
QUIRKS = """\
prompts:
  - "{{question}}"
providers:
  - id: openai:chat:gpt-4o-mini
    config:
      apiBaseUrl: http://localhost:8080/v1
tests:
  - description: Starts after a space
    vars: {question: Give the number 42.}
    assert:
      - {type: starts-with, value: "42"}
  - description: Fenced JSON
    vars: {question: Give the JSON object.}
    assert:
      - {type: is-json}
"""
QUIRK_ANSWERS = {"number 42": "  42", "JSON object": '```json\n{"up": true}\n```'}


def test_the_documented_differences_are_the_only_ones_on_their_answers(
    promptfoo, tmp_path, fake, monkeypatch
):
    source = tmp_path / "quirks"
    source.mkdir()
    (source / "promptfooconfig.yaml").write_text(QUIRKS)
    suite = pf.copy_suite(tmp_path / "promptfoo", fake.url, source)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake.models = ["gpt-4o-mini"]
    fake.responder = lambda call: pf.answer(call, QUIRK_ANSWERS)
    theirs = pf.run_promptfoo(promptfoo, suite, fake.url, tmp_path)
    ours = pf.run_llmbench(make_cli(tmp_path), suite)
    assert theirs == {
        ("Starts after a space", "gpt-4o-mini"): [False],
        ("Fenced JSON", "gpt-4o-mini"): [False],
    }
    assert ours == {
        ("starts-after-a-space", "gpt-4o-mini"): [True],
        ("fenced-json", "gpt-4o-mini"): [True],
    }
