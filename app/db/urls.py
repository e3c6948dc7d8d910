"""LLMBENCH_DB read as a place: a SQLite file (a path or sqlite:///…) or a PostgreSQL URL.

    target = parse("postgresql://bench:s3cret@db:5432/llmbench")
    target.kind == "postgres"; target.masked == "postgresql://bench:****@db:5432/llmbench"

Anything else is a DatabaseUrlError naming LLMBENCH_DB, raised before any folder is made (a
URL taken for a path used to create a folder named `postgresql:`). The password may come from
the URL, from LLMBENCH_DB_PASSWORD, or from libpq's own ~/.pgpass (PGPASSFILE); `masked` and
every message here show `****` in its place.
"""

import importlib.util
import os
import re
from dataclasses import dataclass
from dataclasses import field
from urllib.parse import unquote
from urllib.parse import urlsplit
from urllib.parse import urlunsplit

ENV_NAME = "LLMBENCH_DB"
PASSWORD_ENV = "LLMBENCH_DB_PASSWORD"
POSTGRES_SCHEMES = ("postgresql", "postgres")
MASK = "****"
# "scheme:" at the start, as a URL has it; one letter is a Windows drive (C:\…), not a scheme.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+):")


class DatabaseUrlError(ValueError):
    """LLMBENCH_DB names no database we can open; the message names the variable and the fix."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class DbTarget:
    """Where the database is: kind "sqlite" (path) or "postgres" (dsn + connect params)."""

    kind: str
    path: str = field(default="", repr=False)  # a PostgreSQL URL may hold the password
    masked: str = ""
    params: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_postgres(self):
        return self.kind == "postgres"


def mask_password(url):
    """The URL with its password (if any) as ****; text that is no URL comes back unchanged."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{parts.username or ''}:{MASK}@{host}"
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def driver_available():
    return importlib.util.find_spec("psycopg") is not None


def parse(value, environ=None):
    """Read LLMBENCH_DB's value: a DbTarget, or DatabaseUrlError naming the variable."""
    environ = os.environ if environ is None else environ
    text = str(value).strip()
    if not text:
        raise DatabaseUrlError(f"{ENV_NAME} is empty: set it to a SQLite file or a PostgreSQL URL")
    if text == ":memory:":
        return DbTarget("sqlite", path=text, masked=text)
    match = _SCHEME.match(text)
    if match is None:
        return DbTarget("sqlite", path=text, masked=text)
    scheme = match.group(1).lower()
    if scheme == "sqlite":
        return _sqlite(text)
    if scheme in POSTGRES_SCHEMES:
        return _postgres(text, environ)
    raise DatabaseUrlError(
        f"{ENV_NAME}={mask_password(text)}: unsupported database scheme {scheme!r}; use a SQLite "
        "file path (or sqlite:///path) or postgresql://user:password@host:5432/database"
    )


def _sqlite(text):
    # sqlite:///relative/file.db and sqlite:////absolute/file.db, as SQLAlchemy spells them.
    if not text.lower().startswith("sqlite:///"):
        raise DatabaseUrlError(
            f"{ENV_NAME}={text}: a SQLite URL is sqlite:///relative.db or sqlite:////abs/path.db"
        )
    path = unquote(text[len("sqlite:///") :].split("?", 1)[0])
    if not path:
        raise DatabaseUrlError(f"{ENV_NAME}={text}: the SQLite URL names no file")
    return DbTarget("sqlite", path=path, masked=text)


def _postgres(text, environ):
    masked = mask_password(text)
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise DatabaseUrlError(f"{ENV_NAME}={masked}: not a valid PostgreSQL URL ({exc})") from None
    name = unquote(parts.path.lstrip("/"))
    if not name:
        raise DatabaseUrlError(
            f"{ENV_NAME}={masked}: name the database, e.g. postgresql://user@host:5432/llmbench"
        )
    if not driver_available():
        raise DatabaseUrlError(
            f"{ENV_NAME}={masked}: PostgreSQL needs the psycopg driver: "
            "pip install 'psycopg[binary]' (or llmbench[postgres])"
        )
    params = {"dbname": name}
    if parts.hostname:
        params["host"] = parts.hostname
    if port:
        params["port"] = port
    if parts.username:
        params["user"] = unquote(parts.username)
    password = unquote(parts.password) if parts.password else environ.get(PASSWORD_ENV)
    if password:
        params["password"] = password  # else libpq looks in ~/.pgpass (PGPASSFILE) itself
    for key, values in _query(parts.query).items():
        params.setdefault(key, values)
    return DbTarget("postgres", path=text, masked=masked, params=params)


def _query(query):
    """libpq options in the URL's query (sslmode=require&connect_timeout=5)."""
    options = {}
    for pair in filter(None, query.split("&")):
        key, _, val = pair.partition("=")
        options[unquote(key)] = unquote(val)
    return options
