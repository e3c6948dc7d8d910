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


def utc_text(value, seconds=True):
    """A stored UTC datetime as people read it on every page and in report.html, whatever this
    machine's time zone: "2026-01-02 09:15:03 UTC" (the zone said in words: report.html has no
    script to show a reader's own time). None stays None, text stays as it is."""
    if value is None or isinstance(value, str):
        return value
    return value.strftime("%Y-%m-%d %H:%M:%S UTC" if seconds else "%Y-%m-%d %H:%M UTC")


def local_text(value):
    """A stored UTC datetime as a person reads it in this machine's time zone:
    "2 Jan 2026, 10:15:03 CET"; None stays None, text stays as it is."""
    if value is None or isinstance(value, str):
        return value
    local = value.replace(tzinfo=dt.UTC).astimezone()
    return f"{local.day} {local:%b %Y, %H:%M:%S} {local.tzname() or local.strftime('%z')}"
