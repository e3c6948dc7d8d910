"""The detailed results table: whitelisted URL state, filters, sorted and paginated in SQL."""

import math
from array import array
from dataclasses import dataclass
from dataclasses import field

from peewee import SQL
from peewee import fn

from ..db.connection import database
from ..db.connection import in_values
from ..db.connection import tuples_once
from ..db.models import ITEM_STATUSES
from ..errors import ValidationError
from ..ids import digits_number
from ..runs.counts import count_in
from ..runs.outcomes import FAILED_STATUSES
from ..runs.outcomes import IS_ANSWER_FAILED
from ..runs.outcomes import IS_JUDGE_FAILED
from ..runs.outcomes import I
from ..runs.outcomes import T
from ..runs.retries import retryable_in
from .kept import item_reads
from .kept import stamp
from .keyset import INDEXES
from .keyset import SORTS
from .keyset import cursor_row
from .keyset import key_rows
from .keyset import segments
from .keyset import sorted_ids
from .keyset import walk
from .recent import Recent

JUDGE_FAILED = "judge_failed"
ANSWER_FAILED = "answer_failed"
STATUS_FILTERS = ITEM_STATUSES + (JUDGE_FAILED, ANSWER_FAILED)
PER_PAGE_CHOICES = (25, 50, 100, 200)
DEFAULT_PER_PAGE = 50
# A filter matching at most this many items sorts them in memory (keyset.sorted_ids); more,
# and they are dense enough that walking the sort's index finds a page quickly.
SMALL_SET = 5000
DEFAULT_SORT = "model"
PREVIEW_CHARS = 300


@dataclass
class ResultsPage:
    """One page of the detailed table and the state that produced it.

    `after` / `before` are the item ids its Next / Previous links continue from (keyset.py)."""

    rows: list
    total: int
    page: int
    pages: int
    per_page: int
    sort: str
    dir: str
    filters: dict = field(default_factory=dict)
    has_prev: bool = False
    has_next: bool = False

    @property
    def first_index(self):
        return (self.page - 1) * self.per_page + 1 if self.rows else 0

    @property
    def last_index(self):
        return min(self.total, (self.page - 1) * self.per_page + len(self.rows))

    @property
    def after(self):
        return self.rows[-1]["id"] if self.rows else None

    @property
    def before(self):
        return self.rows[0]["id"] if self.rows else None


def parse_table_args(args):
    """Whitelist the table's query parameters; ValidationError names every bad one."""
    errors = []
    get = args.get
    sort = (get("sort") or DEFAULT_SORT).strip()
    direction = (get("dir") or "asc").strip().lower()
    if sort.startswith("-"):
        sort, direction = sort[1:], "desc"
    if sort not in SORTS:
        errors.append({"field": "sort", "message": f"must be one of {', '.join(SORTS)}"})
    if direction not in ("asc", "desc"):
        errors.append({"field": "dir", "message": "must be asc or desc"})
    page = _int_arg(get("page"), "page", 1, errors, minimum=1)
    per_page = _int_arg(get("per_page"), "per_page", DEFAULT_PER_PAGE, errors, minimum=1)
    if per_page not in PER_PAGE_CHOICES and not any(e["field"] == "per_page" for e in errors):
        errors.append(
            {
                "field": "per_page",
                "message": f"must be one of {', '.join(map(str, PER_PAGE_CHOICES))}",
            }
        )
    cursors = {}
    for name in ("after", "before"):
        if (get(name) or "").strip():
            cursors[name] = _int_arg(get(name), name, None, errors, minimum=1)
    if len(cursors) > 1:
        errors.append({"field": "before", "message": "give after or before, not both"})
    filters = {}
    for name in ("model", "category", "difficulty"):
        value = (get(name) or "").strip()
        if value:
            filters[name] = value
    status = (get("status") or "").strip()
    if status:
        if status not in STATUS_FILTERS:
            errors.append(
                {"field": "status", "message": f"must be one of {', '.join(STATUS_FILTERS)}"}
            )
        filters["status"] = status
    for name in ("min_score", "max_score"):
        raw = (get(name) or "").strip()
        if raw:
            try:
                value = float(raw)
                if not math.isfinite(value) or not 0 <= value <= 100:
                    raise ValueError(raw)
                filters[name] = value
            except ValueError:
                errors.append({"field": name, "message": "must be a number between 0 and 100"})
    if errors:
        raise ValidationError(errors)
    return {
        "sort": sort,
        "dir": direction,
        "page": page,
        "per_page": per_page,
        "filters": filters,
        **cursors,
    }


def _int_arg(raw, name, default, errors, minimum):
    raw = (raw or "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = None
    if value is None or value < minimum or value >= 2**63:
        errors.append({"field": name, "message": f"must be a whole number ≥ {minimum}"})
        return default
    return value


def _targets(run, model):
    """The run's targets a `model` filter names: a target id (what the page's own select
    sends), a model name (`?model=llama3`, as people type it) or "provider/model"; a model name
    may hold "/" itself."""
    model = str(model)
    which = (T.model == model) | (T.provider_name.concat("/").concat(T.model) == model)
    if digits_number(model) is not None:
        which |= T.id == digits_number(model)
    return T.select(T.id).where((T.run == run) & which)


def _total(run, filters, cond, targets):
    """How many items the filters match: from the kept counts (runs/counts.py) when they filter
    by model and status only, else counted (over one of Item's indexes, db/models.py)."""
    if not set(filters) <= {"model", "status"}:
        return count_query(cond).scalar() or 0
    status = filters.get("status")
    if status == JUDGE_FAILED:
        return _kept_count(run, targets, FAILED_STATUSES, stage="judge")
    if status == ANSWER_FAILED:
        return _kept_count(run, targets, FAILED_STATUSES, stage="answer")
    return _kept_count(run, targets, (status,) if status else None)


def _kept_count(run, targets, statuses, stage=None):
    """counts.count_items from the kept counts as the page's stamp read them (kept.item_reads,
    once a page): no statement of its own."""
    return count_in(item_reads(run)[1], targets, statuses, stage)


def category_total(by_category, filters):
    """How many items a category filter alone matches, from the run's category breakdown
    (averages.breakdown: each cell's item_count counts every item of its category and target,
    whatever its status), or None for other filters. The full results page reads that
    breakdown anyway (a kept figure), so its filtered table needs no count of its own: one over
    the category's index entries is a fifth of the run (20 000 at 100 000 items), and
    PostgreSQL counts them several times slower than SQLite (4.5 against 1.7 ms at best)."""
    if set(filters) != {"category"}:
        return None
    for row in by_category["rows"]:
        if row["key"] == filters["category"]:
            return sum(cell["item_count"] for cell in row["cells"])
    return 0


def retryable_answers(run):
    """How many items "Retry failed answers" would ask again, from the kept counts the page's
    stamp reads anyway (kept.item_reads): a count of its own was one more statement a view."""
    return retryable_in(item_reads(run)[1])


def count_query(cond):
    """How many items match `cond`. COUNT(*), not COUNT(id): PostgreSQL (before 18) does not
    count a NOT NULL column as rows, so it read every match's row for its id where the filter's
    index lacks one (model and score: 118 000 rows, 340 ms at 1 000 000 items, against 25 ms
    from the index alone)."""
    return I.select(fn.COUNT(SQL("*"))).where(cond)


def _conditions(run, filters, score="index", targets=None):
    """The filters' WHERE. The score range as it is (`score="index"`), written so that no index
    serves it (`"hidden"`, `+ 0`: the page walks its sort's index rather than sorting a score
    range), or left out (`"none"`: the score sort's segment holds it as its range). `targets`:
    the model filter's target ids when already read."""
    cond = I.run == run
    model = filters.get("model")
    if model:
        cond &= I.target.in_(targets if targets is not None else _targets(run, model))
    status = filters.get("status")
    if status == JUDGE_FAILED:
        cond &= IS_JUDGE_FAILED
    elif status == ANSWER_FAILED:
        cond &= IS_ANSWER_FAILED
    elif status:
        cond &= I.status == status
    if filters.get("category"):
        cond &= I.category == filters["category"]
    if filters.get("difficulty"):
        cond &= I.difficulty == filters["difficulty"]
    column = I.evaluation_score if score == "index" else I.evaluation_score + 0
    if score != "none" and filters.get("min_score") is not None:
        cond &= column >= filters["min_score"]
    if score != "none" and filters.get("max_score") is not None:
        cond &= column <= filters["max_score"]
    return cond


# The small sets' ids in page order, of a few runs and filters, by the run's stamp (kept.py):
# each view of a filtered set read every match's row (1 000 judge failures at 100 000 items:
# 8 ms, more than the rest of the table). Ids only (a few KB), not rows: memory stays flat.
_small_sets = Recent(16)


def _small_set(run, cond, sort, desc, filters, order):
    """The ids of the items `cond` matches (table.SMALL_SET at most) in the order of the
    segments `order` in direction `desc` (keyset.sorted_ids), kept while the run's stamp holds."""
    key = (database.database, run.id, stamp(run), sort, desc, repr(sorted(filters.items())))
    ordered = _small_sets.get(key)
    if ordered is None:
        rows = key_rows(cond, sort)
        ordered = array("q", sorted_ids(rows, order, desc, len(rows)))
        _small_sets.put(key, ordered)
    return ordered


# The table's columns of one page of items, as each row names them.
ROW_COLUMNS = (
    "id",
    "task_key",
    "category",
    "difficulty",
    "status",
    "error_stage",
    "attempts",
    "error_preview",
    "time_taken_ms",
    "ttft_ms",
    "tokens_generated",
    "tokens_estimated",
    "tokens_per_second",
    "evaluation_score",
    "cost_usd",
    "reason_preview",
    "reason_truncated",
    "target_id",
    "provider_name",
    "model",
    "label",
)


def _rows_query(count):
    """The SELECT of ROW_COLUMNS for `count` item ids (bound in order); the preview length
    written into the SQL, so the ids are its only values."""
    preview = SQL(str(PREVIEW_CHARS))
    return (
        I.select(
            I.id,
            I.task_key,
            I.category,
            I.difficulty,
            I.status,
            I.error_stage,
            I.attempts,
            fn.SUBSTR(I.error_msg, SQL("1"), preview).alias("error_preview"),
            I.time_taken_ms,
            I.ttft_ms,
            I.tokens_generated,
            I.tokens_estimated,
            I.tokens_per_second,
            I.evaluation_score,
            I.cost_usd,
            fn.SUBSTR(I.evaluation_reason, SQL("1"), preview).alias("reason_preview"),
            (fn.LENGTH(I.evaluation_reason) > preview).alias("reason_truncated"),
            I.target.alias("target_id"),
            T.provider_name,
            T.model,
            T.label,
        )
        .join(T, on=(I.target == T.id))
        .where(in_values(I.id, [0] * count))
    )


def _page_rows(ids):
    """The page's rows (dicts of ROW_COLUMNS) in the order of `ids`. Its SQL is built once per
    page size (connection.tuples_once): peewee wrote the 21 columns' SQL anew on every view."""
    if not ids:
        return []
    found = tuples_once(("results page rows", len(ids)), lambda: _rows_query(len(ids)), ids)
    by_id = {row[0]: dict(zip(ROW_COLUMNS, row, strict=True)) for row in found}
    return [by_id[item_id] for item_id in ids if item_id in by_id]


def results_page(
    run,
    sort=DEFAULT_SORT,
    filters=None,
    page=1,
    per_page=DEFAULT_PER_PAGE,
    direction="asc",
    after=None,
    before=None,
    total=None,
):
    """One page of items (only the table's columns), sorted, filtered and paged in SQL.

    The count is `total` when the caller knows it (category_total), else it comes from the
    kept counts where it can; the page's ids from index walks
    (keyset.py): after the item `after`, before the item `before`, or page `page` counted from
    the nearer end; then one query reads this page's rows.
    """
    filters = dict(filters or {})
    if sort.startswith("-"):
        sort, direction = sort[1:], "desc"
    if sort not in SORTS:
        raise ValidationError.field("sort", f"must be one of {', '.join(SORTS)}")
    desc = direction == "desc"
    targets = None
    if filters.get("model"):
        targets = [t for (t,) in _targets(run, filters["model"]).tuples()]
    cond = _conditions(run, filters, targets=targets)
    if total is None:
        total = _total(run, filters, cond, targets)
    pages = max(1, math.ceil(total / per_page))
    page = min(max(1, page), pages)
    ahead = segments(run, sort, desc, filters, targets)
    back = [*reversed(ahead)]
    if filters and total <= SMALL_SET:
        # Few matches: read them all by the filter's own index and sort them here (kept per
        # state of the run); walking the sort's index for them could pass most of the run.
        ordered = _small_set(run, cond, sort, desc, filters, ahead)

        def read(order, desc, limit, start=None, offset=0):
            found = ordered if order is ahead else ordered[::-1]
            if start is not None:
                try:
                    found = found[found.index(start["id"]) + 1 :]
                except ValueError:  # a cursor outside the filter (the filter changed): by its key
                    return sorted_ids(key_rows(cond, sort), order, desc, limit, start, offset)
            return found[offset : offset + limit].tolist()
    else:
        score = "none" if sort == "score" else "hidden"
        cond = _conditions(run, filters, score, targets)

        def read(order, desc, limit, start=None, offset=0):
            return walk(cond, order, desc, limit, start, offset, INDEXES[sort])

    if after is not None:
        ids = read(ahead, desc, per_page + 1, start=cursor_row(run, after, sort))
        has_prev, has_next = True, len(ids) > per_page
        ids = ids[:per_page]
        page = max(page, min(2, pages))
    elif before is not None:
        ids = read(back, not desc, per_page + 1, start=cursor_row(run, before, sort, "before"))
        has_prev, has_next = len(ids) > per_page, True
        ids = ids[:per_page][::-1]
        page = min(page, pages - 1) if has_prev else 1
    else:
        skipped = (page - 1) * per_page
        end = min(total, page * per_page)
        if skipped <= total - end:
            ids = read(ahead, desc, per_page, offset=skipped)
        else:  # nearer the end: walk the segments backwards
            ids = read(back, not desc, end - skipped, offset=total - end)[::-1]
        has_prev, has_next = page > 1, page < pages
    rows = _page_rows(ids)
    for row in rows:
        row["judge_failed"] = row["status"] in FAILED_STATUSES and row["error_stage"] == "judge"
    return ResultsPage(
        rows=rows,
        total=total,
        page=page,
        pages=pages,
        per_page=per_page,
        sort=sort,
        dir=direction,
        filters=filters,
        has_prev=has_prev,
        has_next=has_next,
    )
