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
from .people import is_person
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
    "rater",
)
# What an import needs: the item (run, task; target or model names it when the run has more
# than one) and the rating itself. A missing tags or notes column leaves them unchanged.
RATING_REQUIRED = ("run_id", "task_id", "rating")
RATING_KNOWN = RATING_COLUMNS
VOTE_REQUIRED = ("task_id", "left_run_id", "right_run_id", "winner")
CLEAR = "clear"  # a cell that empties its field (an empty cell leaves it as it was)
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
VOTE_KNOWN = (*VOTE_COLUMNS, "left_model", "right_model")
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
            "rater": r.rater,
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


def _header_problems(names, known, required):
    """Problems with a file's column names (CSV header, or a JSON record's keys): an unknown
    or misspelled one (a stray space included), a required one missing, one given twice."""
    expected = ", ".join(known)
    accepted = {n: n for n in known} | {_camel(n): n for n in known}
    problems, seen = [], set()
    for name in names:
        column = accepted.get(name)
        if column is None:
            problems.append((repr(name), f"unknown column; the columns are {expected}"))
        elif column in seen:
            problems.append((name, "comes twice"))
        seen.add(column)
    for name in required:
        if name not in seen:
            problems.append((name, f"is missing; the columns are {expected}"))
    return problems


def _records(text, fmt, what, known=None, required=()):
    """(line or record number, dict) from the text; ValidationError for a broken file, or for
    a CSV header that is not right (checked before any row is read)."""
    if fmt == "csv":
        reader = csv.reader(io.StringIO(text))
        header = next(reader, None)
        if not header:
            raise ValidationError.field("file", "the CSV is empty: a header line comes first")
        if known is not None:
            problems = _header_problems(header, known, required)
            if problems:
                raise ValidationError([{"field": f, "message": m, "line": 1} for f, m in problems])
        start = 2
        for row in reader:
            if not row:
                start = reader.line_num + 1
                continue
            if len(row) != len(header):
                raise ValidationError.field(
                    "row",
                    f"has {len(row)} cells, the header has {len(header)}: nothing was imported",
                    line=start,
                )
            # Our own export put a ' before formula-like cells (files/csvcells.py).
            yield start, {k: restore(v) for k, v in zip(header, row, strict=True)}
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


def _checked(text, fmt, what, check, known=None, required=()):
    """Every record checked; ValidationError with all problems, else the checked records.
    JSON and JSONL records have their keys checked as a CSV header is."""
    errors, checked = [], []
    for line, record in _records(text, fmt, what, known, required):
        if len(checked) + len(errors) >= MAX_RECORDS:
            raise ValidationError.field("file", f"at most {MAX_RECORDS} records per import")
        if not isinstance(record, dict):
            _fail(errors, line, "record", "must be an object", fmt)
            continue
        problems = _header_problems(record, known, required) if fmt != "csv" and known else []
        if not problems:
            check(record, problems, line, checked)
        for field, message in problems:
            _fail(errors, line, field, message, fmt)
    if errors:
        raise ValidationError(errors[:200])
    return checked


def _cell(record, name):
    """A field of a record: None when absent or empty (unchanged), CLEAR, or the value."""
    for key in (name, _camel(name)):
        if key in record:
            value = record[key]
            if value is None or (isinstance(value, str) and not value.strip()):
                return None
            if isinstance(value, str) and value.strip().lower() == CLEAR:
                return CLEAR
            return value
    return None


def _person(value, default, problems):
    """The rater or voter a record names (a person), else `default`."""
    name = str(value).strip() if value not in (None, "") else default
    if not is_person(name):
        problems.append(("rater", 'must be "human" or "human:<account name>"'))
    return name


def import_ratings(text, fmt, now=None, person=HUMAN):
    """Store every rating of the file or none; returns how many records were read.

    The header (a CSV's first line, a JSON record's keys) is checked first. An empty cell
    leaves that field as it was; `clear` empties it. A record without a rater is `person`'s.
    """
    fmt = parse_format(fmt)
    matcher = _Matcher()
    seen = {}

    def check(record, problems, line, checked):
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
        rater = _person(_cell(record, "rater"), person, problems)
        values = {}
        for name, clean in (("rating", clean_rating), ("tags", clean_tags), ("notes", clean_notes)):
            raw = _cell(record, name)
            if raw is None:
                continue  # empty: unchanged
            try:
                values[name] = clean(None) if raw == CLEAR else clean(raw)
            except ValidationError as exc:
                problems += [(e["field"], e["message"]) for e in exc.errors]
        if problems:
            return
        key = (item.id, rater)
        if key in seen:
            where = "record" if fmt == "json" else "line"
            problems.append(("task_id", f"this item and rater come already at {where} {seen[key]}"))
            return
        seen[key] = line
        checked.append((item, rater, values))

    records = _checked(text, fmt, "ratings", check, RATING_KNOWN, RATING_REQUIRED)
    now = now or utcnow()
    with database.atomic():
        for item, rater, values in records:
            current = Rating.get_or_none((Rating.item == item.id) & (Rating.rater == rater))
            was = {
                "rating": current.rating if current else None,
                "tags": (current.tags or []) if current else [],
                "notes": current.notes if current else "",
            }
            was.update(values)
            save_rating(
                item,
                was["rating"],
                was["tags"],
                was["notes"],
                now,
                rater=rater,
                changed_by=person,
            )
    return len(records)


def import_votes(text, fmt, now=None, person=HUMAN):
    """Store every vote of the file or none; a vote already stored the same way is skipped.
    Returns {"stored", "skipped"}. The header is checked first; a vote without a voter is
    `person`'s."""
    fmt = parse_format(fmt)
    matcher = _Matcher()
    seen = {}

    def check(record, problems, line, checked):
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
        voter = str(_get(record, "voter") or person).strip()
        if not is_person(voter) and not voter.startswith("judge:"):
            problems.append(
                ("voter", 'must be "human", "human:<account name>" or "judge:<provider>/<model>"')
            )
        if problems:
            return
        left, right = sides
        if left.target_id == right.target_id:
            problems.append(("right_target", "compare two different targets"))
            return
        key = (min(left.id, right.id), max(left.id, right.id), voter)
        inconsistent = str(_get(record, "inconsistent") or "").lower() in ("true", "1", "yes")
        if key in seen:
            problems.append(("task_id", f"this pair and voter come already at {seen[key]}"))
            return
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
                return
            checked.append("skip")
            return
        seen[key] = line
        checked.append((left, right, winner, voter, inconsistent))

    records = _checked(text, fmt, "votes", check, VOTE_KNOWN, VOTE_REQUIRED)
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
