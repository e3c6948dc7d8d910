"""Inputs that once answered 500 now answer 400 naming the field (issue 26)."""

import io
import json

import pytest

from app import jsontext
from app.ids import digits_number
from app.scoring.replies import JudgeOutputError
from app.scoring.rubric import parse_judgement
from tests.factories import add_item
from tests.factories import make_run

HUGE = "9" * 5000
DEEP_LIST = "[" * 5000
DEEP_OBJECT = '{"a":' * 3000


def _get(path):
    return lambda client: client.get(path)


def _post_json(path, body):
    return lambda client: client.post(path, json=body)


def _post_raw(path, text, content_type="application/json"):
    return lambda client: client.post(path, data=text, content_type=content_type)


def _post_form(path, form):
    return lambda client: client.post(path, data=form)


def _upload(path, text, filename, **form):
    def send(client):
        data = {"file": (io.BytesIO(text.encode()), filename), **form}
        return client.post(path, data=data, content_type="multipart/form-data")

    return send


TASK_FORM = {"taskId": "t1", "category": "c", "question": "q?", "difficulty": "easy"}

# (id, request, the field the 400 names or None when any 4xx will do)
CASES = [
    ("compare chart without parameters", _get("/compare/chart.svg"), None),
    ("trends page huge collection", _get("/trends?collection=99999999999999999999"), None),
    (
        "api trends huge collection",
        _get("/api/trends?collection=99999999999999999999"),
        "collection",
    ),
    (
        "ratings import format 5",
        _post_json("/api/ratings/import", {"content": "[]", "format": 5}),
        "format",
    ),
    (
        "votes import format 5",
        _post_json("/api/pairwise/votes/import", {"content": "[]", "format": 5}),
        "format",
    ),
    (
        "ratings import huge integer",
        _post_raw("/api/ratings/import", f'[{{"score": {HUGE}}}]'),
        None,
    ),
    (
        "votes import huge integer",
        _post_raw("/api/pairwise/votes/import", f'[{{"x": {HUGE}}}]'),
        None,
    ),
    (
        "pairwise judge runA list",
        _post_json("/api/pairwise/judge", {"runA": [1], "targetA": 1, "targetB": 2}),
        "runA",
    ),
    (
        "pairwise judge runA huge int",
        _post_json("/api/pairwise/judge", {"runA": 10**30, "targetA": 1, "targetB": 2}),
        "runA",
    ),
    (
        "task form deep vars",
        _post_form("/settings/tasks/new", {**TASK_FORM, "vars": DEEP_LIST}),
        None,
    ),
    (
        "task form deep rubric",
        _post_form("/settings/tasks/new", {**TASK_FORM, "rubric": DEEP_LIST}),
        None,
    ),
    ("template form deep spec", _post_form("/templates/", {"name": "x", "spec": DEEP_LIST}), None),
    ("task upload deep object", _upload("/settings/import/", DEEP_OBJECT, "tasks.json"), None),
    ("ratings upload deep object", _upload("/labels/ratings/import", DEEP_OBJECT, "r.json"), None),
    (
        "template webhook bad host",
        _post_json("/api/templates", {"name": "x", "spec": {}, "webhookUrl": "http://[::1"}),
        "webhookUrl",
    ),
    (
        "next bad host",
        _post_form("/runs/fuzz-run/results/retry-answers", {"next": "http://[::1"}),
        None,
    ),
    (
        "api origin bad host",
        lambda client: client.post("/api/runs", json={}, headers={"Origin": "http://[::1"}),
        None,
    ),
]


@pytest.mark.parametrize(("send", "field"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_an_input_that_answered_500_answers_4xx(app, client, send, field):
    make_run("fuzz-run")
    response = send(client)
    assert 400 <= response.status_code < 500 or response.status_code in (302, 303), (
        response.status_code,
        response.get_data(as_text=True)[-2000:],
    )
    if field is not None:
        assert field in [e.get("field") for e in response.get_json().get("errors", [])]


# ---- the shared JSON reader: jsontext.loads ---------------------------------------------------


def test_json_nested_past_the_limit_is_refused_at_its_bracket():
    text = "\n" + "[" * 5000 + "]" * 5000
    with pytest.raises(json.JSONDecodeError) as caught:
        jsontext.loads(text)
    assert "nested too deeply" in caught.value.msg
    assert (caught.value.lineno, caught.value.colno) == (2, jsontext.MAX_DEPTH + 1)


def test_json_nested_to_the_limit_is_read():
    depth = jsontext.MAX_DEPTH
    assert jsontext.loads("[" * depth + "]" * depth) is not None


def test_an_integer_past_pythons_digit_limit_is_refused_at_the_number():
    with pytest.raises(json.JSONDecodeError) as caught:
        jsontext.loads('{"n": ' + HUGE + "}")
    assert "digits" in caught.value.msg and caught.value.colno == 7


def test_a_judge_reply_nested_too_deeply_is_unusable_output_not_a_crash():
    with pytest.raises(JudgeOutputError):
        parse_judgement('{"score": ' + "[" * 5000, item=None)


def test_an_import_line_with_a_too_long_integer_names_its_line(client):
    content = '{"id": "a", "category": "c", "prompt": "q"}\n{"id": "b", "n": ' + HUGE + "}"
    response = client.post("/api/tasks/import", json={"content": content, "format": "jsonl"})
    assert response.status_code == 400
    assert any(e.get("line") == 2 for e in response.get_json()["errors"])


# ---- digits str.isdigit() takes and int() or SQLite does not ------------------------------------

SUPERSCRIPT_TWO = "\u00b2"  # a digit to str.isdigit(), not to int()

DIGIT_CASES = [
    ("dashboard refresh huge", lambda c, item: c.get(f"/?refresh={HUGE}")),
    (
        "judge models provider id past sqlite",
        lambda c, item: c.get("/new-run/judge-models?judgeProviderId=99999999999999999999"),
    ),
    (
        "collection task id superscript",
        lambda c, item: c.post(
            "/api/collections", json={"name": "c", "taskIds": [SUPERSCRIPT_TWO]}
        ),
    ),
    (
        "rating huge",
        lambda c, item: c.put(f"/api/runs/fuzz-run/items/{item}/rating", json={"rating": HUGE}),
    ),
    ("log since huge", lambda c, item: c.get(f"/api/runs/fuzz-run/logs?since={HUGE}")),
    (
        "results model superscript",
        lambda c, item: c.get(f"/runs/fuzz-run/results/table?model={SUPERSCRIPT_TWO}"),
    ),
    (
        "provider form header index huge",
        lambda c, item: c.post(
            "/settings/providers/new", data={"name": "p", f"headers-{HUGE}-key": "X-A"}
        ),
    ),
]


@pytest.mark.parametrize("send", [c[1] for c in DIGIT_CASES], ids=[c[0] for c in DIGIT_CASES])
def test_digits_that_int_or_sqlite_refuse_are_not_a_500(app, client, send):
    run, (target,) = make_run("fuzz-run")
    item = add_item(run, target, "t1", score=50.0)
    response = send(client, item.id)
    assert response.status_code < 500


def test_digits_number_reads_only_ascii_digits_sqlite_can_hold():
    assert digits_number(" 42 ") == 42
    assert digits_number(SUPERSCRIPT_TWO) is None
    assert digits_number(HUGE) is None
    assert digits_number(str(2**63)) is None
    assert digits_number("-1") is None
