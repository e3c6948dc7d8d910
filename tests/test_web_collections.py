"""Collection pages: list with counts, create, rename, delete, add/remove tasks; defaults page."""

import pytest
from bs4 import BeautifulSoup

from app.catalog.collections import add_tasks_to_collection
from app.catalog.collections import collection_to_dict
from app.catalog.collections import create_collection
from app.catalog.tasks import create_task
from app.db.models import Collection
from app.db.models import CollectionTask
from app.db.models import Task

HX = {"HX-Request": "true"}


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.fixture
def tasks(app):
    for category, n in (("Math", 3), ("Logic", 2)):
        for i in range(n):
            create_task(
                {
                    "taskId": f"{category.lower()}_{i}",
                    "category": category,
                    "question": "q",
                    "excellent": "a",
                }
            )
    return {t.task_id: t.id for t in Task.select()}


def test_list_shows_task_counts(client, tasks):
    c = create_collection("quick")
    add_tasks_to_collection(c.id, ["math_0", "logic_1"])
    rows = soup(client.get("/settings/collections/")).select("table.collections tbody tr")
    assert [(r.select_one("a").get_text(), r.select_one(".num").get_text()) for r in rows] == [
        ("quick", "2")
    ]


def test_create_redirects_to_the_collection(client):
    response = client.post("/settings/collections/new", data={"name": "mine", "description": ""})
    c = Collection.get(Collection.name == "mine")
    assert response.status_code == 302 and response.location.endswith(f"/collections/{c.id}")


def test_create_without_a_name_is_400_marked(client):
    response = client.post("/settings/collections/new", data={"name": " "})
    assert response.status_code == 400
    assert soup(response).select_one("[name=name]")["aria-invalid"] == "true"


def test_create_with_a_taken_name_is_409(client):
    create_collection("mine")
    response = client.post("/settings/collections/new", data={"name": "mine"})
    assert response.status_code == 409 and Collection.select().count() == 1


def test_collection_page_lists_members_and_candidates(client, tasks):
    c = create_collection("c")
    add_tasks_to_collection(c.id, ["math_0"])
    page = soup(client.get(f"/settings/collections/{c.id}"))
    assert [code.get_text() for code in page.select("table.members code")] == ["math_0"]
    candidates = [i["value"] for i in page.select("#candidates input[name=taskIds]")]
    assert str(tasks["math_0"]) not in candidates and len(candidates) == 4


def test_candidates_filter_by_category_with_and_without_js(client, tasks):
    c = create_collection("c")
    page = soup(client.get(f"/settings/collections/{c.id}?category=Logic"))
    assert len(page.select("#candidates input[name=taskIds]")) == 2
    fragment = soup(
        client.get(f"/settings/collections/{c.id}/candidates?category=Math", headers=HX)
    ).find()
    assert fragment["id"] == "candidates" and len(fragment.select("input[name=taskIds]")) == 3


def test_add_ticked_tasks(client, tasks):
    c = create_collection("c")
    response = client.post(
        f"/settings/collections/{c.id}/tasks",
        data={"taskIds": [str(tasks["math_0"]), str(tasks["logic_0"])]},
    )
    assert response.status_code == 302
    assert collection_to_dict(c)["taskCount"] == 2


def test_adding_a_member_again_flashes_the_conflict(client, tasks):
    c = create_collection("c")
    add_tasks_to_collection(c.id, ["math_0"])
    response = client.post(
        f"/settings/collections/{c.id}/tasks",
        data={"taskIds": [str(tasks["math_0"])]},
        follow_redirects=True,
    )
    assert "math_0" in soup(response).select_one(".flash--error").get_text()
    assert CollectionTask.select().count() == 1


def test_adding_nothing_says_to_tick_tasks(client, tasks):
    c = create_collection("c")
    response = client.post(f"/settings/collections/{c.id}/tasks", follow_redirects=True)
    assert "Tick at least one" in soup(response).select_one(".flash--error").get_text()


def test_remove_a_member_with_htmx_and_without(client, tasks):
    c = create_collection("c")
    add_tasks_to_collection(c.id, ["math_0", "math_1"])
    url = f"/settings/collections/{c.id}/tasks/{{}}/remove"
    assert client.post(url.format(tasks["math_0"]), headers=HX).get_data() == b""
    assert client.post(url.format(tasks["math_1"])).status_code == 302
    assert CollectionTask.select().count() == 0 and Task.select().count() == 5


def test_rename(client):
    c = create_collection("old")
    response = client.post(
        f"/settings/collections/{c.id}/rename", data={"name": "new", "description": "d"}
    )
    assert response.status_code == 302 and Collection.get_by_id(c.id).name == "new"


def test_rename_to_a_taken_name_is_409_with_the_form_kept(client):
    c = create_collection("old")
    create_collection("taken")
    response = client.post(f"/settings/collections/{c.id}/rename", data={"name": "taken"})
    assert response.status_code == 409
    assert soup(response).select_one("[name=name]")["value"] == "taken"


def test_delete_keeps_the_tasks(client, tasks):
    c = create_collection("c")
    add_tasks_to_collection(c.id, ["math_0"])
    assert client.post(f"/settings/collections/{c.id}/delete").status_code == 302
    assert Collection.select().count() == 0 and Task.select().count() == 5


def test_delete_asks_for_confirmation(client):
    c = create_collection("c")
    form = soup(client.get(f"/settings/collections/{c.id}")).select_one(
        f"form[action='/settings/collections/{c.id}/delete']"
    )
    assert "Delete collection c" in form["data-confirm"]


def test_unknown_collection_is_404(client):
    assert client.get("/settings/collections/999").status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        "/settings/providers/",
        "/settings/tasks/",
        "/settings/collections/",
        "/settings/prices",
        "/settings/defaults",
    ],
)
def test_every_settings_page_renders_with_its_subnav_item_current(client, path):
    response = client.get(path)
    assert response.status_code == 200
    current = soup(response).select_one(".subnav a[aria-current=page]")
    assert current["href"] == path


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", f"/settings/collections/{2**70}"),
        ("post", f"/settings/collections/{2**70}/delete"),
    ],
)
def test_a_collection_id_too_big_for_sqlite_is_404(client, method, path):
    assert getattr(client, method)(path).status_code == 404


def test_adding_a_task_id_too_big_for_sqlite_is_a_flash_not_a_500(client, tasks):
    c = create_collection("quick")
    response = client.post(f"/settings/collections/{c.id}/tasks", data={"taskIds": [str(2**70)]})
    assert response.status_code == 302
    assert CollectionTask.select().count() == 0
