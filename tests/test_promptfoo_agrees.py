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
