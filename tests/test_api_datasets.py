"""POST /api/tasks/import, GET /api/tasks/export and the Settings import/export page."""

import io
import json
from pathlib import Path

from bs4 import BeautifulSoup

from app.db.models import Collection
from app.db.models import Task
from app.web.datasets import bp
from tests.conftest import make_app

DATA = Path(__file__).parent / "data"
UPLOAD = {"X-Requested-With": "llmbench"}
CSV = "task_id,category,prompt_template\nt1,c,first\nt2,c,second\n"


def test_the_import_page_is_registered_with_the_app(app):
    assert app.blueprints["datasets"] is bp


def _upload(client, text, name="tasks.csv", **form):
    data = {"file": (io.BytesIO(text.encode()), name), **form}
    return client.post(
        "/api/tasks/import", data=data, headers=UPLOAD, content_type="multipart/form-data"
    )


def test_multipart_import_answers_201_with_counts(client):
    response = _upload(client, CSV, collection="mine")
    assert response.status_code == 201
    assert response.get_json() == {
        "created": 2,
        "updated": 0,
        "skipped": 0,
        "collection": "mine",
        "collections": ["mine"],
        "total": 2,
    }
    assert Collection.get(Collection.name == "mine").memberships.count() == 2


def test_json_body_import_with_format_and_duplicates_choice(client):
    _upload(client, CSV)
    changed = CSV.replace("first", "changed")
    response = client.post(
        "/api/tasks/import?onDuplicate=update", json={"content": changed, "format": "csv"}
    )
    assert response.status_code == 201
    assert response.get_json()["updated"] == 2
    assert Task.get(Task.task_id == "t1").question == "changed"


def test_a_bad_file_answers_400_listing_file_line_and_field(client):
    bad = 'task_id,category,prompt_template,vars_json\nt1,c,Hi {x},"{""y"": 1}"\nt2\n'
    response = _upload(client, bad, name="bad.csv")
    assert response.status_code == 400
    errors = response.get_json()["errors"]
    assert [(e["file"], e["line"], e["field"]) for e in errors] == [
        ("bad.csv", 2, "vars_json"),
        ("bad.csv", 3, None),
    ]
    assert Task.select().count() == 0


def test_duplicates_are_rejected_by_default(client):
    _upload(client, CSV)
    response = _upload(client, CSV)
    assert response.status_code == 400
    assert {e["field"] for e in response.get_json()["errors"]} == {"task_id"}


def test_a_multipart_upload_without_the_custom_header_is_refused(client):
    data = {"file": (io.BytesIO(CSV.encode()), "tasks.csv")}
    response = client.post("/api/tasks/import", data=data, content_type="multipart/form-data")
    assert response.status_code == 400
    assert Task.select().count() == 0


def test_an_upload_without_a_file_names_the_field(client):
    response = client.post(
        "/api/tasks/import", data={}, headers=UPLOAD, content_type="multipart/form-data"
    )
    assert response.get_json()["errors"][0]["field"] == "file"


CSV_2 = "task_id,category,prompt_template\nt3,c,third\n"


def _upload_many(client, url, files, follow_redirects=False, **form):
    data = {"file": [(io.BytesIO(text.encode()), name) for name, text in files], **form}
    return client.post(
        url,
        data=data,
        headers=UPLOAD,
        content_type="multipart/form-data",
        follow_redirects=follow_redirects,
    )


def test_several_files_in_repeated_file_fields_import_together(client):
    response = _upload_many(
        client, "/api/tasks/import", [("a.csv", CSV), ("b.csv", CSV_2)], collection="both"
    )
    assert response.status_code == 201
    assert response.get_json()["created"] == 3 and response.get_json()["total"] == 3
    assert Collection.get(Collection.name == "both").memberships.count() == 3


def test_a_task_id_in_two_files_is_a_duplicate_and_nothing_is_saved(client):
    again = "task_id,category,prompt_template\nt9,c,fine\nt2,c,again\n"
    response = _upload_many(client, "/api/tasks/import", [("a.csv", CSV), ("b.csv", again)])
    assert response.status_code == 400
    (error,) = response.get_json()["errors"]
    assert (error["file"], error["line"], error["field"]) == ("b.csv", 3, "task_id")
    assert "a.csv" in error["message"]
    assert Task.select().count() == 0


def test_one_bad_file_among_several_saves_nothing(client):
    bad = "task_id,category,prompt_template\nt3,c,\n"
    response = _upload_many(client, "/api/tasks/import", [("a.csv", CSV), ("bad.csv", bad)])
    assert response.status_code == 400
    assert {e["file"] for e in response.get_json()["errors"]} == {"bad.csv"}
    assert Task.select().count() == 0


def test_export_is_an_attachment_in_the_asked_format(client):
    _upload(client, CSV, collection="mine")
    response = client.get("/api/tasks/export?format=jsonl&collection=mine")
    assert response.status_code == 200
    assert response.headers["Content-Disposition"] == 'attachment; filename="tasks-mine.jsonl"'
    assert [json.loads(line)["id"] for line in response.text.splitlines()] == ["t1", "t2"]


def test_export_of_an_unknown_collection_is_404(client):
    assert client.get("/api/tasks/export?collection=nope").status_code == 404


def test_export_with_an_unknown_format_is_400(client):
    response = client.get("/api/tasks/export?format=xml")
    assert response.status_code == 400 and "yaml" in response.get_json()["error"]


# ---- the Settings page -------------------------------------------------------------------


def test_the_page_has_the_form_with_every_choice(client):
    soup = BeautifulSoup(client.get("/settings/import/").text, "html.parser")
    form = soup.find("form", enctype="multipart/form-data")
    assert form.find("input", {"name": "csrf_token"}) is not None
    assert form.find("input", {"type": "file", "name": "file"}).has_attr("multiple")
    assert [o["value"] for o in form.find("select", {"name": "format"}).find_all("option")] == [
        "",
        "yaml",
        "jsonl",
        "csv",
        "runner-jsonl",
        "json",
    ]
    assert [r["value"] for r in form.find_all("input", {"name": "onDuplicate"})] == [
        "reject",
        "skip",
        "update",
    ]
    assert soup.find("form", id="export") is not None


def test_a_good_upload_redirects_with_a_summary(client):
    data = {
        "file": (io.BytesIO(CSV.encode()), "tasks.csv"),
        "onDuplicate": "reject",
        "collection": "web",
    }
    response = client.post(
        "/settings/import/", data=data, content_type="multipart/form-data", follow_redirects=True
    )
    assert response.status_code == 200
    assert "Imported 2 tasks from tasks.csv into collection “web”: 2 created" in response.text


def test_several_uploaded_files_import_together_from_the_page(client):
    response = _upload_many(
        client, "/settings/import/", [("a.csv", CSV), ("b.csv", CSV_2)], follow_redirects=True
    )
    assert response.status_code == 200
    assert "Imported 3 tasks from a.csv, b.csv: 3 created" in response.text


def test_a_duplicate_across_uploaded_files_is_listed_and_nothing_saved(client):
    response = _upload_many(client, "/settings/import/", [("a.csv", CSV), ("b.csv", CSV)])
    assert response.status_code == 400
    soup = BeautifulSoup(response.text, "html.parser")
    rows = [
        [td.get_text(strip=True) for td in tr.find_all("td")]
        for tr in soup.select(".import-errors tbody tr")
    ]
    assert [r[:3] for r in rows] == [["b.csv", "2", "task_id"], ["b.csv", "3", "task_id"]]
    assert Task.select().count() == 0


def test_a_bad_upload_lists_each_problem_and_keeps_the_choices(client):
    text = (DATA / "seed001_tasks.yml").read_text().replace("sub_category", "subcat", 1)
    data = {"file": (io.BytesIO(text.encode()), "bank.yml"), "onDuplicate": "skip"}
    response = client.post("/settings/import/", data=data, content_type="multipart/form-data")
    assert response.status_code == 400
    soup = BeautifulSoup(response.text, "html.parser")
    cells = [td.get_text(strip=True) for td in soup.select(".import-errors tbody tr td")]
    assert cells == ["bank.yml", "4", "subcat", cells[3]] and "unknown key" in cells[3]
    assert soup.find("input", {"name": "onDuplicate", "value": "skip"}).has_attr("checked")


def test_the_export_form_leads_to_the_download(client):
    response = client.get("/settings/import/export?format=yaml&collection=x")
    assert response.status_code == 302
    assert response.headers["Location"].endswith("/api/tasks/export?format=yaml&collection=x")


def test_the_upload_form_needs_its_csrf_token(tmp_path):
    app = make_app(tmp_path, WTF_CSRF_ENABLED=True)
    data = {"file": (io.BytesIO(CSV.encode()), "tasks.csv")}
    response = app.test_client().post(
        "/settings/import/", data=data, content_type="multipart/form-data"
    )
    assert response.status_code == 400
