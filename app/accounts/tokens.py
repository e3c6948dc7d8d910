"""Tokens for machines: a name, a role, and only the sha256 of the token kept (shown once)."""

import hashlib
import secrets

from ..clock import utcnow
from ..db.connection import database
from ..db.models import Account
from ..db.models import ApiToken
from ..errors import Conflict
from ..errors import NotFound
from .roles import check_role
from .store import Principal
from .store import check_name

PREFIX = "llmb_"  # tells a token apart in a config file or a leaked log


def token_hash(token):
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_token(name, role):
    """A new token: (its row, the token itself, which is never stored nor shown again)."""
    name = check_name(name)
    check_role(role)
    token = PREFIX + secrets.token_urlsafe(32)
    with database.atomic():
        if ApiToken.select().where(ApiToken.name == name).exists():
            raise Conflict(f"A token called {name!r} exists already; revoke it first.")
        # One namespace: a token's labels are recorded under its name, as an account's are.
        if Account.select().where(Account.name == name).exists():
            raise Conflict(f"An account is called {name!r}; give the token another name.")
        row = ApiToken.create(name=name, role=role, token_hash=token_hash(token))
    return row, token


def list_tokens():
    return list(ApiToken.select().order_by(ApiToken.name))


def revoke_token(name):
    """Delete the token: requests carrying it are refused from now on."""
    if not ApiToken.delete().where(ApiToken.name == name).execute():
        raise NotFound(f"No token called {name!r}.")


def token_principal(token):
    """The Principal a Bearer token stands for, or None for an unknown one."""
    row = ApiToken.get_or_none(ApiToken.token_hash == token_hash(token or ""))
    if row is None:
        return None
    now = utcnow()
    # Last use to the minute: one write a minute at most, not one per call.
    if row.last_used_at is None or (now - row.last_used_at).total_seconds() > 60:
        ApiToken.update(last_used_at=now).where(ApiToken.id == row.id).execute()
    return Principal(row.name, row.role, "token")
