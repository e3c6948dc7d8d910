"""The audit log: who started, paused, stopped, deleted or changed what. Never a secret's
value: callers pass names of changed fields and keys, `record` drops any value under a key
that looks secret besides."""

import json

from ..db.models import AuditEntry

PAGE = 50
LOCAL = "local"  # a person on loopback with no accounts: no name to give
CLI = "cli"  # a command run on the server's machine
_SECRET_WORDS = ("secret", "password", "token", "authorization", "api_key", "apikey", "value")


def _clean(details):
    if isinstance(details, dict):
        return {
            str(k): ("(hidden)" if any(w in str(k).lower() for w in _SECRET_WORDS) else _clean(v))
            for k, v in details.items()
        }
    if isinstance(details, list | tuple):
        return [_clean(v) for v in details]
    return details


def record(actor, action, subject, details=None):
    """Add one entry: `actor` ("account:alice", "token:ci", "cli", "local"), `action`
    ("run.stop"), `subject` ("run 3f2a…"), `details` (plain JSON, no secret values)."""
    return AuditEntry.create(
        actor=str(actor or LOCAL)[:200],
        action=str(action)[:50],
        subject=str(subject)[:300],
        details=_clean(details) if details else None,
    )


def page(number=1, size=PAGE):
    """Entries newest first, one page: (entries, whether there is a next page)."""
    number = max(1, int(number))
    rows = list(
        AuditEntry.select()
        .order_by(AuditEntry.at.desc(), AuditEntry.id.desc())
        .offset((number - 1) * size)
        .limit(size + 1)
    )
    return rows[:size], len(rows) > size


def entry_dict(entry):
    return {
        "id": entry.id,
        "at": entry.at.isoformat(timespec="milliseconds") + "Z",
        "actor": entry.actor,
        "action": entry.action,
        "subject": entry.subject,
        "details": entry.details,
    }


def jsonl_lines():
    """Every entry, newest first, one JSON object a line."""
    query = AuditEntry.select().order_by(AuditEntry.at.desc(), AuditEntry.id.desc())
    for entry in query.iterator():
        yield json.dumps(entry_dict(entry), ensure_ascii=False, sort_keys=True) + "\n"
