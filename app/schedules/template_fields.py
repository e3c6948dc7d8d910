"""The rules of a template's fields: name, the run spec, the schedule, the alert settings.

Every problem is reported at once, each naming its field. The run spec goes through the same
rules as a run (runs/spec.py) and is stored in the API's shape with ids, so the template starts
the same run tomorrow as today.
"""

import math
from urllib.parse import urlsplit

from ..errors import ValidationError
from ..runs.spec_check import clean_spec
from . import cron

NAME_MAX = 200
THRESHOLD_DEFAULT = 5.0
WEBHOOK_MAX = 2000
TRIGGER_RE_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:")
NOTE_MAX = 500


def _error(errors, field, message):
    errors.append({"field": field, "message": message})


def stored_spec(cleaned):
    """A cleaned run spec (runs/spec.py) back in the API's shape, with ids, for storing."""
    spec = {
        "targets": [
            {"providerId": t["provider"].id, "model": t["model"], "params": t["params"] or {}}
            for t in cleaned["targets"]
        ],
        "collectionIds": cleaned["collection_ids"],
    }
    if cleaned["judge_model"]:  # else no judge: the tasks' checks score its runs
        spec = {
            "judgeProviderId": cleaned["judge_provider"].id,
            "judgeModel": cleaned["judge_model"],
            **spec,
        }
    if cleaned["judge_params"]:
        spec["judgeParams"] = cleaned["judge_params"]
    if cleaned["task_ids"]:
        spec["taskIds"] = cleaned["task_ids"]
    if cleaned["settings"]:
        spec["settings"] = cleaned["settings"]
    if cleaned["name"]:  # else each run is named after the template
        spec["name"] = cleaned["name"]
    return spec


def _spec(raw, errors):
    if not isinstance(raw, dict):
        _error(errors, "spec", "must be a run spec object (judge, targets, collections)")
        return None
    if raw.get("runId") or raw.get("run_id"):
        _error(errors, "spec.runId", "a template names each run itself; leave runId out")
        return None
    try:
        cleaned = clean_spec({k: v for k, v in raw.items() if k != "queue"})
    except ValidationError as exc:
        for e in exc.errors:
            _error(errors, f"spec.{e['field']}" if e.get("field") else "spec", e["message"])
        return None
    return stored_spec(cleaned)


def _schedule(raw, errors):
    """{cron, timezone, enabled} or None (no schedule)."""
    if raw in (None, "", {}):
        return None
    if not isinstance(raw, dict):
        _error(errors, "schedule", "must be an object {cron, timezone, enabled} or null")
        return None
    expr = (raw.get("cron") or "").strip() if isinstance(raw.get("cron"), str) else raw.get("cron")
    zone = raw.get("timezone") or "UTC"
    enabled = raw.get("enabled", True)
    if not isinstance(enabled, bool):
        _error(errors, "schedule.enabled", "must be true or false")
        return None
    if not expr:
        if enabled:
            _error(errors, "schedule.cron", "give a cron expression such as '0 3 * * *'")
        return None
    zone_known = True
    try:
        cron.timezone_of(zone)
    except ValidationError as exc:
        errors.extend(exc.errors)
        zone_known = False
    try:  # the expression is checked even when the zone is wrong: every problem at once
        cron.trigger(expr, zone if zone_known else "UTC")
    except ValidationError as exc:
        errors.extend(exc.errors)
        return None
    return {"cron": expr, "timezone": str(zone), "enabled": enabled} if zone_known else None


def _threshold(raw, errors):
    if raw in (None, ""):
        return THRESHOLD_DEFAULT
    try:
        if isinstance(raw, bool):
            raise ValueError
        value = float(raw)
        if not math.isfinite(value) or not 0 < value <= 100:
            raise ValueError
    except (TypeError, ValueError):
        _error(
            errors, "regressionThreshold", "must be a number of score points above 0, at most 100"
        )
        return None
    return value


def clean_webhook(raw, errors):
    """The webhook URL, "" to remove it, or None to keep the stored one (a secret: never echoed)."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        _error(errors, "webhookUrl", "must be text: an http:// or https:// URL")
        return None
    raw = raw.strip()
    if not raw:
        return ""
    try:
        parts = urlsplit(raw)
    except ValueError:  # a broken [IPv6] host, say
        parts = None
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not parts.netloc
        or len(raw) > WEBHOOK_MAX
    ):
        # Not echoed: webhook URLs often carry a token.
        _error(errors, "webhookUrl", "must be an http:// or https:// URL (at most 2000 characters)")
        return None
    return raw


def clean_template(data):
    """{name, description, spec, schedule, threshold, webhook} from an API or form body."""
    if not isinstance(data, dict):
        raise ValidationError("the body must be a JSON object describing the template")
    errors = []
    name = data.get("name")
    name = name.strip() if isinstance(name, str) else ""
    if not name:
        _error(errors, "name", "is required")
    elif len(name) > NAME_MAX:
        _error(errors, "name", f"at most {NAME_MAX} characters")
    description = data.get("description") or ""
    if not isinstance(description, str):
        _error(errors, "description", "must be text")
        description = ""
    cleaned = {
        "name": name,
        "description": description,
        "spec": _spec(data.get("spec"), errors),
        "schedule": _schedule(data.get("schedule"), errors),
        "threshold": _threshold(data.get("regressionThreshold"), errors),
        "webhook": clean_webhook(data.get("webhookUrl"), errors),
    }
    if errors:
        raise ValidationError(errors)
    return cleaned


def clean_trigger(data):
    """(triggeredBy, note) of POST /api/templates/{id}/trigger, or ValidationError."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValidationError.field("body", "the body must be a JSON object")
    errors = []
    who = data.get("triggeredBy", "external")
    if not isinstance(who, str) or not who.strip() or len(who) > 50 or set(who) - TRIGGER_RE_CHARS:
        _error(
            errors,
            "triggeredBy",
            "a short name: letters, digits, '-', '_', '.', ':' (at most 50), e.g. post-finetune",
        )
    note = data.get("note")
    if note is not None and (not isinstance(note, str) or len(note) > NOTE_MAX):
        _error(errors, "note", f"must be text of at most {NOTE_MAX} characters")
    if errors:
        raise ValidationError(errors)
    return who.strip(), (note.strip() or None) if note else None
