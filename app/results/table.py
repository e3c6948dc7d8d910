"""The detailed results table: whitelisted URL state, filters, sorted and paginated in SQL."""

import math
from dataclasses import dataclass
from dataclasses import field

from peewee import Case
from peewee import fn

from ..errors import ValidationError
from ..models import DIFFICULTIES
from ..models import ITEM_STATUSES
from ..runs.counts import count_items
from ..runs.outcomes import FAILED_STATUSES
from ..runs.outcomes import IS_ANSWER_FAILED
from ..runs.outcomes import IS_JUDGE_FAILED
from ..runs.outcomes import I
from ..runs.outcomes import T

JUDGE_FAILED = "judge_failed"
ANSWER_FAILED = "answer_failed"
STATUS_FILTERS = ITEM_STATUSES + (JUDGE_FAILED, ANSWER_FAILED)
PER_PAGE_CHOICES = (25, 50, 100, 200)
DEFAULT_PER_PAGE = 50
DEFAULT_SORT = "model"
PREVIEW_CHARS = 300

_DIFFICULTY_ORDER = Case(
    I.difficulty, [(d, n) for n, d in enumerate(DIFFICULTIES)], len(DIFFICULTIES)
)

# URL sort name -> columns, then a stable tiebreak on id.
SORTS = {
    "task": (I.task_key,),
    "category": (I.category, I.task_key),
    "difficulty": (_DIFFICULTY_ORDER, I.task_key),
    "model": (T.provider_name, T.label),
    "status": (I.status,),
    "time": (I.time_taken_ms,),
    "ttft": (I.ttft_ms,),
    "tokens": (I.tokens_generated,),
    "tps": (I.tokens_per_second,),
    "score": (I.evaluation_score,),
    "cost": (I.cost_usd,),
}


@dataclass
class ResultsPage:
    """One page of the detailed table and the state that produced it."""

    rows: list
    total: int
    page: int
    pages: int
    per_page: int
    sort: str
    dir: str
    filters: dict = field(default_factory=dict)

    @property
    def has_prev(self):
        return self.page > 1

    @property
    def has_next(self):
        return self.page < self.pages

    @property
    def first_index(self):
        return (self.page - 1) * self.per_page + 1 if self.total else 0

    @property
    def last_index(self):
        return min(self.total, self.page * self.per_page)


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
    return {"sort": sort, "dir": direction, "page": page, "per_page": per_page, "filters": filters}


def _int_arg(raw, name, default, errors, minimum):
    raw = (raw or "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = None
    if value is None or value < minimum:
        errors.append({"field": name, "message": f"must be a whole number ≥ {minimum}"})
        return default
    return value


def _targets(run, model):
    """The run's targets a `model` filter names: a target id (what the page's own select
    sends), a model name (`?model=llama3`, as people type it) or "provider/model"; a model name
    may hold "/" itself."""
    model = str(model)
    which = (T.model == model) | (T.provider_name.concat("/").concat(T.model) == model)
    if model.isdigit() and len(model) < 19:
        which |= T.id == int(model)
    return T.select(T.id).where((T.run == run) & which)


def _total(run, filters, cond):
    """How many items the filters match: from the kept counts (runs/counts.py) when they filter
    by model and status only, else counted."""
    if not set(filters) <= {"model", "status"}:
        return I.select(fn.COUNT(I.id)).where(cond).scalar() or 0
    targets = None
    if filters.get("model"):
        targets = [t for (t,) in _targets(run, filters["model"]).tuples()]
    status = filters.get("status")
    if status == JUDGE_FAILED:
        return count_items(run, targets, FAILED_STATUSES, stage="judge")
    if status == ANSWER_FAILED:
        return count_items(run, targets, FAILED_STATUSES, stage="answer")
    return count_items(run, targets, status or None)


def _conditions(run, filters):
    cond = I.run == run
    model = filters.get("model")
    if model:
        cond &= I.target.in_(_targets(run, model))
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
    if filters.get("min_score") is not None:
        cond &= I.evaluation_score >= filters["min_score"]
    if filters.get("max_score") is not None:
        cond &= I.evaluation_score <= filters["max_score"]
    return cond


def results_page(
    run, sort=DEFAULT_SORT, filters=None, page=1, per_page=DEFAULT_PER_PAGE, direction="asc"
):
    """One page of items (only the table's columns), sorted, filtered and paged in SQL.

    Two queries: the count, then the page (ids sorted and cut in a subquery, rows read after).
    """
    filters = dict(filters or {})
    if sort.startswith("-"):
        sort, direction = sort[1:], "desc"
    if sort not in SORTS:
        raise ValidationError.field("sort", f"must be one of {', '.join(SORTS)}")
    direction = "desc" if direction == "desc" else "asc"
    cond = _conditions(run, filters)
    total = _total(run, filters, cond)
    pages = max(1, math.ceil(total / per_page))
    page = min(max(1, page), pages)
    order = [
        c.desc(nulls="LAST") if direction == "desc" else c.asc(nulls="LAST") for c in SORTS[sort]
    ]
    order.append(I.id.desc() if direction == "desc" else I.id.asc())
    # Deferred join: sort and page over ids only (sort keys can come from indexes), then read
    # the table's columns for just this page's rows.
    page_ids = (
        I.select(I.id)
        .join(T, on=(I.target == T.id))
        .where(cond)
        .order_by(*order)
        .limit(per_page)
        .offset((page - 1) * per_page)
    )
    query = (
        I.select(
            I.id,
            I.task_key,
            I.category,
            I.difficulty,
            I.status,
            I.error_stage,
            I.attempts,
            fn.SUBSTR(I.error_msg, 1, PREVIEW_CHARS).alias("error_preview"),
            I.time_taken_ms,
            I.ttft_ms,
            I.tokens_generated,
            I.tokens_estimated,
            I.tokens_per_second,
            I.evaluation_score,
            I.cost_usd,
            fn.SUBSTR(I.evaluation_reason, 1, PREVIEW_CHARS).alias("reason_preview"),
            (fn.LENGTH(I.evaluation_reason) > PREVIEW_CHARS).alias("reason_truncated"),
            I.target.alias("target_id"),
            T.provider_name,
            T.model,
            T.label,
        )
        .join(T, on=(I.target == T.id))
        .where(I.id.in_(page_ids))
        .order_by(*order)
        .dicts()
    )
    rows = list(query)
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
    )
