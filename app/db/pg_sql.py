"""What PostgreSQL needs of the SQL written for SQLite: the one advisory lock a write
transaction takes, and `?` placeholders turned into psycopg's `%s`. Plain text work, shared by
the connection (db/connection.py) and the PostgreSQL classes (db/postgres.py)."""

import re

# The one advisory lock a PostgreSQL write transaction takes ("llmb" in ASCII).
WRITE_LOCK_KEY = 0x6C6C6D62

# A quoted string or identifier (kept as is), a `?` placeholder, or a literal %.
_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|\?|%")
_translated = {}


def pg_placeholders(sql):
    """SQLite's `?` placeholders as psycopg's `%s` outside quotes; every literal % as %%."""
    done = _translated.get(sql)
    if done is None:

        def swap(match):
            token = match.group(0)
            if token == "?":
                return "%s"
            return token.replace("%", "%%")  # psycopg reads % inside quotes too

        done = _TOKENS.sub(swap, sql)
        if len(_translated) < 4096:
            _translated[sql] = done
    return done
