"""`llmbench users` and `llmbench tokens` (issue 30): accounts and tokens from the terminal,
and `llmbench serve` refusing to listen beyond loopback with no account."""

import pytest

from app.accounts.store import authenticate
from app.accounts.tokens import token_principal
from app.db.connection import database
from app.db.models import ApiToken
from app.db.models import AuditEntry
from tests.cli_helpers import make_cli


@pytest.fixture
def cli(tmp_path):
    yield make_cli(tmp_path)
    if not database.is_closed():
        database.close()


def test_users_add_asks_for_the_password_twice(cli):
    result = cli("users", "add", "alice", "--role", "rater", input="long enough\nlong enough\n")
    assert result.exit_code == 0, result.output
    assert "Added alice (rater)." in result.output
    assert authenticate("alice", "long enough").role == "rater"


def test_users_add_reads_one_line_with_password_stdin(cli):
    args = ("users", "add", "bot", "--role", "viewer", "--password-stdin")
    result = cli(*args, input="s3cret-long\n")
    assert result.exit_code == 0, result.output
    assert authenticate("bot", "s3cret-long") is not None


def test_users_add_refuses_a_short_password_naming_the_field(cli):
    result = cli("users", "add", "al", "--role", "viewer", "--password-stdin", input="short\n")
    assert result.exit_code == 2
    assert "password: a password needs at least 8 characters" in result.output


def test_users_list_set_role_and_remove(cli):
    for name in ("alice", "root"):
        cli("users", "add", name, "--role", "admin", "--password-stdin", input="long enough\n")
    assert cli("users", "set-role", "alice", "viewer").exit_code == 0
    listed = cli("users", "list").output
    assert "alice\tviewer" in listed and "root\tadmin" in listed
    assert cli("users", "remove", "alice").exit_code == 0
    assert "alice" not in cli("users", "list").output


def test_the_last_admin_cannot_be_removed(cli):
    cli("users", "add", "root", "--role", "admin", "--password-stdin", input="long enough\n")
    result = cli("users", "remove", "root")
    assert result.exit_code == 1
    assert "last admin" in result.output


def test_users_set_password_changes_it(cli):
    cli("users", "add", "alice", "--role", "rater", "--password-stdin", input="long enough\n")
    result = cli("users", "set-password", "alice", "--password-stdin", input="even longer one\n")
    assert result.exit_code == 0, result.output
    assert authenticate("alice", "even longer one") is not None
    assert authenticate("alice", "long enough") is None


def test_tokens_create_prints_the_token_once_and_keeps_its_hash(cli):
    result = cli("tokens", "create", "ci", "--role", "runner")
    assert result.exit_code == 0, result.output
    token = result.stdout.strip().splitlines()[-1]
    assert token.startswith("llmb_")
    assert token_principal(token).role == "runner"
    assert token not in "".join(r.token_hash for r in ApiToken.select())
    assert token not in cli("tokens", "list").output


def test_tokens_revoke_ends_the_token(cli):
    token = cli("tokens", "create", "ci").stdout.strip().splitlines()[-1]
    assert cli("tokens", "revoke", "ci").exit_code == 0
    assert token_principal(token) is None


def test_account_and_token_changes_are_in_the_audit_log(cli):
    cli("users", "add", "alice", "--role", "rater", "--password-stdin", input="long enough\n")
    cli("tokens", "create", "ci")
    actions = [e.action for e in AuditEntry.select().order_by(AuditEntry.id)]
    assert actions == ["account.add", "token.create"]


def test_serve_beyond_loopback_with_no_account_refuses_with_what_to_run(cli):
    result = cli("serve", "--host", "0.0.0.0", "--port", "1")
    assert result.exit_code == 3
    assert "llmbench users add NAME --role admin" in result.output
