"""Downloads read a run's items a chunk at a time (issue 33): a server-side cursor on
PostgreSQL, one stepped cursor on SQLite, with the same bytes as the result read whole."""

import json
import random

import pytest

from app import latency
from app.db.connection import database
from app.db.connection import stream_rows
from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.exports import csvfiles
from app.exports import item_results
from app.exports import junit
from app.exports import rows
from app.exports.item_results import item_records
from app.exports.item_results import results_csv
from tests.factories import add_item
from tests.factories import make_run

TEXTS = ("plain", 'comma, "quoted"', "two\nlines", "=SUM(A1)", "ünïcødé ✓ | pipe", "", None)


def _random_item(rng, run, target, n):
    """One item with every column an export reads drawn at random (None included)."""
    status = rng.choice((COMPLETED, COMPLETED, COMPLETED, FAILED, WAITING_FOR_JUDGE))
    checks = [
        {"type": "contains", "score": 100.0, "passed": True, "reason": 'contains "4"'},
        {"type": "regex", "score": 0.0, "passed": False, "reason": "not found", "gate": True},
    ]
    maybe = rng.random
    return add_item(
        run,
        target,
        f"t{rng.randrange(40):03d}",  # repeats: the id orders a task's items
        status=status,
        score=rng.choice((None, 0.0, 12.5, 80, 99.99, 100.0)),
        category=rng.choice(("math", "code", "writing")),
        difficulty=rng.choice(("easy", "hard", "")),
        question=rng.choice(TEXTS) or f"Question {n}?",
        answer=(rng.choice(TEXTS) or "") + " x" * rng.randrange(300) if maybe() < 0.9 else None,
        evaluation_reason=rng.choice(TEXTS),
        error_stage="judge" if status == FAILED else None,
        error_msg="bad json" if status == FAILED else None,
        time_taken_ms=rng.choice((None, 1234.5, 1.0 / 3)),
        ttft_ms=rng.choice((None, 150.25)),
        tokens_generated=rng.choice((None, 0, 50)),
        tokens_per_second=rng.choice((None, 40.5, 1e-3)),
        cost_usd=rng.choice((None, 0.0012345)),
        check_score=rng.choice((None, 50.0)),
        check_results=checks if maybe() < 0.5 else None,
        tool_calls=[{"name": "get_weather", "arguments": {"city": "Paris"}}]
        if maybe() < 0.3
        else None,
        judge_scores=[70.0] if maybe() < 0.3 else None,
        rubric_scores={"accuracy": 4} if maybe() < 0.3 else None,
        auto_fail=rng.choice((None, True, False)),
        first_answer_ms=rng.choice((None, 151.0)),
        itl_hist=latency.pack(latency.histogram([20.0] * 40 + [30.0] * 9))
        if maybe() < 0.5
        else None,
        queue_ms=rng.choice((None, 35.5)),
        sent_ts=rng.choice((None, 1735787045.25 + n)),
    )


@pytest.fixture
def random_run(app):
    rng = random.Random(33)
    run, targets = make_run("streamed", targets=[("local", "m1"), ("remote, inc", "m|2")])
    for n in range(120):
        _random_item(rng, run, rng.choice(targets), n)
    return run


def _read_whole(query, size=None):
    """What the exports did before: the whole result read by one plain cursor."""
    return database.execute(query).fetchall()


def _downloads(client, run_id):
    post = {"format": "JSONL"}
    return {
        "results.csv": client.get(f"/runs/{run_id}/results.csv").get_data(),
        "results.md": client.get(f"/runs/{run_id}/results.md").get_data(),
        "report.html rows": client.get(f"/runs/{run_id}/report.html").get_data(),
        "results.jsonl": client.post(f"/api/runs/{run_id}/export", json=post).get_data(),
    }


def _mask_times(files):
    """report.html says when it was made: that line differs between any two downloads."""
    html = files["report.html rows"].decode()
    start = html.find("<table", html.find("Detailed results"))
    files["report.html rows"] = html[start : html.find("</table>", start)]
    return files


def test_downloads_have_the_bytes_of_the_result_read_whole(client, random_run, monkeypatch):
    streamed = _mask_times(_downloads(client, "streamed"))
    for module in (rows, item_results):
        monkeypatch.setattr(module, "stream_rows", _read_whole)
    whole = _mask_times(_downloads(client, "streamed"))
    assert streamed == whole
    assert streamed["results.csv"].count(b"\r\n") > 120  # every item made it into the file


def test_the_results_files_of_the_cli_have_the_bytes_of_the_result_read_whole(
    random_run, monkeypatch
):
    streamed = "".join(results_csv(random_run)), list(item_records(random_run))
    monkeypatch.setattr(item_results, "stream_rows", _read_whole)
    assert streamed == ("".join(results_csv(random_run)), list(item_records(random_run)))
    assert len(streamed[1]) == 120


def test_junit_reads_every_item_as_the_result_read_whole(random_run, monkeypatch):
    streamed = list(junit.run_items(random_run))
    monkeypatch.setattr(junit, "stream_rows", _read_whole)
    assert streamed == list(junit.run_items(random_run)) and len(streamed) == 120


@pytest.mark.parametrize("size", [1, 7, 500])
def test_a_stream_gives_every_row_in_order_whatever_its_chunk(random_run, size):
    query = Item.select(Item.id, Item.answer).where(Item.run == random_run).order_by(Item.id)
    assert list(stream_rows(query, size)) == _read_whole(query)


def test_nothing_is_read_before_the_first_row_is_asked_for(random_run):
    stream = stream_rows(Item.select(Item.id).where(Item.run == random_run))
    assert not database.in_transaction()
    assert next(stream)
    stream.close()


def _open_cursors():
    """The server-side cursors of this session (pg_cursors lists only the session's own)."""
    return database.execute_sql("SELECT is_holdable FROM pg_cursors").fetchall()


@pytest.mark.postgres
def test_on_postgresql_an_export_reads_through_a_server_side_cursor(app, random_run):
    if not database.is_postgres:
        pytest.skip("PostgreSQL only")
    records = item_records(random_run)
    next(records)
    # Held in the stream's transaction (not WITH HOLD, which spools the result at DECLARE).
    assert _open_cursors() == [(False,)]
    assert len(list(records)) == 119
    assert _open_cursors() == []
    assert not database.in_transaction()


@pytest.mark.postgres
def test_on_postgresql_the_detailed_csv_reads_through_a_server_side_cursor(
    app, random_run, monkeypatch
):
    if not database.is_postgres:
        pytest.skip("PostgreSQL only")
    monkeypatch.setattr(csvfiles, "CHUNK_ROWS", 1)  # a chunk a line: the stream stops mid-run
    chunks = csvfiles.csv_detailed(random_run)
    next(chunks), next(chunks)  # the header, then the first item's line
    assert _open_cursors() == [(False,)]
    fetched = database.execute_sql("SELECT 1").fetchall()  # the session still serves queries
    assert fetched == [(1,)] and len(list(chunks)) == 119


def test_a_download_left_early_leaves_no_transaction_nor_cursor_open(app, random_run):
    records = item_records(random_run)
    first = next(records)
    records.close()  # the client went away
    assert first["taskId"] and not database.in_transaction()
    if database.is_postgres:
        assert _open_cursors() == []


def test_a_stream_inside_a_transaction_leaves_that_transaction_open(app, random_run):
    with database.atomic():
        count = sum(1 for _ in item_records(random_run))
        assert database.in_transaction()
        assert Item.select().where(Item.run == random_run).count() == count == 120


def test_the_jsonl_download_holds_one_line_per_item(client, random_run):
    body = client.post("/api/runs/streamed/export", json={"format": "JSONL"}).get_data()
    assert [json.loads(line)["taskId"] for line in body.splitlines()] == [
        r["taskId"] for r in item_records(random_run)
    ]
