"""People's labels out and back in: ratings (with tags and notes) and votes, as CSV, JSONL or
JSON, per run or across runs (results = runs + evaluations).

An import matches each record to an item by run id, task id and target (its label, or its model
when that names one target of the run), checks every record first and stores all or nothing;
every problem names its line (CSV and JSONL) or record (JSON).
"""

import csv
import io
import json

from .. import jsontext
from ..clock import isoformat
from ..clock import utcnow
from ..db.connection import database
from ..db.models import HUMAN
from ..db.models import LEFT
from ..db.models import RIGHT
from ..db.models import WINNERS
from ..db.models import Item
from ..db.models import Rating
from ..db.models import RatingTag
from ..db.models import Run
from ..db.models import RunTarget
from ..db.models import Vote
from ..errors import ValidationError
from ..files.csvcells import SafeWriter
from ..files.csvcells import restore
from ..scoring.votes import vote_row
from .store import clean_notes
from .store import clean_rating
from .store import clean_tags
from .store import save_rating

FORMATS = ("json", "csv", "jsonl")
RATING_COLUMNS = (
    "run_id",
    "task_id",
    "target",
    "provider",
    "model",
    "item_id",
    "rating",
    "tags",
    "notes",
    "rated_at",
)
VOTE_COLUMNS = (
    "task_id",
    "left_run_id",
    "left_target",
    "right_run_id",
    "right_target",
    "winner",
    "winner_target",
    "source",
    "voter",
    "inconsistent",
    "left_item_id",
    "right_item_id",
    "voted_at",
)
CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "jsonl": "application/x-ndjson; charset=utf-8",
    "json": "application/json",
}
MAX_RECORDS = 200_000


def parse_format(value, default="json"):
    """json, csv or jsonl; 400 otherwise."""
    if value is not None and not isinstance(value, str):
        raise ValidationError.field("format", "must be json, csv or jsonl")
    value = (value or default).strip().lower()
    if value not in FORMATS:
        raise ValidationError.field("format", "must be json, csv or jsonl")
    return value


# ---- export ---------------------------------------------------------------------------------


def rating_rows(run_id=None, model=None, tag=None, target=None):
    """Ratings as dicts (CSV column names), filtered; items in id order, streamed."""
    query = (
        Rating.select(
            Rating,
            Item.task_key.alias("task_key"),
            RunTarget.label.alias("label"),
            RunTarget.provider_name.alias("provider_name"),
            RunTarget.model.alias("model"),
            Run.run_id.alias("run_name"),
        )
        .join(Item, on=(Rating.item == Item.id))
        .join(RunTarget, on=(Item.target == RunTarget.id))
        .switch(Item)
        .join(Run, on=(Item.run == Run.id))
        .order_by(Item.id)
    )
    if run_id:
        query = query.where(Run.run_id == run_id)
    if model:
        query = query.where(RunTarget.model == model)
    if target:
        query = query.where(RunTarget.label == target)
    if tag:
        query = query.where(
            Rating.id.in_(RatingTag.select(RatingTag.rating).where(RatingTag.tag == tag))
        )
    for r in query.objects().iterator():
        yield {
            "run_id": r.run_name,
            "task_id": r.task_key,
            "target": r.label,
            "provider": r.provider_name,
            "model": r.model,
            "item_id": r.item_id,
            "rating": r.rating,
            "tags": r.tags or [],
            "notes": r.notes,
            "rated_at": isoformat(r.updated_at),
        }


def vote_rows(runs=None, source=None):
    """Votes as dicts (CSV column names), both targets in `runs` when given, oldest first."""
    lt, rt = RunTarget.alias("lt"), RunTarget.alias("rt")
    lr, rr = Run.alias("lr"), Run.alias("rr")
    query = (
        Vote.select(
            Vote,
            lt.label.alias("left_label"),
            rt.label.alias("right_label"),
            lr.run_id.alias("left_run"),
            rr.run_id.alias("right_run"),
        )
        .join(lt, on=(Vote.left_target == lt.id))
        .join(lr, on=(lt.run == lr.id))
        .switch(Vote)
        .join(rt, on=(Vote.right_target == rt.id))
        .join(rr, on=(rt.run == rr.id))
        .order_by(Vote.id)
    )
    if runs:
        pks = [r.id for r in runs]
        query = query.where(lt.run.in_(pks) & rt.run.in_(pks))
    if source:
        query = query.where(Vote.source == source)
    for vote in query.objects().iterator():
        yield {
            "task_id": vote.task_key,
            "left_run_id": vote.left_run,
            "left_target": vote.left_label,
            "right_run_id": vote.right_run,
            "right_target": vote.right_label,
            "winner": vote.winner,
            "winner_target": {LEFT: vote.left_label, RIGHT: vote.right_label}.get(vote.winner),
            "source": vote.source,
            "voter": vote.voter,
            "inconsistent": bool(vote.inconsistent),
            "left_item_id": vote.left_item_id,
            "right_item_id": vote.right_item_id,
            "voted_at": isoformat(vote.created_at),
        }


def _camel(name):
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def export_chunks(rows, columns, fmt):
    """Rows as text chunks of one format: JSON (an array), JSONL or CSV (CRLF, tags joined by
    ', ')."""
    if fmt == "csv":
        buffer = io.StringIO()
        writer = SafeWriter(buffer)
        writer.writerow(columns)
        for n, row in enumerate(rows, 1):
            values = (row[c] for c in columns)
            writer.writerow(
                [", ".join(v) if isinstance(v, list) else ("" if v is None else v) for v in values]
            )
            if n % 500 == 0:
                yield buffer.getvalue()
                buffer.seek(0)
                buffer.truncate()
        yield buffer.getvalue()
        return
    if fmt == "jsonl":
        for row in rows:
            yield json.dumps({_camel(c): row[c] for c in columns}, ensure_ascii=False) + "\n"
        return
    yield "["
    for n, row in enumerate(rows):
        yield (
            ("," if n else "")
            + "\n"
            + json.dumps({_camel(c): row[c] for c in columns}, ensure_ascii=False)
        )
    yield "\n]\n"


# ---- import ---------------------------------------------------------------------------------


def _records(text, fmt, what):
    """(line or record number, dict) from the text; ValidationError for a broken file."""
    if fmt == "csv":
        reader = csv.DictReader(io.StringIO(text))
        if not reader.fieldnames:
            raise ValidationError.field("file", "the CSV is empty: a header line comes first")
        start = 2
        for row in reader:
            # Our own export put a ' before formula-like cells (files/csvcells.py).
            yield start, {k: restore(v) for k, v in row.items() if k is not None}
            start = reader.line_num + 1
        return
    if fmt == "jsonl":
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                data = jsontext.loads(line)
            except ValueError as exc:
                raise ValidationError.field("file", f"not JSON ({exc.msg})", line=n) from None
            yield n, data
        return
    try:
        data = jsontext.loads(text) if text.strip() else []
    except ValueError as exc:
        raise ValidationError.field("file", f"not JSON ({exc.msg})", line=exc.lineno) from None
    if isinstance(data, dict):
        data = data.get(what)
    if not isinstance(data, list):
        raise ValidationError.field("file", f"a JSON array of {what} (or {{{what!r}: [...]}})")
    yield from enumerate(data, 1)


def _get(record, *names):
    for name in names:
        for key in (name, _camel(name)):
            if record.get(key) not in (None, ""):
                return record[key]
    return None


class _Matcher:
    """Finds the item a record names: run id, task id and target (label, else model)."""

    def __init__(self):
        self.runs = {}
        self.targets = {}

    def run(self, run_id):
        if run_id not in self.runs:
            self.runs[run_id] = Run.get_or_none(Run.run_id == run_id)
        return self.runs[run_id]

    def item(self, run_id, task_id, target, model, field_prefix=""):
        """(item, None) or (None, (field, message))."""
        if not run_id:
            return None, (f"{field_prefix}runId", "is required")
        if not task_id:
            return None, (f"{field_prefix}taskId" if not field_prefix else "taskId", "is required")
        run = self.run(str(run_id))
        if run is None:
            return None, (f"{field_prefix}runId", f"no run named {run_id!r}")
        if run.id not in self.targets:
            self.targets[run.id] = list(RunTarget.select().where(RunTarget.run == run))
        targets = self.targets[run.id]
        if target:
            found = [t for t in targets if t.label == str(target)]
        elif model:
            found = [t for t in targets if t.model == str(model)]
        else:
            found = targets
        if len(found) != 1:
            named = ", ".join(repr(t.label) for t in targets)
            why = "matches no target" if not found else "names more than one target"
            return None, (f"{field_prefix}target", f"{why} of run {run_id} (targets: {named})")
        item = Item.get_or_none(
            (Item.run == run) & (Item.target == found[0]) & (Item.task_key == str(task_id))
        )
        if item is None:
            return None, ("taskId", f"run {run_id} has no task {task_id!r} for {found[0].label!r}")
        return item, None


def _fail(errors, line, field, message, fmt):
    entry = {"field": field, "message": message}
    if fmt == "json":
        entry["field"] = f"[{line}].{field}"
    else:
        entry["line"] = line
    errors.append(entry)


def _checked(text, fmt, what, check):
    """Every record checked; ValidationError with all problems, else the checked records."""
    errors, checked = [], []
    for line, record in _records(text, fmt, what):
        if len(checked) + len(errors) >= MAX_RECORDS:
            raise ValidationError.field("file", f"at most {MAX_RECORDS} records per import")
        if not isinstance(record, dict):
            _fail(errors, line, "record", "must be an object", fmt)
            continue
        problems = []
        value = check(record, problems, line)
        for field, message in problems:
            _fail(errors, line, field, message, fmt)
        if not problems:
            checked.append(value)
    if errors:
        raise ValidationError(errors[:200])
    return checked


def import_ratings(text, fmt, now=None):
    """Store every rating of the file or none; returns how many were stored."""
    fmt = parse_format(fmt)
    matcher = _Matcher()

    def check(record, problems, _line):
        item, problem = matcher.item(
            _get(record, "run_id"),
            _get(record, "task_id"),
            _get(record, "target"),
            _get(record, "model"),
        )
        if problem:
            problems.append(problem)
        elif item.answered_at is None:
            problems.append(("taskId", f"the item of task {item.task_key!r} has no answer to rate"))
        values = []
        for name, clean in (("rating", clean_rating), ("tags", clean_tags), ("notes", clean_notes)):
            raw = _get(record, name)
            try:
                values.append(clean(raw if raw is not None else None))
            except ValidationError as exc:
                problems += [(e["field"], e["message"]) for e in exc.errors]
        return (item, *values) if not problems else None

    records = _checked(text, fmt, "ratings", check)
    now = now or utcnow()
    with database.atomic():
        for item, rating, tags, notes in records:
            save_rating(item, rating, tags, notes, now)
    return len(records)


def import_votes(text, fmt, now=None):
    """Store every vote of the file or none; a vote already stored the same way is skipped.
    Returns {"stored", "skipped"}."""
    fmt = parse_format(fmt)
    matcher = _Matcher()
    seen = {}

    def check(record, problems, line):
        task = _get(record, "task_id")
        sides = []
        for side in ("left", "right"):
            item, problem = matcher.item(
                _get(record, f"{side}_run_id"),
                task,
                _get(record, f"{side}_target"),
                _get(record, f"{side}_model"),
                field_prefix=f"{side}_" if fmt == "csv" else side,
            )
            if problem:
                problems.append(problem)
            sides.append(item)
        winner = str(_get(record, "winner") or "").strip().upper()
        if winner not in WINNERS:
            problems.append(("winner", "must be LEFT, RIGHT or TIE"))
        voter = str(_get(record, "voter") or HUMAN).strip()
        if voter != HUMAN and not voter.startswith("judge:"):
            problems.append(("voter", 'must be "human" or "judge:<provider>/<model>"'))
        if problems:
            return None
        left, right = sides
        if left.target_id == right.target_id:
            problems.append(("right_target", "compare two different targets"))
            return None
        key = (min(left.id, right.id), max(left.id, right.id), voter)
        inconsistent = str(_get(record, "inconsistent") or "").lower() in ("true", "1", "yes")
        if key in seen:
            problems.append(("task_id", f"this pair and voter come already at {seen[key]}"))
            return None
        existing = Vote.get_or_none(
            (Vote.item_low == key[0]) & (Vote.item_high == key[1]) & (Vote.voter == voter)
        )
        if existing is not None:
            same = {LEFT: left.id, RIGHT: right.id}.get(winner)
            stored = {LEFT: existing.left_item_id, RIGHT: existing.right_item_id}.get(
                existing.winner
            )
            if same != stored:
                problems.append(("winner", f"{voter} already voted otherwise on this pair"))
                return None
            return "skip"
        seen[key] = line
        return (left, right, winner, voter, inconsistent)

    records = _checked(text, fmt, "votes", check)
    now = now or utcnow()
    stored = 0
    with database.atomic():
        for record in records:
            if record == "skip":
                continue
            left, right, winner, voter, inconsistent = record
            Vote.create(**vote_row(left, right, winner, voter, now=now, inconsistent=inconsistent))
            stored += 1
    return {"stored": stored, "skipped": len(records) - stored}
