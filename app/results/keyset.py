"""The results table's sorts as index walks: keyset pages, never an OFFSET over the run.

Every sort is a list of *segments*, each read in the order of one index of the run's items:

- an item column (task, category, status): one segment, (run_id, columns…, id);
- a column that may be empty (time, TTFT, tokens, tok/s, score, cost): the items that have it,
  then the ones that do not (empty last both ways, as before), each an index range;
- model: one segment per target, in (provider, label, target) order, each in id order;
- difficulty: one segment per difficulty value (easy, medium, hard, then any other value A→Z),
  each in (task, id) order — the values are found by a skip over the index, not a scan.

A page after an item (the cursor is its id: the URL stays short and shareable) seeks that
item's place in its segment with a row-value comparison `(columns…, id) > (…)` and reads on,
into the next segments if it must. A page before an item walks the same segments backwards.
Only a page named by number alone (`?page=N` typed or bookmarked) still skips rows, and it
walks from whichever end is nearer, over the index only (a segment it skips whole is counted).
"""

from dataclasses import dataclass

from peewee import SQL
from peewee import fn

from ..db.connection import database
from ..db.models import DIFFICULTIES
from ..db.models import ITEM_STATUSES
from ..errors import ValidationError
from ..runs.outcomes import I
from ..runs.outcomes import T

# URL sort name -> the item columns ordering a segment (id breaks ties, in the same direction).
COLUMNS = {
    "task": (I.task_key,),
    "category": (I.category, I.task_key),
    "difficulty": (I.task_key,),  # within one difficulty value
    "model": (),  # within one target
    "status": (I.status,),
    "time": (I.time_taken_ms,),
    "ttft": (I.ttft_ms,),
    "tokens": (I.tokens_generated,),
    "tps": (I.tokens_per_second,),
    "score": (I.evaluation_score,),
    "cost": (I.cost_usd,),
}
SORTS = tuple(COLUMNS)
# The index each sort reads (Item's indexes, db/models.py). On SQLite the walk names it (INDEXED
# BY): with a filter the planner may prefer the filter's index and read it past every match of
# another target or value; the walk only runs when matches are dense (table.SMALL_SET).
INDEXES = {
    "task": "item_run_id_task_key",
    "category": "item_run_id_category_task_key",
    "difficulty": "item_run_id_difficulty_task_key",
    "model": "item_target_id",
    "status": "item_run_id_status",
    "time": "item_run_id_time_taken_ms",
    "ttft": "item_run_id_ttft_ms",
    "tokens": "item_run_id_tokens_generated",
    "tps": "item_run_id_tokens_per_second",
    "score": "item_run_id_evaluation_score",
    "cost": "item_run_id_cost_usd",
}
# The sorts whose column may be empty: its empty items come last, whichever the direction.
NULLABLE = {"time", "ttft", "tokens", "tps", "score", "cost"}


@dataclass(frozen=True)
class Segment:
    """Items where `column` equals `value` (None: every item; for a nullable sort, `value` is
    True for "has one" and False for "empty"), read in `columns` + id order."""

    column: object
    value: object
    columns: tuple
    bounds: tuple = (None, None)  # the score sort's min/max score filter, as a range of it

    def where(self):
        if self.column is None:
            return None
        if isinstance(self.value, bool):
            return self.column.is_null(not self.value)
        return self.column == self.value

    def holds(self, row):
        if self.column is None:
            return True
        found = row[self.column.name]
        if isinstance(self.value, bool):
            return (found is not None) == self.value
        return found == self.value

    def key(self, row):
        return (*(row[c.name] for c in self.columns), row["id"])


def segments(run, sort, desc, filters=None, targets=None):
    """The sort's segments in reading order for this direction. A filter on the segments' own
    column keeps only the segments it allows (`targets`: the model filter's target ids), and a
    filter that pins the sort's first column (category, status) makes it one segment of that
    value, read by the rest."""
    columns = COLUMNS[sort]
    pinned = (filters or {}).get(sort)
    if (sort == "category" and pinned) or (sort == "status" and pinned in ITEM_STATUSES):
        return [Segment(columns[0], pinned, columns[1:])]
    if sort == "model":
        query = T.select(T.id).where(T.run == run).order_by(T.provider_name, T.label, T.id)

        def allowed(target):
            return targets is None or target in targets

        found = [Segment(I.target, t, ()) for (t,) in query.tuples() if allowed(t)]
    elif sort == "difficulty":
        values = [pinned] if pinned else _difficulties(run)
        ranked = [d for d in DIFFICULTIES if d in values]
        ranked += sorted(v for v in values if v not in DIFFICULTIES)
        found = [Segment(I.difficulty, v, columns) for v in ranked]
    elif sort in NULLABLE:
        (column,) = columns
        scored = {"min_score", "max_score"} & set(filters or {})
        if sort == "score" and scored:  # a score range has no empty scores
            bounds = (filters.get("min_score"), filters.get("max_score"))
            return [Segment(column, True, columns, bounds)]
        return [Segment(column, True, columns), Segment(column, False, ())]
    else:
        return [Segment(None, None, columns)]
    return found[::-1] if desc else found


def _difficulties(run):
    """The run's distinct difficulty values: one index seek per value (a loose index scan)."""
    values = []
    while True:
        query = I.select(fn.MIN(I.difficulty)).where(I.run == run)
        if values:
            query = query.where(I.difficulty > values[-1])
        value = query.scalar()
        if value is None:
            return values
        values.append(value)


def cursor_row(run, item_id, sort, name="after"):
    """The cursor item's sort key (its id names it in the URL); 400 if not in this run."""
    query = I.select(I.id, *_key_fields(sort)).where((I.run == run) & (I.id == item_id))
    row = query.dicts().first()
    if row is None:
        raise ValidationError.field(name, f"item {item_id} is not in this run")
    return row


def walk(cond, order, desc, limit, start=None, offset=0, index=None):
    """Up to `limit` item ids matching `cond`, in the order of the segments `order` read in
    direction `desc`: from the start, after `offset` of them, or after the row `start`; by
    the index named `index` on SQLite."""
    ids = []
    first = 0
    key = None
    if start is not None:
        first = next((n for n, s in enumerate(order) if s.holds(start)), len(order))
        key = order[first].key(start) if first < len(order) else None
    for n in range(first, len(order)):
        segment = order[n]
        if offset:
            (query,) = seek_queries(cond, segment, desc, index=index)
            found = [i for (i,) in query.limit(limit - len(ids)).offset(offset).tuples()]
            if not found:
                # The whole segment lies before the page: count it (over the index) and skip it.
                offset = max(0, offset - query.order_by().count())
                continue
            offset = 0
            ids += found
        else:
            for query in seek_queries(cond, segment, desc, key if n == first else None, index):
                ids += [i for (i,) in query.limit(limit - len(ids)).tuples()]
                if len(ids) >= limit:
                    return ids
        if len(ids) >= limit:
            break
    return ids


def sorted_ids(rows, order, desc, limit, start=None, offset=0):
    """`walk` over rows already read (a small filtered set: table.SMALL_SET at most): the same
    segments and keys, sorted here instead of read in index order."""
    groups = [[] for _ in order]
    which = _segment_of(order)
    for row in rows:
        n = which(row)
        if n is not None:
            groups[n].append(row)
    first = 0
    if start is not None:
        first = which(start)
        if first is None:
            return []
    ids = []
    wanted = offset + limit
    for n in range(first, len(order)):
        segment = order[n]
        held = sorted(groups[n], key=segment.key, reverse=desc)
        if start is not None and n == first:
            at = segment.key(start)
            held = [r for r in held if (segment.key(r) < at if desc else segment.key(r) > at)]
        ids += [row["id"] for row in held[: wanted - len(ids)]]
        if len(ids) >= wanted:
            break
    return ids[offset:wanted]


def _segment_of(order):
    """A function giving the number of the segment of `order` that holds a row (None if
    none): a look-up by the segments' one column, not each segment's test in turn (a few
    thousand rows times every target or value)."""
    names = {None if s.column is None else s.column.name for s in order}
    if len(names) != 1 or None in names:
        return lambda row: next((n for n, s in enumerate(order) if s.holds(row)), None)
    (name,) = names
    if all(isinstance(s.value, bool) for s in order):
        has = {s.value: n for n, s in enumerate(order)}
        return lambda row: has.get(row[name] is not None)
    numbers = {s.value: n for n, s in enumerate(order)}
    return lambda row: numbers.get(row[name])


def key_rows(cond, sort):
    """keys_query's rows as dicts, read as the database gives them (ints, floats, text: what
    the sort keys hold): a filter's small set is read on every view, and peewee's conversion
    of each value was most of its time."""
    query = keys_query(cond, sort)
    names = [column.name for column in query.selected_columns]
    return [dict(zip(names, row, strict=True)) for row in database.execute_sql(*query.sql())]


def keys_query(cond, sort):
    """Every matching item's id and sort keys (the small-set path reads them by the filter's
    own index, then sorts them in Python)."""
    return I.select(I.id, *_key_fields(sort)).where(cond)


def _key_fields(sort):
    names = {c.name for c in COLUMNS[sort]} | {"target", "difficulty"}
    return [getattr(I, n) for n in sorted(names)]


def seek_queries(cond, segment, desc, key=None, index=None):
    """The queries that read `segment` in order, after `key` if given. A key (c1…cn, id) is
    sought as n + 1 exact index seeks, read one after the other: the rest of its ties
    (c1…cn equal, id past it), then c1…cn-1 equal and cn past it, …, then c1 past it. (One
    row-value comparison `(c1…, id) > (…)` only seeks on c1…cn in SQLite: the ties of a
    column with few values — status, cost — would be walked from their start.)"""
    columns = (*segment.columns, I.id)
    lead = _lead(segment)
    if key is None:
        query = _bounded(_segment_base(cond, segment, False, index, lead), segment)
        return [_ordered(query, (*lead, *columns), desc)]
    queries = []
    for k in range(len(columns) - 1, -1, -1):
        query = _segment_base(cond, segment, True, index, lead)
        for column, value in zip(columns[:k], key[:k], strict=False):
            query = query.where(column == value)
        if k == 0:  # (with the column equal, its range would only hide the seek)
            query = _bounded(query, segment)
        past = columns[k] < key[k] if desc else columns[k] > key[k]
        queries.append(_ordered(query.where(past), (*lead, *columns[k:]), desc))
    return queries


def _lead(segment):
    """PostgreSQL: the segment's own column, ordered by first, where the segment's order does
    not begin with it (one target's items in id order, one status's, the empty scores).

    Ordered by id alone, those read the primary key's index in id order, filtered: PostgreSQL
    takes a run's matches as spread evenly over the ids, but a run's items are made target by
    target, so one target's page walked past every item of the targets before it (75 000 rows
    at 300 000 items; 260 ms for the model sort's first page at 1 000 000). Led by the column,
    only the segment's index (it ends with the id) gives the order; SQLite names that
    index instead (INDEXED BY)."""
    column = segment.column
    if not database.is_postgres or column is None:
        return ()
    if segment.columns and segment.columns[0] is column:  # (`is`: a field's == builds SQL)
        return ()
    return (column,)


def _segment_base(cond, segment, keyed, index, lead):
    query = I.select(I.id).where(cond)
    if index and not database.is_postgres:
        query = query.from_(SQL(f'"item" AS "t1" INDEXED BY "{index}"'))
    where = segment.where()
    if lead and not isinstance(segment.value, bool):
        # The value as a range: PostgreSQL drops an ORDER BY column that = fixes, and with it
        # the lead (above).
        where = (segment.column >= segment.value) & (segment.column <= segment.value)
    if where is not None and not (keyed and segment.value is True):
        # (A key on a value already says "has one": IS NOT NULL would only hide the seek.)
        query = query.where(where)
    return query


def _bounded(query, segment):
    low, high = segment.bounds
    if low is not None:
        query = query.where(segment.column >= low)
    if high is not None:
        query = query.where(segment.column <= high)
    return query


def _ordered(query, columns, desc):
    return query.order_by(*(c.desc() if desc else c.asc() for c in columns))
