"""What every process does with its database before using it, the web app and each command
alike: the master key that opens its secrets (beside the database), and the built-in tasks
and collections on an empty one."""

import logging
from pathlib import Path

from .. import crypto
from ..db.connection import database
from ..db.models import ProviderHeader
from ..db.models import Template
from ..db.urls import parse
from . import defaults
from .providers import _aad as header_aad

log = logging.getLogger(__name__)

KEY_NAME = "master.key"


def key_file(cfg):
    """The master key file: LLMBENCH_MASTER_KEY_PATH, else master.key beside a SQLite database
    (the key travels with the file whose secrets it opens), else in the home (PostgreSQL)."""
    if cfg.get("MASTER_KEY_PATH"):
        return Path(cfg["MASTER_KEY_PATH"]).expanduser()
    target = parse(cfg["DB"])
    if not target.is_postgres and target.path != ":memory:":
        return Path(target.path).expanduser().resolve().parent / KEY_NAME
    return Path(cfg["HOME"]) / KEY_NAME


def key_source(cfg):
    """Where the key comes from, for people: the file, or the environment variable."""
    if cfg.get("MASTER_KEY_BASE64") and not cfg.get("MASTER_KEY_PATH"):
        return "LLMBENCH_MASTER_KEY_BASE64"
    return str(key_file(cfg))


def stored_secret():
    """One encrypted value the bound database holds, as (token, aad), or None when it holds
    none (a header marked secret, or a template's webhook URL)."""
    header = (
        ProviderHeader.select(ProviderHeader.provider, ProviderHeader.key, ProviderHeader.value)
        .where(ProviderHeader.is_secret == True)  # noqa: E712 (peewee builds SQL from ==)
        .first()
    )
    if header is not None:
        return header.value, header_aad(header.provider_id, header.key)
    template = (
        Template.select(Template.id, Template.webhook_url)
        .where(Template.webhook_url.is_null(False))
        .first()
    )
    if template is not None:
        # schedules/webhook_secret.webhook_aad (a tier above: the same text).
        return template.webhook_url, f"template:{template.id}:webhook"
    return None


def install_key(cfg, *, create=True):
    """Load the master key of cfg's database (bound already), check that it opens the secrets
    stored there, and install it; returns the key.

    A missing key file is created only when the database holds no secret (`create`); a
    database with secrets whose key is missing or does not open them is a KeyError_ naming
    both files, never a new key."""
    where = key_source(cfg)
    with database.connection_context():
        sample = stored_secret()
    if where == "LLMBENCH_MASTER_KEY_BASE64":
        key = crypto.load_key(key_base64=cfg["MASTER_KEY_BASE64"])
    else:
        path = key_file(cfg)
        if cfg.get("MASTER_KEY_PATH") or path.exists():
            key = crypto.load_key(key_path=str(path), setting=bool(cfg.get("MASTER_KEY_PATH")))
        elif sample is not None:
            key = _legacy_key(cfg, path, sample)
            if key is None:
                raise crypto.KeyError_(
                    f"the database {_db_name(cfg)} holds encrypted secrets, but its master "
                    f"key {path} is missing; put the key file back there (from the backup "
                    "kept with the database) or point LLMBENCH_MASTER_KEY_PATH at it. "
                    "Nothing was changed."
                )
        elif create:
            key = crypto.create_key_file(path)
        else:
            return None
    if sample is not None and not crypto.opens(key, *sample):
        raise crypto.KeyError_(
            f"the master key {where} does not open the secrets stored in the database "
            f"{_db_name(cfg)}: it is not the key they were saved with. Use that key "
            "(LLMBENCH_MASTER_KEY_PATH or the master.key beside the database). Nothing was "
            "changed."
        )
    crypto.set_key(key)
    return key


def _legacy_key(cfg, path, sample):
    """The home's key for a database elsewhere that it opens (before keys moved beside their
    database, every key was written into the home), with a warning saying where it belongs."""
    legacy = Path(cfg["HOME"]) / KEY_NAME
    if legacy == path or not legacy.exists():
        return None
    key = crypto.load_key(key_path=str(legacy), setting=False)
    if not crypto.opens(key, *sample):
        return None
    log.warning(
        "the master key of %s was read from %s; move it beside the database (%s)",
        _db_name(cfg),
        legacy,
        path,
    )
    return key


def _db_name(cfg):
    return parse(cfg["DB"]).masked


def prepare(cfg):
    """The bound database's key installed (install_key), then the default providers and
    built-in tasks and collections when it is empty (LOAD_DEFAULTS): what `llmbench serve`
    and every command that opens the database do first. Returns the key."""
    key = install_key(cfg)
    if cfg.get("LOAD_DEFAULTS", True):
        with database.connection_context():
            defaults.ensure_defaults()
    return key
