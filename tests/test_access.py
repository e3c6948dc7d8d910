"""Who may do what over HTTP (issue 30): a login once an account exists or beyond loopback,
each endpoint's role, tokens, a trusted proxy; on loopback with no account, nothing changes."""

import re

import pytest

from app.accounts.store import add_account
from app.accounts.store import set_password
from app.accounts.throttle import LoginThrottle
from app.accounts.tokens import create_token
from app.db.models import Account
from app.db.models import AuditEntry
from app.schedules.templates import create_template
from app.web.access import ENDPOINT_ROLES
from app.web.access import PUBLIC
from app.web.auth import THROTTLE
from tests.conftest import make_app
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.factories import add_item
from tests.factories import make_run

PASSWORD = "long enough password"
VARIABLE = re.compile(r"<(?:(\w+):)?(\w+)>")


@pytest.fixture
def public(app):
    """The app as `llmbench serve --host 0.0.0.0` runs it: beyond loopback."""
    app.config["HOST"] = "0.0.0.0"
    return app


def sign_in(client, name, role):
    add_account(name, role, PASSWORD)
    reply = client.post("/login", data={"name": name, "password": PASSWORD})
    assert reply.status_code == 303, reply.text
    return client


def every_route(app):
    for rule in app.url_map.iter_rules():
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            url = VARIABLE.sub(lambda m: "1" if m.group(1) == "int" else "x", rule.rule)
            yield rule.endpoint, method, url


def test_every_endpoint_has_a_role(app):
    missing = {rule.endpoint for rule in app.url_map.iter_rules()} - set(ENDPOINT_ROLES)
    assert not missing, f"give these endpoints a role in app/web/access.py: {sorted(missing)}"


def test_every_role_in_the_map_names_an_endpoint_that_exists(app):
    stale = set(ENDPOINT_ROLES) - {rule.endpoint for rule in app.url_map.iter_rules()}
    assert not stale


def test_anonymous_beyond_loopback_gets_401_or_the_login_page_on_every_route(public, client):
    for endpoint, method, url in every_route(public):
        if ENDPOINT_ROLES[endpoint] == PUBLIC:
            continue
        reply = client.open(url, method=method)
        if url.startswith("/api/"):
            assert reply.status_code == 401, (method, url, reply.status_code)
            assert "Sign in" in reply.json["error"]
        else:
            assert reply.status_code == 303, (method, url, reply.status_code)
            assert reply.headers["Location"].startswith("/login"), (method, url)


def test_a_page_without_a_login_goes_to_the_login_page_and_back_after(public, client):
    add_account("val", "viewer", PASSWORD)
    reply = client.get("/runs/?page=2")
    assert reply.headers["Location"] == "/login?next=/runs/?page%3D2"
    form = {"name": "val", "password": PASSWORD, "next": "/runs/?page=2"}
    assert client.post("/login", data=form).headers["Location"] == "/runs/?page=2"


def test_the_session_cookie_stays_on_this_site(public, client):
    sign_in(client, "val", "viewer")
    assert client.get_cookie("session").same_site == "Lax"


def test_anonymous_on_loopback_with_an_account_must_sign_in(app, client):
    add_account("alice", "viewer", PASSWORD)
    assert client.get("/api/runs").status_code == 401
    assert client.get("/runs/").status_code == 303


def test_on_loopback_with_no_account_nothing_changes(app, client):
    assert client.get("/runs/").status_code == 200
    assert client.get("/login").status_code == 302  # no login to give: the dashboard
    assert "Sign out" not in client.get("/").text


def test_a_wrong_password_is_refused_and_no_session_begins(public, client):
    add_account("alice", "viewer", PASSWORD)
    reply = client.post("/login", data={"name": "alice", "password": "not it at all"})
    assert reply.status_code == 401
    assert client.get("/api/runs").status_code == 401


def test_the_sixth_failed_sign_in_in_five_minutes_is_429_with_when_to_retry(
    public, client, monkeypatch
):
    now = [0.0]
    monkeypatch.setitem(public.extensions, THROTTLE, LoginThrottle(clock=lambda: now[0]))
    add_account("alice", "viewer", PASSWORD)
    for _ in range(5):
        client.post("/login", data={"name": "alice", "password": "wrong password"})
    reply = client.post("/login", data={"name": "alice", "password": PASSWORD})
    assert reply.status_code == 429
    assert reply.headers["Retry-After"] == "300"
    assert "try again in 5 minutes" in reply.text
    now[0] = 300.0
    assert client.post("/login", data={"name": "alice", "password": PASSWORD}).status_code == 303


def test_a_viewer_reads_but_cannot_rate(public, client):
    sign_in(client, "val", "viewer")
    assert client.get("/runs/").status_code == 200
    assert client.get("/api/runs").status_code == 200
    reply = client.put("/api/runs/run-1/items/1/rating", json={"rating": 4})
    assert reply.status_code == 403
    assert reply.json["needed"] == "rater"
    page = client.post("/evaluate/items/1", data={"rating": "4"})
    assert page.status_code == 403
    assert "needs the rater role" in page.text


def test_a_viewer_sees_no_start_run_button(public, client, fake):
    make_provider(fake)
    sign_in(client, "val", "viewer")
    page = client.get("/").text
    assert "val (viewer)" in page and "Sign out" in page
    assert "Start run" not in page and "needs the runner role" in page


def test_a_runner_sees_the_start_run_button_but_no_provider_edit(public, client, fake):
    provider = make_provider(fake)
    sign_in(client, "rita", "runner")
    assert "Start run" in client.get("/").text
    page = client.get("/settings/providers/").text
    assert f"/settings/providers/{provider.id}/edit" not in page
    assert "Add provider" not in page


def test_an_admin_sees_the_provider_edit_and_the_audit_link(public, client, fake):
    provider = make_provider(fake)
    sign_in(client, "root", "admin")
    page = client.get("/settings/providers/").text
    assert f"/settings/providers/{provider.id}/edit" in page
    assert 'href="/audit"' in page


def test_a_runner_cannot_open_or_change_a_providers_secrets(public, client, fake):
    provider = make_provider(fake)
    sign_in(client, "rita", "runner")
    assert client.get(f"/settings/providers/{provider.id}/edit").status_code == 403
    assert client.post(f"/settings/providers/{provider.id}/edit", data={}).status_code == 403
    reply = client.put(f"/api/providers/{provider.id}", json={"name": "x"})
    assert reply.status_code == 403 and reply.json["needed"] == "admin"


def test_a_runner_can_pause_a_run_but_not_delete_it(public, client):
    make_run("run-1")
    sign_in(client, "rita", "runner")
    assert client.post("/api/runs/run-1/pause").status_code != 403
    assert client.delete("/api/runs/run-1").status_code == 403


def test_a_runner_token_triggers_a_template(public, client, fake):
    provider = make_provider(fake)
    spec = {
        "judgeProviderId": provider.id,
        "judgeModel": "judge",
        "collectionIds": [make_tasks(2).id],
        "targets": [{"providerId": provider.id, "model": "m1"}],
    }
    template = create_template({"name": "nightly", "spec": spec})
    _, token = create_token("ci", "runner")
    reply = client.post(
        f"/api/templates/{template.id}/trigger",
        json={"triggeredBy": "ci"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert reply.status_code == 202, reply.json


def test_a_viewer_token_cannot_trigger_a_template(public, client):
    _, token = create_token("dash", "viewer")
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/runs", headers=headers).status_code == 200
    assert client.post("/api/templates/1/trigger", headers=headers).status_code == 403


def test_an_unknown_token_is_401(public, client):
    reply = client.get("/api/runs", headers={"Authorization": "Bearer llmb_nope"})
    assert reply.status_code == 401
    assert reply.headers["WWW-Authenticate"].startswith("Bearer")


def test_logout_ends_the_session(public, client):
    sign_in(client, "val", "viewer")
    assert client.post("/logout").status_code == 303
    assert client.get("/api/runs").status_code == 401


def test_logout_ends_a_copy_of_the_session_cookie_too(public, app):
    first, copy = app.test_client(), app.test_client()
    sign_in(first, "val", "viewer")
    cookie = first.get_cookie("session")
    copy.set_cookie("session", cookie.value)
    assert copy.get("/api/runs").status_code == 200
    first.post("/logout")
    assert copy.get("/api/runs").status_code == 401


def test_a_password_change_ends_other_sessions(public, app):
    other = app.test_client()
    sign_in(other, "val", "viewer")
    set_password("val", "a brand new password")
    assert other.get("/api/runs").status_code == 401


def test_a_trusted_proxys_header_names_the_account(public, client):
    public.config.update(AUTH_PROXY_HEADER="X-Forwarded-User", TRUSTED_PROXIES="10.0.0.0/8")
    add_account("pat", "rater", PASSWORD)
    reply = client.get(
        "/api/runs", headers={"X-Forwarded-User": "pat"}, environ_base={"REMOTE_ADDR": "10.1.2.3"}
    )
    assert reply.status_code == 200


def test_a_proxy_header_from_an_untrusted_address_is_ignored(public, client):
    public.config.update(AUTH_PROXY_HEADER="X-Forwarded-User", TRUSTED_PROXIES="10.0.0.0/8")
    add_account("pat", "admin", PASSWORD)
    reply = client.get(
        "/api/runs", headers={"X-Forwarded-User": "pat"}, environ_base={"REMOTE_ADDR": "192.0.2.7"}
    )
    assert reply.status_code == 401


def test_a_proxy_creates_an_unknown_name_as_viewer_when_told_to(public, client):
    public.config.update(
        AUTH_PROXY_HEADER="X-Forwarded-User", TRUSTED_PROXIES="10.0.0.1", AUTH_PROXY_CREATE="viewer"
    )
    headers = {"X-Forwarded-User": "newcomer"}
    remote = {"REMOTE_ADDR": "10.0.0.1"}
    assert client.get("/api/runs", headers=headers, environ_base=remote).status_code == 200
    assert Account.get(Account.name == "newcomer").role == "viewer"
    assert client.delete("/api/runs/x", headers=headers, environ_base=remote).status_code == 403


def test_the_login_form_keeps_its_csrf_check(tmp_path):
    app = make_app(tmp_path, WTF_CSRF_ENABLED=True, HOST="0.0.0.0")
    with app.app_context():
        add_account("alice", "viewer", PASSWORD)
    reply = app.test_client().post("/login", data={"name": "alice", "password": PASSWORD})
    assert reply.status_code == 400


def test_the_audit_page_and_export_are_for_admins(public, client):
    AuditEntry.create(actor="cli", action="run.stop", subject="run r1")
    sign_in(client, "rita", "runner")
    assert client.get("/audit").status_code == 403
    client.post("/logout")
    sign_in(client, "root", "admin")
    assert "run.stop" in client.get("/audit").text
    lines = client.get("/api/audit?format=jsonl").text.splitlines()
    assert '"action": "run.stop"' in lines[0]


def test_a_stop_is_recorded_with_who_stopped_it(public, client):
    make_run("run-1", status="PENDING")
    sign_in(client, "rita", "runner")
    assert client.post("/api/runs/run-1/stop").status_code < 400
    entry = AuditEntry.select().order_by(AuditEntry.id.desc()).first()
    assert (entry.actor, entry.action, entry.subject) == ("account:rita", "run.stop", "run run-1")


def test_a_provider_change_is_recorded_without_the_secrets_value(public, client, fake):
    provider = make_provider(fake)
    sign_in(client, "root", "admin")
    secret = "sk-never-in-the-log-1234"
    body = {"headers": [{"key": "Authorization", "value": secret, "isSecret": True}]}
    assert client.put(f"/api/providers/{provider.id}", json=body).status_code == 200
    entry = AuditEntry.get(AuditEntry.action == "provider.change")
    assert entry.subject == f"provider {provider.id}" and entry.details == {"fields": ["headers"]}
    exported = client.get("/api/audit?format=jsonl").text
    assert secret not in exported and "provider.change" in exported


def test_a_refused_request_is_not_recorded(public, client):
    make_run("run-1", status="PENDING")
    sign_in(client, "val", "viewer")
    client.post("/api/runs/run-1/stop")
    assert not AuditEntry.select().where(AuditEntry.action == "run.stop").exists()


def test_on_loopback_with_no_account_a_stop_is_recorded_as_local(app, client):
    make_run("run-1", status="PENDING")
    client.post("/api/runs/run-1/stop")
    entry = AuditEntry.get(AuditEntry.action == "run.stop")
    assert entry.actor == "local"


def test_an_htmx_request_without_a_login_is_sent_to_the_login_page(public, client):
    reply = client.get("/runs/", headers={"HX-Request": "true"})
    assert reply.status_code == 401
    assert reply.headers["HX-Redirect"].startswith("/login?next=")


def test_a_viewer_sees_the_prices_but_no_form_to_change_them(public, client):
    sign_in(client, "val", "viewer")
    page = client.get("/settings/prices").text
    assert "Prices" in page and "Save price" not in page


def test_the_audit_export_refuses_a_page_that_is_no_number_naming_it(app, client):
    for page in ("0", "x", "9" * 30):
        reply = client.get(f"/api/audit?page={page}")
        assert reply.status_code == 400 and reply.json["errors"][0]["field"] == "page"


def test_the_health_check_answers_without_a_login_and_tells_nothing_else(public, client):
    make_run("run-1", status="PENDING")
    assert client.get("/api/status").json == {"status": "ok"}
    sign_in(client, "val", "viewer")
    assert client.get("/api/status").json["activeRun"] == "run-1"


def _two_targets_one_task():
    run, targets = make_run("rv", targets=[("local", "m1"), ("local", "m2")])
    return run, [add_item(run, target, "t1", score=50.0) for target in targets], targets


def test_a_viewer_reads_a_card_with_no_rating_form(public, client):
    _run, (item, _other), _targets = _two_targets_one_task()
    sign_in(client, "val", "viewer")
    page = client.get(f"/evaluate?item={item.id}").text
    assert "rating them needs the rater role" in page
    assert 'id="rate-form"' not in page


def test_a_rater_gets_the_rating_form(public, client):
    _run, (item, _other), _targets = _two_targets_one_task()
    sign_in(client, "ray", "rater")
    page = client.get(f"/evaluate?item={item.id}").text
    assert 'id="rate-form"' in page and "needs the rater role" not in page


def test_a_viewer_sees_the_pair_but_no_vote_buttons(public, client):
    _run, _items, (left, right) = _two_targets_one_task()
    sign_in(client, "val", "viewer")
    page = client.get(f"/ab?runA=rv&targetA={left.id}&targetB={right.id}").text
    assert 'id="ab-task"' in page
    assert "voting needs the rater role" in page and 'id="vote-form"' not in page
