"""Seed 004's example config run by `llmbench run` against the real llama.cpp server from
../shared/llm/serve-local-llm (skipped when it is down): routers, gates, JUnit, reports."""

import shutil
from pathlib import Path

import pytest
import xmlschema
import yaml
from junitparser import JUnitXml

from tests import real_llm
from tests.cli_helpers import make_cli

pytestmark = [pytest.mark.real_llm, pytest.mark.slow]
EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"
XSD = Path(__file__).parent / "data" / "junit.xsd"


def test_the_seed_004_example_runs_on_the_real_model_with_gates_and_junit(
    tmp_path, llm_model, monkeypatch
):
    shutil.copy(EXAMPLES / "question_bank_v7.jsonl", tmp_path)
    doc = yaml.safe_load((EXAMPLES / "apocbench.yml").read_text())
    # The llama.cpp server stands in for OpenRouter (same wire format), as target and judge.
    doc["routers"] = {
        "openrouter": {**doc["routers"]["openrouter"], "baseUrl": real_llm.BASE_URL + "/v1"}
    }
    doc["routers"]["openrouter"]["default"] = {"temperature": 0, "maxTokens": 48}
    doc["models"] = [{"id": "small", "router": "openrouter", "model": llm_model}]
    doc["judge"].update(model=llm_model, maxTokens=300)
    config = tmp_path / "apocbench.yml"
    config.write_text(yaml.safe_dump(doc, sort_keys=False))
    monkeypatch.setenv("OPENROUTER_API_KEY", "not-needed-locally")
    junit = tmp_path / "junit.xml"
    cli = make_cli(tmp_path)
    # The example's router is named openrouter but points at the local model, which reports no
    # cost: the budget is counted only with --allow-unpriced (as for any unpriced model).
    result = cli(
        "run",
        "-c",
        config,
        "--limit",
        2,
        "--junit",
        junit,
        "--max-failed-pct",
        100,
        "--allow-unpriced",
    )
    # A 135M judge may fail validation: a judge failure, never a crash or a lost item.
    assert result.exit_code == 0, result.output
    xmlschema.XMLSchema(str(XSD)).validate(str(junit))
    cases = [c for suite in JUnitXml.fromfile(str(junit)) for c in suite]
    assert [c.name for c in cases] == ["fire-002", "water-001"]  # the first two, by task id
    assert all(c.classname.startswith("llmbench.openrouter.") for c in cases)
    suite = next(iter(JUnitXml.fromfile(str(junit))))
    # the seed's model id is the label, in the suite's target property
    assert {p.name: p.value for p in suite.properties()}["target"] == "openrouter/small"
    (folder,) = (tmp_path / "runs").iterdir()
    assert {p.name for p in folder.iterdir()} == {
        "summary.json",
        "report.html",
        "results.jsonl",
        "results.csv",
    }
