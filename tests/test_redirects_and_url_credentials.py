"""A provider's secrets stay on its server: redirects elsewhere are refused (never followed with
its headers), and no endpoint carries a credential (two fake servers over real HTTP)."""

import pytest

from app.catalog.providers import create_provider
from app.db.models import COMPLETED
from app.db.models import Item
from app.db.models import Provider
from app.db.models import ProviderHeader
from app.db.models import RunLog
from app.providers.interface import ProviderConfig
from app.providers.interface import ProviderError
from app.providers.ollama import OllamaAdapter
from app.providers.openai import OpenAIAdapter
from tests.engine_helpers import FakeClock
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run
from tests.fakeserver import FakeServer

SECRET = "sk-zq-0123456789abcdef"
HI = [{"role": "user", "content": "hi"}]
ENDPOINTS = {
    "OPENAI": ("/v1/models", "/v1/chat/completions"),
    "OLLAMA": ("/api/tags", "/api/chat"),
}


@pytest.fixture
def elsewhere():
    """A second model server: where a redirect points."""
    with FakeServer() as server:
        yield server


def adapter(fake, kind="OPENAI", header="Authorization", base_url=None):
    cls = {"OPENAI": OpenAIAdapter, "OLLAMA": OllamaAdapter}[kind]
    value = f"Bearer {SECRET}" if header == "Authorization" else SECRET
    config = ProviderConfig(
        "t", kind, base_url or fake.url, *ENDPOINTS[kind], headers={header: value}, timeout=5.0
    )
    return cls(config)


def saw_secret(server):
    return any(SECRET in str(call["headers"]) for call in server.calls)


@pytest.mark.parametrize("header", ["Authorization", "X-Api-Key"])
@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_to_another_server_is_refused_and_it_never_sees_the_secret(
    fake, elsewhere, status, header
):
    fake.redirect(status, elsewhere.url)
    client = adapter(fake, header=header)
    with pytest.raises(ProviderError) as info:
        client.chat("m", HI)
    client.close()
    assert info.value.kind == "client" and not info.value.transient
    assert elsewhere.calls == [] and not saw_secret(elsewhere)
    assert SECRET not in info.value.message


def test_a_refused_redirect_names_where_it_pointed_and_the_base_url_to_set(fake, elsewhere):
    fake.redirect(307, elsewhere.url + "/proxy")
    client = adapter(fake)
    with pytest.raises(ProviderError) as info:
        client.chat("m", HI)
    client.close()
    message = info.value.message
    assert f"answered 307 Temporary Redirect, a redirect to {elsewhere.url}/proxy" in message
    assert f"set the provider's base URL to {elsewhere.url}/proxy " in message


def test_a_refused_redirects_credentials_are_masked_in_the_message(fake, elsewhere):
    target = elsewhere.url + "/v1/chat/completions?token=tok-leaked-123"
    fake.redirect(302, target, prefix="/v1/chat/completions")
    client = adapter(fake)
    with pytest.raises(ProviderError) as info:
        client.chat("m", HI)
    client.close()
    assert "tok-leaked-123" not in info.value.message
    assert "/v1/chat/completions?token=****" in info.value.message


CALLS = {
    "openai models": ("OPENAI", lambda a: a.list_models()),
    "openai stream": ("OPENAI", lambda a: a.chat("m", HI)),
    "openai unstreamed": ("OPENAI", lambda a: a.chat("m", HI, stream=False)),
    "ollama models": ("OLLAMA", lambda a: a.list_models()),
    "ollama stream": ("OLLAMA", lambda a: a.chat("m", HI)),
    "ollama warm-up": ("OLLAMA", lambda a: a.chat("m", HI, stream=False, keep_alive="5m")),
    "ollama loaded": ("OLLAMA", lambda a: a.loaded_models()),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_no_adapter_call_follows_a_redirect_to_another_server(fake, elsewhere, call):
    kind, send = CALLS[call]
    fake.redirect(307, elsewhere.url)
    client = adapter(fake, kind, header="X-Api-Key")
    with pytest.raises(ProviderError, match="on another server"):
        send(client)
    client.close()
    assert elsewhere.calls == []


def test_an_ollama_unload_does_not_follow_a_redirect_to_another_server(fake, elsewhere):
    fake.redirect(308, elsewhere.url)
    client = adapter(fake, "OLLAMA", header="X-Api-Key")
    assert "on another server" in client.unload("m")
    client.close()
    assert elsewhere.calls == []


def test_test_inference_does_not_follow_a_redirect_to_another_server(client, fake, elsewhere):
    provider = create_provider(
        {
            "name": "p",
            "type": "OPENAI",
            "baseUrl": fake.url,
            "headers": [{"key": "X-Api-Key", "value": SECRET, "isSecret": True}],
        }
    )
    fake.redirect(301, elsewhere.url)
    result = client.post(
        f"/api/providers/{provider.id}/test-inference", json={"model": "m", "prompt": "hi"}
    ).get_json()
    assert not result["success"] and "on another server" in result["error"]
    assert elsewhere.calls == []


@pytest.mark.parametrize("status", [307, 308])
def test_a_redirect_on_the_same_server_is_followed_with_the_headers_and_body(fake, status):
    fake.redirect(status, fake.url + "/new", prefix="/old")
    fake.enqueue("moved answer")
    client = adapter(fake, header="X-Api-Key", base_url=fake.url + "/old")
    assert client.chat("m", HI).text == "moved answer"
    client.close()
    answered = fake.chat_calls()[-1]
    assert answered["path"] == "/new/v1/chat/completions"
    assert answered["headers"]["X-Api-Key"] == SECRET and answered["body"]["messages"] == HI


def test_redirects_that_go_round_in_circles_stop_with_an_error(fake):
    fake.redirect(307, fake.url + "/v1", prefix="/v1")
    client = adapter(fake)
    with pytest.raises(ProviderError, match="redirected more than 5 times"):
        client.chat("m", HI)
    client.close()
    assert len(fake.calls) == 6


def provider_body(**extra):
    body = {"name": "p", "type": "OPENAI", "baseUrl": "http://127.0.0.1:9"}
    body.update(extra)
    return body


@pytest.mark.parametrize(
    ("field", "endpoint"),
    [
        ("modelsEndpoint", "/v1/models?key=sk-abc123"),
        ("modelsEndpoint", "/v1/models?api_key=sk-abc123"),
        ("inferenceEndpoint", "/v1/chat/completions?token=abc"),
        ("inferenceEndpoint", "/v1/chat/completions?x=1&access_token=abc"),
        ("modelsEndpoint", "/v1/models?password=hunter2"),
        ("modelsEndpoint", "/v1/models?X-Api-Key=abc"),
        ("inferenceEndpoint", "//user:pw@other.example/v1/chat/completions"),
        ("inferenceEndpoint", "/proxy/user:pw@/v1/chat/completions"),
    ],
)
def test_an_endpoint_carrying_a_credential_is_refused_naming_the_field(client, field, endpoint):
    response = client.post("/api/providers", json=provider_body(**{field: endpoint}))
    assert response.status_code == 400
    errors = response.get_json()["errors"]
    assert [e["field"] for e in errors] == [field]
    assert "no credentials in the endpoint" in errors[0]["message"]
    assert "secret header" in errors[0]["message"]
    assert Provider.select().count() == 0


def test_an_endpoint_with_an_ordinary_query_string_is_accepted(client):
    body = provider_body(modelsEndpoint="/v1/models?monkey=1&api-version=2024-02-01")
    assert client.post("/api/providers", json=body).status_code == 201


def test_updating_an_endpoint_to_carry_a_key_is_refused_and_changes_nothing(client):
    created = client.post("/api/providers", json=provider_body()).get_json()
    response = client.put(
        f"/api/providers/{created['id']}", json={"modelsEndpoint": "/v1/models?key=sk-abc"}
    )
    assert response.status_code == 400
    assert response.get_json()["errors"][0]["field"] == "modelsEndpoint"
    assert Provider.get_by_id(created["id"]).models_endpoint == "/v1/models"


def test_the_form_refuses_an_endpoint_carrying_a_key_at_that_field(client):
    response = client.post(
        "/settings/providers/new",
        data={
            "name": "web-1",
            "type": "OPENAI",
            "baseUrl": "http://127.0.0.1:18080",
            "modelsEndpoint": "/v1/models?key=sk-abc123",
            "inferenceEndpoint": "",
            "timeoutSeconds": "60",
            "maxConcurrency": "1",
        },
    )
    assert response.status_code == 400
    text = response.get_data(as_text=True)
    assert 'name="modelsEndpoint"' in text and "no credentials in the endpoint" in text
    assert Provider.select().count() == 0


def test_a_run_on_a_server_that_redirects_elsewhere_pauses_saying_so(app, fake, elsewhere):
    provider = make_provider(fake)
    ProviderHeader.create(provider=provider.id, key="X-Team", value=SECRET, is_secret=False)
    run = start_run(provider, [(provider, "m1")], make_tasks(1))
    fake.redirect(307, elsewhere.url)
    drive(dict(app.config), FakeClock())
    said = RunLog.get((RunLog.run == run) & (RunLog.event == "judge_failed")).message
    assert "on another server" in said and f"base URL to {elsewhere.url} " in said
    assert Item.get().status != COMPLETED and elsewhere.calls == []


LEGACY_KEY = "sk-legacy-4242424242"


def legacy_provider():
    """A row saved before endpoints were checked, with a key in its models endpoint."""
    return Provider.create(
        name="old",
        type="OPENAI",
        base_url="http://127.0.0.1:9",
        models_endpoint=f"/v1/models?key={LEGACY_KEY}&x=1",
        inference_endpoint="/v1/chat/completions",
    )


def test_a_stored_endpoints_key_is_masked_in_the_api(client):
    provider = legacy_provider()
    response = client.get(f"/api/providers/{provider.id}")
    assert response.get_json()["modelsEndpoint"] == "/v1/models?key=****&x=1"
    assert LEGACY_KEY not in client.get("/api/providers").get_data(as_text=True)


@pytest.mark.parametrize(
    "page", ["/settings/providers/", "/settings/providers/{id}", "/settings/providers/{id}/edit"]
)
def test_a_stored_endpoints_key_is_masked_on_the_pages(client, page):
    provider = legacy_provider()
    text = client.get(page.format(id=provider.id)).get_data(as_text=True)
    assert "/v1/models?key=****" in text.replace("&amp;", "&") and LEGACY_KEY not in text
