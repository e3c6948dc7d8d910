"""Provider pages: list, add/edit with header rows, delete, refresh models, test, prices."""

import re

import pytest
from bs4 import BeautifulSoup

from app.catalog.prices import set_price
from app.catalog.providers import create_provider
from app.catalog.providers import get_provider
from app.catalog.providers import header_rows
from app.catalog.providers import provider_config
from app.db.connection import database
from app.db.models import Price
from app.db.models import Provider
from tests.conftest import make_app
from tests.test_provider_store import SECRET
from tests.test_provider_store import closed_port_url
from tests.test_provider_store import provider_data

HX = {"HX-Request": "true"}


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def form_data(**overrides):
    data = {
        "name": "web-1",
        "type": "OPENAI",
        "baseUrl": "http://127.0.0.1:18080",
        "modelsEndpoint": "",
        "inferenceEndpoint": "",
        "timeoutSeconds": "60",
        "maxConcurrency": "2",
        "headers-0-id": "",
        "headers-0-key": "Authorization",
        "headers-0-value": SECRET,
        "headers-0-isSecret": "1",
        "headers-1-id": "",
        "headers-1-key": "",
        "headers-1-value": "",
    }
    data.update(overrides)
    return data


def test_settings_starts_at_providers(client):
    response = client.get("/settings/")
    assert response.status_code == 302 and response.location.endswith("/settings/providers/")


def test_empty_list_offers_to_add_one(client):
    page = soup(client.get("/settings/providers/"))
    assert page.select_one(".empty a[href='/settings/providers/new']")


def test_list_shows_each_provider_with_masked_headers(client):
    p = create_provider(provider_data())
    response = client.get("/settings/providers/")
    card = soup(response).select_one(f"#provider-{p.id}")
    text = card.get_text(" ")
    assert "p1" in text and "OPENAI" in text and "http://127.0.0.1:18080" in text
    assert "****5b4a" in text and "X-Team: bench" in text
    assert card.select_one(f"#models-{p.id}") and card.select_one(f"#provider-test-{p.id}")
    assert SECRET not in response.get_data(as_text=True)


def test_subnav_links_every_settings_page(client):
    links = [a["href"] for a in soup(client.get("/settings/providers/")).select(".subnav a")]
    assert links == [
        "/settings/providers/",
        "/settings/tasks/",
        "/settings/collections/",
        "/settings/prices",
        "/settings/composite",
        "/settings/import/",
        "/settings/defaults",
    ]


def test_new_form_has_empty_header_rows_and_a_csrf_field(client):
    page = soup(client.get("/settings/providers/new"))
    assert len(page.select("input[name$='-key']")) >= 3
    assert page.select_one("input[name=csrf_token]")


def test_create_redirects_with_a_flash(client):
    response = client.post("/settings/providers/new", data=form_data())
    assert response.status_code == 302
    p = Provider.get(Provider.name == "web-1")
    assert (p.max_concurrency, p.timeout_seconds, p.models_endpoint) == (2, 60.0, "/v1/models")
    assert provider_config(p).headers == {"Authorization": SECRET}
    page = client.get(response.location)
    assert "web-1 added" in soup(page).select_one(".flash--success").get_text()


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"name": ""}, "name"),
        ({"baseUrl": "ftp://x"}, "baseUrl"),
        ({"modelsEndpoint": "models"}, "modelsEndpoint"),
        ({"timeoutSeconds": "0"}, "timeoutSeconds"),
        ({"maxConcurrency": "x"}, "maxConcurrency"),
        ({"type": "NOPE"}, "type"),
    ],
)
def test_a_bad_field_rerenders_400_marked_with_values_kept(client, overrides, field):
    response = client.post("/settings/providers/new", data=form_data(**overrides))
    assert response.status_code == 400
    page = soup(response)
    control = page.select_one(f"[name={field}]")
    assert control["aria-invalid"] == "true"
    assert page.select_one(f"#{control['aria-describedby']}").get_text().strip()
    assert page.select_one("[name=name]")["value"] == form_data(**overrides)["name"]
    assert Provider.select().count() == 0


def test_a_bad_header_row_is_marked_in_its_row(client):
    response = client.post(
        "/settings/providers/new",
        data=form_data(**{"headers-1-key": "Bad Header", "headers-1-value": "x"}),
    )
    assert response.status_code == 400
    page = soup(response)
    assert page.select_one("[name=headers-1-key]")["aria-invalid"] == "true"
    assert page.select_one("[name=headers-1-key]")["value"] == "Bad Header"
    assert len(page.select("input[name$='-key']")) >= 5  # kept rows plus three empty ones


def test_a_duplicate_name_rerenders_409_at_the_name(client):
    create_provider(provider_data(name="web-1"))
    response = client.post("/settings/providers/new", data=form_data())
    assert response.status_code == 409
    assert soup(response).select_one("[name=name]")["aria-invalid"] == "true"


def test_edit_form_shows_secrets_masked_only(client):
    p = create_provider(provider_data())
    response = client.get(f"/settings/providers/{p.id}/edit")
    assert response.status_code == 200
    value = soup(response).select_one("[name=headers-0-value]")
    assert value["value"] == "" and value["type"] == "password"
    assert "****5b4a" in value["placeholder"] and "leave empty to keep" in value["placeholder"]
    assert SECRET not in response.get_data(as_text=True)


def test_edit_with_the_secret_left_empty_keeps_it(client):
    p = create_provider(provider_data())
    header_id = header_rows(p)[0]["id"]
    response = client.post(
        f"/settings/providers/{p.id}/edit",
        data=form_data(
            **{"name": "renamed", "headers-0-id": str(header_id), "headers-0-value": ""}
        ),
    )
    assert response.status_code == 302
    fresh = get_provider(p.id)
    assert fresh.name == "renamed"
    assert provider_config(fresh).headers == {"Authorization": SECRET}


def test_edit_with_a_bad_field_keeps_the_masked_placeholder(client):
    p = create_provider(provider_data())
    header_id = header_rows(p)[0]["id"]
    response = client.post(
        f"/settings/providers/{p.id}/edit",
        data=form_data(
            **{"baseUrl": "nope", "headers-0-id": str(header_id), "headers-0-value": ""}
        ),
    )
    assert response.status_code == 400
    assert "****5b4a" in soup(response).select_one("[name=headers-0-value]")["placeholder"]


def test_delete_with_a_form_redirects(client):
    p = create_provider(provider_data())
    response = client.post(f"/settings/providers/{p.id}/delete")
    assert response.status_code == 302 and Provider.select().count() == 0


def test_delete_with_htmx_returns_nothing_to_swap(client):
    p = create_provider(provider_data())
    response = client.post(f"/settings/providers/{p.id}/delete", headers=HX)
    assert response.status_code == 200 and response.get_data() == b""


def test_delete_button_asks_for_confirmation(client):
    p = create_provider(provider_data())
    form = soup(client.get("/settings/providers/")).select_one(
        f"form[action='/settings/providers/{p.id}/delete']"
    )
    assert "Delete provider p1" in form["data-confirm"]
    assert form.select_one("button")["hx-confirm"]


def test_refresh_models_fragment_lists_the_models(client, fake):
    fake.models = ["llama3", "qwen"]
    p = create_provider(provider_data(baseUrl=fake.url))
    response = client.get(f"/settings/providers/{p.id}/models?refresh=1", headers=HX)
    root = soup(response).find()
    assert root["id"] == f"models-{p.id}" and root["hx-target"] == "this"
    assert [c.get_text() for c in root.select(".models__list code")] == ["llama3", "qwen"]
    assert [o["value"] for o in root.select(f"#model-options-{p.id} option")] == ["llama3", "qwen"]


def test_refresh_models_on_a_closed_port_shows_an_error_box(client):
    p = create_provider(provider_data(baseUrl=closed_port_url()))
    response = client.get(f"/settings/providers/{p.id}/models?refresh=1", headers=HX)
    assert response.status_code == 200
    assert "connect" in soup(response).select_one(".flash--error").get_text().lower()


def test_provider_page_without_js_shows_models_or_the_error(client):
    p = create_provider(provider_data(baseUrl=closed_port_url()))
    response = client.get(f"/settings/providers/{p.id}")
    assert response.status_code == 200
    assert soup(response).select_one(f"#models-{p.id} .flash--error")


def test_test_inference_fragment_shows_answer_and_metrics(client, fake):
    fake.enqueue("Hello from the fake model, nice to meet you.")
    p = create_provider(provider_data(baseUrl=fake.url))
    response = client.post(
        f"/settings/providers/{p.id}/test/fragment",
        data={"model": "fake-model", "prompt": "Say hello"},
        headers=HX,
    )
    root = soup(response).find()
    assert root["id"] == f"provider-test-{p.id}"
    assert "Hello from the fake model" in root.select_one("blockquote").get_text()
    metrics = root.select_one(".metrics").get_text(" ")
    assert re.search(r"\d+ ms", metrics) and "Tokens/s" in metrics
    assert root.select_one("details.raw pre").get_text().strip().startswith("{")


def test_test_inference_on_a_closed_port_shows_an_error_box_not_500(client):
    p = create_provider(provider_data(baseUrl=closed_port_url()))
    response = client.post(
        f"/settings/providers/{p.id}/test/fragment", data={"model": "m", "prompt": "hi"}, headers=HX
    )
    assert response.status_code == 200
    assert "The test failed" in soup(response).select_one(".flash--error").get_text()


def test_test_inference_without_js_renders_the_provider_page(client, fake):
    p = create_provider(provider_data(baseUrl=fake.url))
    response = client.post(
        f"/settings/providers/{p.id}/test", data={"model": "fake-model", "prompt": "hi"}
    )
    assert response.status_code == 200
    assert soup(response).select_one(f"#provider-test-{p.id} blockquote")


def test_test_inference_without_a_model_is_400_with_the_field_marked(client):
    p = create_provider(provider_data())
    response = client.post(f"/settings/providers/{p.id}/test", data={"model": "", "prompt": "x"})
    assert response.status_code == 400
    assert soup(response).select_one("[name=model]")["aria-invalid"] == "true"


def test_unknown_provider_pages_are_404(client):
    assert client.get("/settings/providers/999/edit").status_code == 404
    assert client.post("/settings/providers/999/delete").status_code == 404


# -- prices -------------------------------------------------------------------------------


def test_prices_page_lists_and_saves_prices(client):
    assert client.get("/settings/prices").status_code == 200
    response = client.post(
        "/settings/prices",
        data={"providerName": "or", "model": "gpt", "inputPer1m": "0.5", "outputPer1m": "1.5"},
    )
    assert response.status_code == 302
    page = soup(client.get("/settings/prices"))
    assert page.select_one("table.prices input[name=inputPer1m]")["value"] == "0.5"


def test_prices_page_bad_input_is_400_marked(client):
    response = client.post(
        "/settings/prices", data={"providerName": "", "model": "m", "inputPer1m": "-1"}
    )
    assert response.status_code == 400
    page = soup(response)
    assert page.select_one("#f-providerName")["aria-invalid"] == "true"
    assert page.select_one("#f-inputPer1m")["aria-invalid"] == "true"
    assert Price.select().count() == 0


def test_prices_delete(client):
    price = set_price("or", "m", 1, 1)
    assert client.post(f"/settings/prices/{price.id}/delete").status_code == 302
    assert Price.select().count() == 0


# -- CSRF ---------------------------------------------------------------------------------


@pytest.fixture
def csrf_client(tmp_path):
    app = make_app(tmp_path, WTF_CSRF_ENABLED=True)
    yield app.test_client()
    if not database.is_closed():
        database.close()


@pytest.mark.parametrize(
    "path",
    [
        "/settings/providers/new",
        "/settings/tasks/new",
        "/settings/collections/new",
        "/settings/prices",
        "/settings/reset-defaults",
    ],
)
def test_a_post_without_the_csrf_token_is_rejected(csrf_client, path):
    response = csrf_client.post(path, data={"name": "x"})
    assert response.status_code == 400
    assert "form expired" in response.get_data(as_text=True)


def test_a_post_with_the_csrf_token_is_accepted(csrf_client):
    page = soup(csrf_client.get("/settings/providers/new"))
    token = page.select_one("input[name=csrf_token]")["value"]
    response = csrf_client.post("/settings/providers/new", data=form_data(csrf_token=token))
    assert response.status_code == 302


def test_edit_switching_the_type_swaps_the_default_endpoints(client):
    p = create_provider(provider_data(type="OLLAMA", headers=[]))
    assert (p.models_endpoint, p.inference_endpoint) == ("/api/tags", "/api/chat")
    # The edit form sends the stored endpoints back with the new type.
    response = client.post(
        f"/settings/providers/{p.id}/edit",
        data=form_data(
            name="p1", type="OPENAI", modelsEndpoint="/api/tags", inferenceEndpoint="/api/chat"
        ),
    )
    assert response.status_code == 302
    fresh = get_provider(p.id)
    assert (fresh.type, fresh.models_endpoint, fresh.inference_endpoint) == (
        "OPENAI",
        "/v1/models",
        "/v1/chat/completions",
    )


def test_edit_keeping_the_type_keeps_custom_endpoints(client):
    p = create_provider(provider_data(modelsEndpoint="/m", headers=[]))
    response = client.post(
        f"/settings/providers/{p.id}/edit",
        data=form_data(name="p1", modelsEndpoint="/m", inferenceEndpoint="/v1/chat/completions"),
    )
    assert response.status_code == 302
    assert get_provider(p.id).models_endpoint == "/m"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", f"/settings/providers/{2**70}/edit"),
        ("post", f"/settings/providers/{2**70}/delete"),
        ("post", f"/settings/prices/{2**70}/delete"),
    ],
)
def test_ids_too_big_for_sqlite_are_404(client, method, path):
    assert getattr(client, method)(path).status_code == 404
