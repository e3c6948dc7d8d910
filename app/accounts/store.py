"""Accounts: add, list, remove, change role or password, sign in; and who a request is.

A signed-in person is a `Principal` (name, role): the web sets `flask.g.account` to one."""

import re
import threading
import time
from dataclasses import dataclass

from ..clock import utcnow
from ..db.connection import database
from ..db.models import Account
from ..db.models import ApiToken
from ..errors import Conflict
from ..errors import NotFound
from ..errors import ValidationError
from . import passwords
from .roles import ADMIN
from .roles import check_role

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}$")


@dataclass(frozen=True)
class Principal:
    """Who a request is: an account (`kind` "account"), a token ("token") or a name a trusted
    proxy vouched for ("proxy"). `version` is the account's session version."""

    name: str
    role: str
    kind: str = "account"
    version: int = 0

    @property
    def actor(self):
        """How the audit log names them: "account:alice", "token:ci"."""
        return f"{'token' if self.kind == 'token' else 'account'}:{self.name}"


def principal(account, kind="account"):
    """The Principal of an Account row."""
    return Principal(account.name, account.role, kind, account.session_version)


def check_name(name, field="name"):
    """A name: letters, digits and . _ @ + - (up to 100), not starting with punctuation."""
    name = (name or "").strip()
    if not NAME.match(name):
        raise ValidationError.field(
            field, "use 1-100 letters, digits or . _ @ + - (starting with a letter or digit)"
        )
    return name


def check_password(password, field="password"):
    if len(password or "") < passwords.MIN_LENGTH:
        raise ValidationError.field(
            field, f"a password needs at least {passwords.MIN_LENGTH} characters"
        )
    return password


def any_account():
    """Whether any account exists (then every page and API call needs a login)."""
    return Account.select().exists()


# Whether each database has an account, as last read: a page costs no query for it. Once
# there is one, it stays so (the safe side); "none" is read again after RECHECK_SECONDS, on
# every request that changes something, and whenever this process adds or removes one, so an
# account made by `llmbench users add` beside a running server holds within RECHECK_SECONDS.
RECHECK_SECONDS = 10.0
_seen = {}
_seen_lock = threading.Lock()


def accounts_exist(fresh=False, clock=time.monotonic):
    """any_account(), remembered per database (see RECHECK_SECONDS); `fresh` reads it now."""
    key = str(database.database)
    now = clock()
    with _seen_lock:
        found, read_at = _seen.get(key, (None, None))
    if found or (found is False and not fresh and now - read_at < RECHECK_SECONDS):
        return found
    return _remember(clock)


def _remember(clock=time.monotonic):
    found = any_account()
    with _seen_lock:
        _seen[str(database.database)] = (found, clock())
    return found


def get_account(name):
    """The account called `name`, or NotFound."""
    account = Account.get_or_none(Account.name == name)
    if account is None:
        raise NotFound(f"No account called {name!r}.")
    return account


def list_accounts():
    return list(Account.select().order_by(Account.name))


def add_account(name, role, password):
    """A new account; Conflict when the name is taken."""
    name = check_name(name)
    check_role(role)
    check_password(password)
    with database.atomic():
        if Account.select().where(Account.name == name).exists():
            raise Conflict(f"An account called {name!r} exists already.")
        # One namespace: a token's labels are recorded under its name, as an account's are.
        if ApiToken.select().where(ApiToken.name == name).exists():
            raise Conflict(f"A token is called {name!r}; give the account another name.")
        return Account.create(name=name, role=role, password_hash=passwords.hash_password(password))


def add_proxy_account(name, role):
    """An account a trusted proxy named, made on first sight: it has no password."""
    name = check_name(name, field="proxy header")
    with database.atomic():
        account = Account.get_or_none(Account.name == name)
        if account is None:
            account = Account.create(name=name, role=role, password_hash=passwords.NO_PASSWORD)
    _remember()
    return account


def _last_admin(account):
    others = Account.select().where((Account.role == ADMIN) & (Account.id != account.id))
    return account.role == ADMIN and not others.exists()


def remove_account(name):
    """Remove an account (its sessions end with it). The last admin stays: Conflict."""
    with database.atomic():
        account = get_account(name)
        if _last_admin(account):
            raise Conflict(f"{name!r} is the last admin; make another admin first.")
        account.delete_instance()
    _remember()


def set_role(name, role):
    """Change an account's role; the last admin cannot be demoted."""
    check_role(role)
    with database.atomic():
        account = get_account(name)
        if role != ADMIN and _last_admin(account):
            raise Conflict(f"{name!r} is the last admin; make another admin first.")
        old = account.role
        Account.update(role=role, updated_at=utcnow()).where(Account.id == account.id).execute()
    return old


def set_password(name, password):
    """A new password: every session of the account ends (its session version moves on)."""
    check_password(password)
    account = get_account(name)
    Account.update(
        password_hash=passwords.hash_password(password),
        session_version=Account.session_version + 1,
        updated_at=utcnow(),
    ).where(Account.id == account.id).execute()


def end_sessions(name):
    """End every session of the account (logout): the next request of each must sign in."""
    Account.update(session_version=Account.session_version + 1).where(
        Account.name == name
    ).execute()


def authenticate(name, password):
    """The account whose name and password these are, or None (the same work either way)."""
    account = Account.get_or_none(Account.name == (name or "").strip())
    stored = account.password_hash if account is not None else _DUMMY
    matches = passwords.verify_password(password or "", stored)
    return account if matches and account is not None else None


def session_account(name, version):
    """The Principal of a session cookie's account, or None once its version moved on."""
    account = Account.get_or_none(Account.name == name)
    if account is None or account.session_version != version:
        return None
    return principal(account)


# A hash to check unknown names against, so they take as long as known ones.
_DUMMY = passwords.hash_password("not a password", salt=b"0" * passwords.SALT_BYTES)
