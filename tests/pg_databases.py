"""Databases on a test PostgreSQL (tests/pg_server.py): one per test, cloned from a template.

    with fresh_database(url, template="llmbench_template") as test_url:   # ~40 ms on /dev/shm
        db = peewee_database(test_url)

Every connection made here is bounded (connect, statement and lock timeouts).
"""

import contextlib
import itertools
import os
from urllib.parse import urlsplit
from urllib.parse import urlunsplit

SQL_TIMEOUT_MS = 30_000


def with_database(url, name):
    """The same server URL pointing at another database."""
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def bounded_options(lock_timeout_ms=10_000):
    """libpq `options` that bound every statement and lock wait of a test connection."""
    return f"-c statement_timeout={SQL_TIMEOUT_MS} -c lock_timeout={lock_timeout_ms}"


def peewee_database(url, **params):
    """A Peewee PostgresqlDatabase on `url` through psycopg 3, with bounded waits."""
    from peewee import PostgresqlDatabase

    from app.db import postgres

    # llmbench keeps Peewee from importing the driver (app/__init__.py); a PostgreSQL URL
    # hands it over, and so does this plain Peewee database.
    postgres.hand_peewee_the_driver()

    params.setdefault("connect_timeout", 10)
    params.setdefault("options", bounded_options())
    return PostgresqlDatabase(url, prefer_psycopg3=True, **params)


@contextlib.contextmanager
def admin_connection(url):
    """An autocommit psycopg connection to the server's `postgres` database; bounded."""
    import psycopg

    conn = psycopg.connect(
        with_database(url, "postgres"),
        autocommit=True,
        connect_timeout=10,
        options=bounded_options(),
    )
    try:
        yield conn
    finally:
        conn.close()


def _create(conn, name, template=None, strategy=None):
    from psycopg import sql

    query = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
    if template:
        query += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
    if strategy:  # PostgreSQL 15+: WAL_LOG (the default) or FILE_COPY
        query += sql.SQL(" STRATEGY {}").format(sql.Identifier(strategy.lower()))
    conn.execute(query)


def _drop(conn, name):
    from psycopg import sql

    # WITH (FORCE) (PostgreSQL 13+) ends the sessions a test left open instead of failing.
    conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def create_database(url, name, template=None, strategy=None):
    """CREATE DATABASE `name` (a copy of `template` when given); the new database's URL."""
    with admin_connection(url) as conn:
        _create(conn, name, template, strategy)
    return with_database(url, name)


def drop_database(url, name):
    """DROP DATABASE IF EXISTS `name`, ending its sessions first."""
    with admin_connection(url) as conn:
        _drop(conn, name)


_names = itertools.count(1)


@contextlib.contextmanager
def fresh_database(url, template=None, strategy=None):
    """A new, uniquely named database for one test (a copy of `template`), dropped after.

    The copy is cheap when the template is small: CREATE DATABASE copies files, no DDL runs.
    """
    name = f"llmbench_t{os.getpid()}_{next(_names)}"
    with admin_connection(url) as conn:
        _create(conn, name, template, strategy)
        try:
            yield with_database(url, name)
        finally:
            _drop(conn, name)


def reset_schema(url):
    """Empty the database at `url` in place: DROP SCHEMA public CASCADE, then recreate it."""
    import psycopg

    with psycopg.connect(
        url, autocommit=True, connect_timeout=10, options=bounded_options()
    ) as conn:
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")


def empty_tables(url, tables):
    """Delete every row of `tables` (children first) and restart their id sequences.

    One transaction; the cheapest reset (the schema stays), for tests sharing one database.
    """
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, connect_timeout=10, options=bounded_options()) as conn:
        for table in tables:
            conn.execute(sql.SQL("DELETE FROM {}").format(sql.Identifier(table)))
        conn.execute(
            "SELECT setval(pg_get_serial_sequence(t, 'id'), 1, false) FROM unnest(%s::text[]) t",
            (list(tables),),
        )
