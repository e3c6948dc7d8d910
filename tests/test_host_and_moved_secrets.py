"""Host header and DNS rebinding: unknown Host values get 400; a base URL moved to another
server clears the stored secret values unless they are entered again."""

import pytest
from bs4 import BeautifulSoup

from app.catalog.providers import create_provider
from app.catalog.providers import provider_config
from app.catalog.providers import update_provider
from app.db.models import Provider
from app.web.hosts import allowed_hosts
from tests.conftest import make_app

SECRET = "sk-moving-0123456789abcdef"


def provider_body(**extra):
    body = {
        "name": "p",
        "type": "OPENAI",
        "baseUrl": "http://127.0.0.1:9",
        "headers": [{"key": "Authorization", "value": f"Bearer {SECRET}", "isSecret": True}],
    }
    body.update(extra)
    return body


def test_a_rebinding_page_with_a_matching_origin_is_refused(client):
    evil = {"Host": "evil.example:8080", "Origin": "http://evil.example:8080"}
    response = client.post("/api/providers", json=provider_body(), headers=evil)
    assert response.status_code == 400
    assert "does not answer to the host 'evil.example:8080'" in response.get_json()["error"]
    assert Provider.select().count() == 0
    page = client.get("/", headers={"Host": "evil.example"})
    assert page.status_code == 400 and "LLMBENCH_ALLOWED_HOSTS" in page.text


@pytest.mark.parametrize("host", ["localhost", "localhost:8080", "127.0.0.1:8080", "[::1]:8080"])
def test_loopback_names_are_answered(client, host):
    assert client.get("/api/status", headers={"Host": host}).status_code == 200


def test_the_allowed_hosts_setting_and_the_bound_address_are_answered(tmp_path):
    app = make_app(tmp_path, ALLOWED_HOSTS="bench.lan, 10.0.0.5", HOST="192.168.1.20")
    client = app.test_client()
    for host in ("bench.lan:8080", "10.0.0.5", "192.168.1.20:8080", "BENCH.LAN"):
        assert client.get("/api/status", headers={"Host": host}).status_code == 200, host
    assert client.get("/api/status", headers={"Host": "other.lan"}).status_code == 400


def test_every_address_names_no_host_and_a_star_allows_any():
    assert allowed_hosts({"HOST": "0.0.0.0"}) == ["localhost", "127.0.0.1", "::1"]
    assert allowed_hosts({"HOST": "127.0.0.1", "ALLOWED_HOSTS": "*"}) is None


def test_a_base_url_moved_to_another_host_clears_the_stored_secret(app, client):
    created = create_provider(provider_body())
    response = client.put(
        f"/api/providers/{created.id}", json={"baseUrl": "http://other.example:9"}
    )
    assert response.status_code == 200
    assert response.get_json()["secretsCleared"] == ["Authorization"]
    assert response.get_json()["headers"] == []
    assert provider_config(Provider.get_by_id(created.id)).headers == {}


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9/v1", "http://127.0.0.1:9", "HTTP://127.0.0.1:9/other/path"]
)
def test_the_same_server_keeps_the_secret(app, url):
    created = create_provider(provider_body())
    moved = update_provider(created.id, {"baseUrl": url}, strict=True)
    assert moved.secrets_cleared == []
    assert provider_config(moved).headers == {"Authorization": f"Bearer {SECRET}"}


@pytest.mark.parametrize("url", ["http://127.0.0.1:10", "https://127.0.0.1:9"])
def test_another_port_or_scheme_is_another_server(app, url):
    created = create_provider(provider_body())
    assert update_provider(created.id, {"baseUrl": url}, strict=True).secrets_cleared


def test_a_secret_entered_again_with_the_move_is_kept(app):
    created = create_provider(provider_body())
    moved = update_provider(
        created.id,
        {
            "baseUrl": "http://other.example",
            "headers": [{"key": "Authorization", "value": "Bearer new-key", "isSecret": True}],
        },
        strict=True,
    )
    assert moved.secrets_cleared == []
    assert provider_config(moved).headers == {"Authorization": "Bearer new-key"}


def test_the_secret_is_never_sent_to_the_new_server(app, client, fake):
    created = create_provider(provider_body())
    client.put(f"/api/providers/{created.id}", json={"baseUrl": fake.url})
    client.post(f"/api/providers/{created.id}/test-inference", json={"model": "m", "prompt": "hi"})
    assert fake.calls and all("Authorization" not in c["headers"] for c in fake.calls)


def test_the_form_says_so_and_the_save_tells_what_was_cleared(app, client):
    created = create_provider(provider_body())
    form = BeautifulSoup(client.get(f"/settings/providers/{created.id}/edit").text, "html.parser")
    assert "clears the stored secret values" in form.find(id="secrets-move-note").text
    saved = client.post(
        f"/settings/providers/{created.id}/edit",
        data={
            "name": "p",
            "type": "OPENAI",
            "baseUrl": "http://other.example",
            "timeoutSeconds": "5",
            "maxConcurrency": "1",
            "headers-0-key": "Authorization",
            "headers-0-value": "",
            "headers-0-isSecret": "1",
        },
        follow_redirects=True,
    )
    assert "the stored secret values of Authorization were cleared" in saved.text
