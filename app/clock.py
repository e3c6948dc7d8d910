"""One place for 'now', so the engine can be stepped with a fake clock in tests."""

import datetime as dt


def utcnow():
    """Naive UTC datetime (SQLite stores it as sortable text)."""
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def db_text(value):
    """A datetime in the text form sqlite3 gives datetimes, so raw-SQL comparisons hold."""
    return value.isoformat(" ")


def isoformat(value):
    """ISO 8601 with a Z, or None."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return value.isoformat(timespec="milliseconds") + "Z"
