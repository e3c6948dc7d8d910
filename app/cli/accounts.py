"""`llmbench users` and `llmbench tokens`: accounts and tokens for machines, managed on the
server's machine (whoever can run the CLI there can read the database anyway)."""

import sys

import click

from ..accounts import audit
from ..accounts import store
from ..accounts import tokens as token_store
from ..clock import isoformat
from ..db.models import ROLES
from ..errors import LlmbenchError
from .open_database import open_db
from .output import db_context
from .output import translate

ROLE = click.Choice(ROLES)


def _password(password_stdin):
    """The new password: one line from stdin, or asked twice with nothing echoed."""
    if password_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    return click.prompt("Password", hide_input=True, confirmation_prompt=True, err=True)


def _do(action):
    """Run `action` against the database, a domain error as the CLI's error."""
    open_db()
    with db_context():
        try:
            return action()
        except LlmbenchError as exc:
            raise translate(exc) from None


@click.group("users")
def users():
    """Accounts: once one exists, every page and API call needs a login."""


@users.command("add")
@click.argument("name")
@click.option("--role", type=ROLE, required=True, help="viewer < rater < runner < admin.")
@click.option("--password-stdin", is_flag=True, help="Read the password from one stdin line.")
def users_add(name, role, password_stdin):
    """Create an account (asks for its password twice)."""
    password = _password(password_stdin)

    def add():
        account = store.add_account(name, role, password)
        audit.record(audit.CLI, "account.add", f"account {account.name}", {"role": role})
        return account

    account = _do(add)
    click.echo(f"Added {account.name} ({account.role}).")


@users.command("list")
def users_list():
    """Every account with its role."""
    for account in _do(store.list_accounts):
        click.echo(f"{account.name}\t{account.role}\t{isoformat(account.created_at)}")


@users.command("remove")
@click.argument("name")
def users_remove(name):
    """Remove an account (not the last admin)."""

    def remove():
        store.remove_account(name)
        audit.record(audit.CLI, "account.remove", f"account {name}")

    _do(remove)
    click.echo(f"Removed {name}.")


@users.command("set-role")
@click.argument("name")
@click.argument("role", type=ROLE)
def users_set_role(name, role):
    """Change an account's role."""

    def change():
        old = store.set_role(name, role)
        audit.record(audit.CLI, "account.role", f"account {name}", {"from": old, "to": role})

    _do(change)
    click.echo(f"{name} is now {role}.")


@users.command("set-password")
@click.argument("name")
@click.option("--password-stdin", is_flag=True, help="Read the password from one stdin line.")
def users_set_password(name, password_stdin):
    """Set a new password; the account's sessions end."""
    password = _password(password_stdin)

    def change():
        store.set_password(name, password)
        audit.record(audit.CLI, "account.password", f"account {name}")

    _do(change)
    click.echo(f"New password set for {name}; its sessions have ended.")


@click.group("tokens")
def tokens():
    """Tokens for machines: `Authorization: Bearer <token>` on the API, with the token's role."""


@tokens.command("create")
@click.argument("name")
@click.option("--role", type=ROLE, default="runner", show_default=True)
def tokens_create(name, role):
    """Create a token and print it once (only its hash is kept)."""

    def create():
        row, token = token_store.create_token(name, role)
        audit.record(audit.CLI, "token.create", f"token {row.name}", {"role": role})
        return token

    token = _do(create)
    click.echo(f"Token {name} ({role}); copy it now, it is not shown again:", err=True)
    click.echo(token)


@tokens.command("list")
def tokens_list():
    """Every token's name, role and last use (never the token)."""
    for row in _do(token_store.list_tokens):
        used = isoformat(row.last_used_at) or "never used"
        click.echo(f"{row.name}\t{row.role}\t{isoformat(row.created_at)}\t{used}")


@tokens.command("revoke")
@click.argument("name")
def tokens_revoke(name):
    """Revoke a token: requests carrying it are refused from now on."""

    def revoke():
        token_store.revoke_token(name)
        audit.record(audit.CLI, "token.revoke", f"token {name}")

    _do(revoke)
    click.echo(f"Revoked {name}.")
