"""The accounts page (issue 30, admins): list, add with a role and the password twice, change a
role, remove; each change in the audit log without the password; other roles are refused;
bad input names the field and changes nothing; the last admin stays."""

import pytest

from app.accounts.store import add_account
from app.accounts.store import authenticate
from app.db.models import Account
from app.db.models import AuditEntry
from tests.conftest import make_app

PASSWORD = "long enough password"


@pytest.fixture
def admin(app, client):
    """A client signed in as the admin "root" (beyond loopback: a login is needed)."""
    app.config["HOST"] = "0.0.0.0"
    add_account("root", "admin", PASSWORD)
    reply = client.post("/login", data={"name": "root", "password": PASSWORD})
    assert reply.status_code == 303
    return client


def roles():
    return {a.name: a.role for a in Account.select()}


def test_an_admin_sees_every_account_with_its_role(admin):
    add_account("ana", "rater", PASSWORD)
    page = admin.get("/accounts").text
    assert 'id="account-ana"' in page and 'id="account-root"' in page
    assert '<option value="rater" selected>rater</option>' in page


def test_an_admin_adds_an_account_with_a_role_and_it_can_sign_in(admin):
    reply = admin.post(
        "/accounts",
        data={"name": "bo", "role": "runner", "password": PASSWORD, "passwordAgain": PASSWORD},
    )
    assert reply.status_code == 302 and reply.headers["Location"].endswith("/accounts/bo")
    assert roles()["bo"] == "runner"
    assert authenticate("bo", PASSWORD) is not None
    assert "Account bo (runner) added." in admin.get(reply.headers["Location"]).text


def test_adding_is_recorded_with_the_field_names_never_the_password(admin):
    admin.post(
        "/accounts",
        data={"name": "bo", "role": "viewer", "password": PASSWORD, "passwordAgain": PASSWORD},
    )
    entry = AuditEntry.select().where(AuditEntry.action == "account.add").get()
    assert entry.actor.endswith("root") and entry.subject == "account bo"
    assert PASSWORD not in str(entry.details) and "password" in entry.details["fields"]


def test_two_different_passwords_are_refused_naming_the_field_and_nothing_is_added(admin):
    reply = admin.post(
        "/accounts",
        data={"name": "bo", "role": "viewer", "password": PASSWORD, "passwordAgain": "other one!"},
    )
    assert reply.status_code == 400
    assert 'id="err-passwordAgain"' in reply.text and "the two passwords differ" in reply.text
    assert PASSWORD not in reply.text  # a password is never sent back into the page
    assert "bo" not in roles()


def test_a_taken_name_is_409_naming_it(admin):
    add_account("ana", "rater", PASSWORD)
    reply = admin.post(
        "/accounts",
        data={"name": "ana", "role": "viewer", "password": PASSWORD, "passwordAgain": PASSWORD},
    )
    assert reply.status_code == 409 and "exists already" in reply.text
    assert roles()["ana"] == "rater"


def test_an_admin_changes_a_role_and_it_is_recorded(admin):
    add_account("ana", "viewer", PASSWORD)
    reply = admin.post("/accounts/ana/role", data={"role": "rater"})
    assert reply.status_code == 302
    assert roles()["ana"] == "rater"
    entry = AuditEntry.select().where(AuditEntry.action == "account.role").get()
    assert entry.subject == "account ana"


def test_the_last_admin_cannot_be_demoted_and_the_page_says_why(admin):
    reply = admin.post("/accounts/root/role", data={"role": "viewer"})
    assert reply.status_code == 409 and "last admin" in reply.text
    assert roles()["root"] == "admin"


def test_an_admin_removes_an_account_and_it_is_recorded(admin):
    add_account("ana", "rater", PASSWORD)
    assert admin.post("/accounts/ana/remove").status_code == 302
    assert "ana" not in roles()
    assert AuditEntry.select().where(AuditEntry.action == "account.remove").count() == 1


def test_a_runner_cannot_open_or_change_the_accounts(app, client):
    app.config["HOST"] = "0.0.0.0"
    add_account("run", "runner", PASSWORD)
    client.post("/login", data={"name": "run", "password": PASSWORD})
    assert client.get("/accounts").status_code == 403
    reply = client.post("/accounts/run/role", data={"role": "admin"})
    assert reply.status_code == 403 and roles()["run"] == "runner"


def test_the_add_form_needs_its_csrf_token(tmp_path):
    app = make_app(tmp_path, WTF_CSRF_ENABLED=True)
    client = app.test_client()
    reply = client.post(
        "/accounts",
        data={"name": "bo", "role": "admin", "password": PASSWORD, "passwordAgain": PASSWORD},
    )
    assert reply.status_code == 400
    assert "bo" not in roles()
