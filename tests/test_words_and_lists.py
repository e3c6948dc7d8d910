"""Words a user knows and lists instead of free text: the import formats by what they are, the
prices page's provider and model pickers, and "add all shown" after a collection search."""

import pytest
from bs4 import BeautifulSoup

from app.catalog.collections import add_tasks_to_collection
from app.catalog.collections import create_collection
from app.catalog.prices import set_price
from app.catalog.providers import create_provider
from app.catalog.tasks import create_task
from app.db.models import CollectionTask
from app.db.models import Price
from app.db.models import Task
from tests.test_provider_store import closed_port_url

HX = {"HX-Request": "true"}


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def test_the_import_page_names_formats_by_what_they_are(client):
    page = soup(client.get("/settings/import/"))
    labels = [o.get_text() for o in page.select("#f-format option")]
    text = " ".join(labels)
    for name in (
        "apocbench-style JSONL",
        "Ollama-benchmarker YAML",
        "prompt CSV with variables",
        "prompt JSONL with variables",
        "llmbench JSON",
    ):
        assert name in text
    assert "seed" not in page.select_one("main").get_text().lower()


def test_the_import_page_says_what_each_format_looks_like(client):
    page = soup(client.get("/settings/import/"))
    help_text = page.select_one("details.format-help").get_text()
    assert "expected_answer" in help_text and "vars_json" in help_text and "rubric" in help_text


def test_the_prices_page_picks_the_provider_from_a_list(client, fake):
    create_provider({"name": "fake", "type": "OPENAI", "baseUrl": fake.url})
    set_price("gone-provider", "m", 1, 1)
    page = soup(client.get("/settings/prices"))
    select = page.select_one("select#f-providerName")
    assert [o["value"] for o in select.select("option")] == ["", "fake", "gone-provider"]
    assert select["hx-get"] == "/settings/prices/models"


def test_choosing_a_provider_lists_its_servers_models(client, fake):
    fake.models = ["alpha-7b", "beta-3b"]
    create_provider({"name": "fake", "type": "OPENAI", "baseUrl": fake.url})
    fragment = soup(client.get("/settings/prices/models?providerName=fake", headers=HX)).find()
    assert fragment["id"] == "price-model"
    options = [o["value"] for o in fragment.select("select#f-model option")]
    assert options == ["", "alpha-7b", "beta-3b"]


def test_an_unreachable_provider_leaves_a_typed_model_and_says_why(client):
    create_provider({"name": "down", "type": "OLLAMA", "baseUrl": closed_port_url()})
    fragment = soup(client.get("/settings/prices/models?providerName=down", headers=HX)).find()
    assert fragment.select_one("input#f-model[type=text]")
    assert "Could not list down's models" in fragment.get_text()


def test_a_price_is_saved_from_the_picked_model(client, fake):
    fake.models = ["alpha-7b"]
    create_provider({"name": "fake", "type": "OPENAI", "baseUrl": fake.url})
    response = client.post(
        "/settings/prices",
        data={"providerName": "fake", "model": "alpha-7b", "inputPer1m": "1", "outputPer1m": "2"},
    )
    assert response.status_code == 302
    assert Price.get().model == "alpha-7b"


def test_a_model_not_listed_can_still_be_typed(client):
    response = client.post(
        "/settings/prices",
        data={"providerName": "or", "model": "", "modelTyped": "gpt-x", "outputPer1m": "2"},
    )
    assert response.status_code == 302
    assert (Price.get().provider_name, Price.get().model) == ("or", "gpt-x")


@pytest.fixture
def tasks(app):
    for i in range(30):
        create_task(
            {
                "taskId": f"{'math' if i % 3 else 'logic'}_{i:02d}",
                "category": "Math" if i % 3 else "Logic",
                "question": "q",
                "excellent": "a",
            }
        )


def test_a_search_offers_to_add_all_it_shows(client, tasks):
    c = create_collection("c")
    page = soup(client.get(f"/settings/collections/{c.id}?category=Logic"))
    button = page.select_one("#candidates button[formaction$='/tasks/all']")
    assert button.get_text() == "Add all 10 shown"


def test_add_all_shown_adds_every_match_on_every_page(client, tasks):
    c = create_collection("c")
    add_tasks_to_collection(c.id, [Task.get(Task.task_id == "math_01").id])
    response = client.post(
        f"/settings/collections/{c.id}/tasks/all", data={"q": "math", "category": ""}
    )
    assert response.status_code == 302
    added = CollectionTask.select().where(CollectionTask.collection == c.id).count()
    assert added == 20  # 19 more math tasks beside the one already in
    page = soup(client.get(f"/settings/collections/{c.id}"))
    assert "Added 19 tasks to c." in page.select_one(".flash--success").get_text()
