"""Outputs where asked: `-o FILE` (repeatable) writes the format its extension names, relative
to the working folder; `--summary-md FILE` and $GITHUB_STEP_SUMMARY get a Markdown table of
targets, scores, gates and files."""

import json

import pytest
import xmlschema
from junitparser import JUnitXml

from tests.cli_helpers import judge_scores
from tests.cli_helpers import make_cli
from tests.cli_helpers import write_config
from tests.test_cli_outputs import XSD


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """The working folder the command is typed in (not the config's folder)."""
    here = tmp_path / "work"
    here.mkdir()
    monkeypatch.chdir(here)
    return here


def test_each_output_file_gets_the_format_of_its_extension(cli, tmp_path, fake, workdir):
    fake.responder = judge_scores({"m1": 80, "m2": 30})
    config = write_config(tmp_path, fake)
    names = ["out/r.jsonl", "out/s.json", "out/r.csv", "out/j.xml", "out/r.md", "out/r.html"]
    args = [a for name in names for a in ("-o", name)]
    result = cli("run", "-c", config, *args)
    assert result.exit_code == 0, result.output
    out = workdir / "out"
    rows = [json.loads(line) for line in (out / "r.jsonl").read_text().splitlines()]
    assert len(rows) == 8 and rows[0]["taskId"] == "q00"
    assert {m["label"] for m in json.loads((out / "s.json").read_text())["models"]} == {
        "fake/m1",
        "fake/m2",
    }
    assert (out / "r.csv").read_text().startswith("task_id,")
    xmlschema.XMLSchema(str(XSD)).validate(str(out / "j.xml"))
    assert sum(s.tests for s in JUnitXml.fromfile(str(out / "j.xml"))) == 8
    assert (out / "r.md").read_text().startswith("# Run ")
    assert "<html" in (out / "r.html").read_text()


def test_an_output_with_an_unknown_extension_is_refused_naming_the_option(cli, tmp_path, fake):
    result = cli("run", "-c", write_config(tmp_path, fake), "-o", "results.txt")
    assert result.exit_code == 2
    assert "-o/--output" in result.output and "results.txt" in result.output


def test_set_out_dir_is_relative_to_the_working_folder(cli, tmp_path, fake, workdir):
    fake.responder = judge_scores({})
    config = write_config(tmp_path, fake)  # in tmp_path, not the working folder
    result = cli("run", "-c", config, "--set", "run.out_dir=reports")
    assert result.exit_code == 0, result.output
    (folder,) = (workdir / "reports").iterdir()
    assert (folder / "summary.json").exists()


def test_summary_md_has_a_table_of_targets_scores_and_gates(cli, tmp_path, fake, workdir):
    fake.responder = judge_scores({"m1": 90, "m2": 40})
    config = write_config(tmp_path, fake)
    result = cli(
        "run", "-c", config, "--fail-under", 70, "-o", "r.jsonl", "--summary-md", "summary.md"
    )
    assert result.exit_code == 4
    text = (workdir / "summary.md").read_text()
    assert "| Target | Score |" in text
    assert "| fake/m1 | 90.0 | 4 | 0 |" in text and "| fake/m2 | 40.0 | 4 | 0 |" in text
    assert "**Gates: 2 failed** (--fail-under 70)" in text  # fake/m2 and overall
    assert "--fail-under`: fake/m2: score 40.0 is under 70.0" in text
    assert f"[r.jsonl]({workdir / 'r.jsonl'})" in text


def test_github_step_summary_is_appended_to(cli, tmp_path, fake, workdir, monkeypatch):
    fake.responder = judge_scores({})
    step = workdir / "step_summary.md"
    step.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    result = cli("run", "-c", write_config(tmp_path, fake), "--fail-under", 50)
    assert result.exit_code == 0, result.output
    text = step.read_text()
    assert text.startswith("earlier step\n### llmbench run `ci-")
    assert "**Gates: passed** (--fail-under 50)" in text


def test_report_writes_only_the_files_asked_for(cli, tmp_path, fake, workdir):
    fake.responder = judge_scores({})
    assert cli("run", "-c", write_config(tmp_path, fake), "--quiet").exit_code == 0
    (run_id,) = [line.split()[0] for line in cli("runs").stdout.splitlines()[1:2]]
    result = cli("report", run_id, "-o", "a/results.jsonl", "-o", "a/junit.xml")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (workdir / "a").iterdir()) == ["junit.xml", "results.jsonl"]
    assert not (workdir / "runs").exists()  # no folder of reports besides
