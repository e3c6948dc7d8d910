"""Accounts as plain functions: password hashes, roles, tokens, the login throttle, the audit
log and when a server needs a login (issue 30)."""

import logging

import pytest

from app.accounts import access
from app.accounts import audit
from app.accounts.passwords import hash_password
from app.accounts.passwords import verify_password
from app.accounts.roles import allows
from app.accounts.store import RECHECK_SECONDS
from app.accounts.store import accounts_exist
from app.accounts.store import add_account
from app.accounts.store import authenticate
from app.accounts.store import remove_account
from app.accounts.store import session_account
from app.accounts.store import set_password
from app.accounts.store import set_role
from app.accounts.throttle import LoginThrottle
from app.accounts.tokens import create_token
from app.accounts.tokens import revoke_token
from app.accounts.tokens import token_principal
from app.db.models import Account
from app.db.models import ApiToken
from app.errors import Conflict
from app.errors import ValidationError


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_a_password_checks_against_its_hash_and_no_other():
    stored = hash_password("correct horse")
    assert stored.startswith("scrypt$")
    assert verify_password("correct horse", stored)
    assert not verify_password("correct horsE", stored)


def test_the_same_password_hashes_differently_per_salt():
    assert hash_password("correct horse") != hash_password("correct horse")


def test_no_password_matches_an_account_made_by_a_proxy():
    assert not verify_password("", "!")
    assert not verify_password("anything", "!")


def test_roles_are_ordered_viewer_rater_runner_admin():
    assert allows("admin", "runner") and allows("runner", "rater") and allows("rater", "viewer")
    assert not allows("viewer", "rater") and not allows("runner", "admin")


def test_the_throttle_refuses_after_five_failures_until_the_window_passes():
    clock = Clock()
    throttle = LoginThrottle(clock=clock)
    keys = ("account:alice", "address:10.0.0.1")
    for _ in range(5):
        assert throttle.retry_after(keys) == 0
        throttle.failed(keys)
    assert throttle.retry_after(keys) == pytest.approx(300)
    clock.now += 299
    assert throttle.retry_after(keys) == pytest.approx(1)
    clock.now += 1
    assert throttle.retry_after(keys) == 0


def test_the_throttle_counts_an_address_across_account_names():
    throttle = LoginThrottle(clock=Clock())
    for i in range(5):
        throttle.failed((f"account:user{i}", "address:10.0.0.9"))
    assert throttle.retry_after(("account:someone-else", "address:10.0.0.9")) > 0
    assert throttle.retry_after(("account:someone-else", "address:10.0.0.8")) == 0


def test_a_right_password_clears_the_accounts_failures_but_not_the_addresss():
    throttle = LoginThrottle(clock=Clock())
    for _ in range(5):
        throttle.failed(("account:alice", "address:10.0.0.1"))
    throttle.succeeded("account:alice")
    assert throttle.retry_after(("account:alice", "address:10.0.0.2")) == 0
    assert throttle.retry_after(("account:bob", "address:10.0.0.1")) > 0


def test_an_account_signs_in_with_its_password_only(app):
    add_account("alice", "rater", "long enough")
    assert authenticate("alice", "long enough").name == "alice"
    assert authenticate("alice", "wrong password") is None
    assert authenticate("nobody", "long enough") is None


def test_an_account_name_is_unique(app):
    add_account("alice", "rater", "long enough")
    with pytest.raises(Conflict):
        add_account("alice", "viewer", "long enough")


def test_a_short_password_or_unknown_role_is_refused_naming_the_field(app):
    with pytest.raises(ValidationError) as short:
        add_account("alice", "rater", "short")
    assert short.value.errors[0]["field"] == "password"
    with pytest.raises(ValidationError) as role:
        add_account("alice", "owner", "long enough")
    assert role.value.errors[0]["field"] == "role"


def test_a_password_change_ends_the_sessions_made_before(app):
    account = add_account("alice", "rater", "long enough")
    assert session_account("alice", account.session_version) is not None
    set_password("alice", "another long one")
    assert session_account("alice", account.session_version) is None


def test_the_last_admin_can_be_neither_removed_nor_demoted(app):
    add_account("root", "admin", "long enough")
    with pytest.raises(Conflict):
        remove_account("root")
    with pytest.raises(Conflict):
        set_role("root", "viewer")
    add_account("second", "admin", "long enough")
    set_role("root", "viewer")


def test_a_token_is_stored_only_as_its_hash_and_stands_for_its_role(app):
    row, token = create_token("ci", "runner")
    assert token not in {r.token_hash for r in ApiToken.select()}
    who = token_principal(token)
    assert (who.name, who.role, who.kind) == ("ci", "runner", "token")
    assert token_principal(token + "x") is None


def test_a_revoked_token_stands_for_no_one(app):
    _, token = create_token("ci", "runner")
    revoke_token("ci")
    assert token_principal(token) is None


def test_the_audit_log_never_keeps_a_value_under_a_secret_key(app):
    entry = audit.record("account:root", "provider.update", "provider 1", {"secret_value": "k"})
    assert entry.details == {"secret_value": "(hidden)"}


def test_the_audit_log_pages_newest_first(app):
    for i in range(3):
        audit.record("cli", "run.stop", f"run {i}")
    entries, more = audit.page(1, size=2)
    assert [e.subject for e in entries] == ["run 2", "run 1"] and more


def test_loopback_binds_are_told_apart_from_the_others():
    assert access.is_loopback("127.0.0.1") and access.is_loopback("::1")
    assert access.is_loopback("localhost") and access.is_loopback("127.0.0.2")
    assert not access.is_loopback("0.0.0.0") and not access.is_loopback("192.168.1.5")


def test_a_trusted_proxy_is_matched_by_address_or_network():
    networks = access.trusted_networks("10.0.0.5, 192.168.0.0/16")
    assert access.is_trusted("10.0.0.5", networks)
    assert access.is_trusted("192.168.4.4", networks)
    assert not access.is_trusted("10.0.0.6", networks)
    with pytest.raises(access.StartRefused, match="LLMBENCH_TRUSTED_PROXIES"):
        access.trusted_networks("not-an-address")


def test_a_server_beyond_loopback_with_no_account_refuses_to_start(app):
    with pytest.raises(access.StartRefused, match="llmbench users add NAME --role admin"):
        access.prepare_start({}, "0.0.0.0")


def test_a_server_on_loopback_with_no_account_starts(app):
    access.prepare_start({}, "127.0.0.1")


def test_auth_off_starts_beyond_loopback_with_a_warning(app, caplog):
    access.prepare_start({"AUTH": "off"}, "0.0.0.0")
    assert "LLMBENCH_AUTH=off" in caplog.text


def test_the_admin_password_setting_creates_the_first_admin(app, caplog, tmp_path):
    caplog.set_level(logging.INFO)
    secret = tmp_path / "admin-password"
    secret.write_text("from a file, long\n")
    access.prepare_start({"ADMIN_PASSWORD_FILE": str(secret)}, "0.0.0.0")
    assert authenticate("admin", "from a file, long").role == "admin"
    assert "Created the first admin" in caplog.text and "from a file" not in caplog.text


def test_an_account_made_by_another_process_is_seen_within_the_recheck_time(app):
    now = [0.0]
    assert accounts_exist(clock=lambda: now[0]) is False
    Account.create(name="other", role="viewer", password_hash="!")  # as another process would
    now[0] = RECHECK_SECONDS - 1
    assert accounts_exist(clock=lambda: now[0]) is False
    assert accounts_exist(fresh=True, clock=lambda: now[0]) is True


def test_no_account_is_read_again_after_the_recheck_time(app):
    now = [0.0]
    accounts_exist(clock=lambda: now[0])
    Account.create(name="other", role="viewer", password_hash="!")
    now[0] = RECHECK_SECONDS
    assert accounts_exist(clock=lambda: now[0]) is True


def test_a_bad_trusted_proxy_entry_stops_the_start_naming_the_setting(app):
    with pytest.raises(access.StartRefused, match="LLMBENCH_TRUSTED_PROXIES"):
        access.prepare_start({"TRUSTED_PROXIES": "10.0.0.300"}, "127.0.0.1")


def test_an_unknown_role_for_proxy_accounts_stops_the_start(app):
    with pytest.raises(access.StartRefused, match="LLMBENCH_AUTH_PROXY_CREATE"):
        access.prepare_start({"AUTH_PROXY_CREATE": "yes"}, "127.0.0.1")


def test_a_token_and_an_account_cannot_share_a_name(app):
    add_account("ci", "viewer", "long enough")
    with pytest.raises(Conflict):
        create_token("ci", "runner")
    create_token("robot", "runner")
    with pytest.raises(Conflict):
        add_account("robot", "viewer", "long enough")
