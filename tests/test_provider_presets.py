"""The provider form for a new user: presets, the default timeout, a base URL ending in /v1,
and a test inference that says when the model typed is not in the server's list."""

import pytest
from bs4 import BeautifulSoup

from app.catalog.defaults import DEFAULT_PROVIDERS
from app.catalog.provider_trial import run_test_inference
from app.catalog.providers import create_provider
from app.db.models import Provider
from tests.test_provider_store import provider_data

HX = {"HX-Request": "true"}
PRESETS = {
    "ollama": ("OLLAMA", "http://localhost:11434", "/api/tags", "/api/chat"),
    "llamacpp": ("OPENAI", "http://localhost:8080", "/v1/models", "/v1/chat/completions"),
    "vllm": ("OPENAI", "http://localhost:8000", "/v1/models", "/v1/chat/completions"),
    "lmstudio": ("OPENAI", "http://localhost:1234", "/v1/models", "/v1/chat/completions"),
    "openai": ("OPENAI", "https://api.openai.com", "/v1/models", "/v1/chat/completions"),
    "openrouter": ("OPENAI", "https://openrouter.ai/api", "/v1/models", "/v1/chat/completions"),
}


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def value(page, name):
    control = page.select_one(f"[name={name}]")
    if control.name == "select":
        return control.select_one("option[selected]")["value"]
    return control.get("value")


def test_the_form_offers_every_preset(client):
    page = soup(client.get("/settings/providers/new"))
    links = {a["data-preset"]: a for a in page.select(".provider-presets a[data-preset]")}
    assert set(links) == set(PRESETS)
    assert links["vllm"]["href"].endswith("/settings/providers/new?preset=vllm")


@pytest.mark.parametrize("key", sorted(PRESETS))
def test_a_preset_fills_type_base_url_and_endpoints(client, key):
    page = soup(client.get(f"/settings/providers/new?preset={key}"))
    filled = tuple(
        value(page, n) for n in ("type", "baseUrl", "modelsEndpoint", "inferenceEndpoint")
    )
    assert filled == PRESETS[key]


def test_a_cloud_preset_offers_a_secret_authorization_header(client):
    page = soup(client.get("/settings/providers/new?preset=openrouter"))
    assert value(page, "headers-0-key") == "Authorization"
    assert page.select_one("[name=headers-0-isSecret]").has_attr("checked")


def test_a_new_provider_gets_the_built_in_providers_timeout(client):
    page = soup(client.get("/settings/providers/new"))
    built_in = {p["timeoutSeconds"] for p in DEFAULT_PROVIDERS}
    assert {float(value(page, "timeoutSeconds"))} == built_in


def test_a_provider_added_through_the_api_without_a_timeout_gets_the_default(client):
    response = client.post(
        "/api/providers", json={"name": "x", "type": "OPENAI", "baseUrl": "http://h:8000"}
    )
    assert response.get_json()["timeoutSeconds"] == DEFAULT_PROVIDERS[0]["timeoutSeconds"]


def test_switching_to_openai_with_ollamas_default_endpoints_saves_openais(client):
    response = client.post(
        "/settings/providers/new",
        data={
            "name": "switched",
            "type": "OPENAI",
            "baseUrl": "http://localhost:8000",
            "modelsEndpoint": "/api/tags",
            "inferenceEndpoint": "/api/chat",
            "timeoutSeconds": "300",
            "maxConcurrency": "1",
        },
    )
    assert response.status_code == 302
    saved = Provider.get(Provider.name == "switched")
    assert (saved.models_endpoint, saved.inference_endpoint) == PRESETS["vllm"][2:]


def test_a_base_url_ending_in_v1_is_saved_without_it_and_the_form_says_so(client):
    response = client.post(
        "/settings/providers/new",
        data={
            "name": "vllm",
            "type": "OPENAI",
            "baseUrl": "http://localhost:8000/v1/",
            "timeoutSeconds": "300",
            "maxConcurrency": "1",
        },
        follow_redirects=True,
    )
    assert Provider.get(Provider.name == "vllm").base_url == "http://localhost:8000"
    note = soup(response).select_one(".flash--info").get_text()
    assert "ended in /v1" in note and "http://localhost:8000/v1/models" in note


def test_a_base_url_ending_in_v1_with_endpoints_without_it_is_kept(client):
    response = client.post(
        "/api/providers",
        json={
            "name": "custom",
            "type": "OPENAI",
            "baseUrl": "http://gw.local/v1",
            "modelsEndpoint": "/models",
            "inferenceEndpoint": "/chat/completions",
        },
    )
    assert response.get_json()["baseUrl"] == "http://gw.local/v1"


def test_the_api_takes_a_doubled_v1_off_the_base_url(client):
    created = client.post(
        "/api/providers", json={"name": "o", "type": "OLLAMA", "baseUrl": "http://h:11434/v1"}
    ).get_json()
    assert created["baseUrl"] == "http://h:11434"
    assert "ended in /v1" in created["baseUrlNote"]


def test_test_inference_says_when_the_model_is_not_in_the_servers_list(app, fake):
    fake.models = ["llama3.2:3b", "qwen2.5:7b"]
    fake.enqueue("hello")
    p = create_provider(provider_data(baseUrl=fake.url))
    result = run_test_inference(p.id, "llama3.2", "hi")
    assert "llama3.2 is not in p1's model list" in result["model_warning"]
    assert "did you mean llama3.2:3b" in result["model_warning"]


def test_test_inference_of_a_listed_model_has_no_warning(app, fake):
    fake.models = ["llama3.2:3b"]
    fake.enqueue("hello")
    p = create_provider(provider_data(baseUrl=fake.url))
    assert run_test_inference(p.id, "llama3.2:3b", "hi")["model_warning"] is None


def test_the_test_result_shows_the_warning_and_the_model_asked_for(client, fake):
    fake.models = ["alpha"]
    fake.enqueue("hello")
    p = create_provider(provider_data(baseUrl=fake.url))
    response = client.post(
        f"/settings/providers/{p.id}/test/fragment",
        data={"model": "beta", "prompt": "hi"},
        headers=HX,
    )
    page = soup(response)
    assert "beta is not in p1's model list" in page.select_one(".flash--warn").get_text()


def test_a_preset_on_the_edit_form_keeps_the_name_and_headers(client):
    p = create_provider(provider_data(name="mine"))
    page = soup(client.get(f"/settings/providers/{p.id}/edit?preset=lmstudio"))
    assert value(page, "name") == "mine" and value(page, "baseUrl") == "http://localhost:1234"
    assert value(page, "headers-0-key") == "Authorization"


def test_an_ollama_name_without_a_tag_matches_its_latest(app, fake):
    fake.models = ["llama3.2:latest"]
    fake.enqueue("hello")
    p = create_provider(provider_data(type="OLLAMA", baseUrl=fake.url))
    assert run_test_inference(p.id, "llama3.2", "hi")["model_warning"] is None
