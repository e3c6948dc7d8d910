"""Results of a run: per-model averages, breakdowns and the detailed table, all computed in SQL."""

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from dataclasses import field

from peewee import JOIN
from peewee import Case
from peewee import fn

from . import stats
from .db import database
from .errors import NotFound
from .errors import ValidationError
from .models import CANT_BE_FINISHED
from .models import COMPLETED
from .models import DIFFICULTIES
from .models import FAILED
from .models import ITEM_STATUSES
from .models import NEW
from .models import WAITING_FOR_JUDGE
from .models import Item
from .models import Run
from .models import RunTarget

I = Item  # noqa: E741 - short aliases keep the SQL builders readable
T = RunTarget

FAILED_STATUSES = (FAILED, CANT_BE_FINISHED)
JUDGE_FAILED = "judge_failed"
ANSWER_FAILED = "answer_failed"
STATUS_FILTERS = ITEM_STATUSES + (JUDGE_FAILED, ANSWER_FAILED)
PER_PAGE_CHOICES = (25, 50, 100, 200)
DEFAULT_PER_PAGE = 50
DEFAULT_SORT = "model"
PREVIEW_CHARS = 300

# Item failures by stage. A judge failure is not a low score: it is counted apart everywhere.
_failed = I.status.in_(FAILED_STATUSES)
IS_JUDGE_FAILED = _failed & (I.error_stage == "judge")
IS_ANSWER_FAILED = _failed & (I.error_stage.is_null() | (I.error_stage != "judge"))
IS_WARMUP_FAILED = _failed & (I.error_stage == "warmup")
# Only a completed item has a score that counts.
SCORE = Case(None, [(I.status == COMPLETED, I.evaluation_score)], None)
_DIFFICULTY_ORDER = Case(
    I.difficulty, [(d, n) for n, d in enumerate(DIFFICULTIES)], len(DIFFICULTIES)
)

# URL sort name -> columns, then a stable tiebreak on id.
SORTS = {
    "task": (I.task_key,),
    "category": (I.category, I.task_key),
    "difficulty": (_DIFFICULTY_ORDER, I.task_key),
    "model": (T.provider_name, T.model),
    "status": (I.status,),
    "time": (I.time_taken_ms,),
    "ttft": (I.ttft_ms,),
    "tokens": (I.tokens_generated,),
    "tps": (I.tokens_per_second,),
    "score": (I.evaluation_score,),
    "cost": (I.cost_usd,),
}
AVERAGE_SORTS = {
    "provider": "provider_name",
    "model": "label",
    "time": "avg_time_ms",
    "ttft": "avg_ttft_ms",
    "tps": "avg_tokens_per_second",
    "score": "avg_score",
    "completed": "completed",
    "failed": "failed",
    "cost": "cost_usd",
    "position": "position",
}


def get_run(run_id):
    """The run named `run_id`, or NotFound."""
    run = Run.get_or_none(Run.run_id == run_id)
    if run is None:
        raise NotFound(f"No run named {run_id!r}; the run history lists the runs that exist.")
    return run


def _count(expr):
    return fn.COALESCE(fn.SUM(Case(None, [(expr, 1)], 0)), 0)


def _answered(column):
    """The column where the answer succeeded, else NULL (answer failures carry no speed)."""
    return Case(None, [(IS_ANSWER_FAILED, None)], column)


# ---- per-model averages -------------------------------------------------------------------

_CI_CACHE = OrderedDict()
_CI_LOCK = threading.Lock()
_CI_CACHE_SIZE = 512


def model_averages(run, sort=None, direction="asc"):
    """Per model: averages, counts (answer vs judge failures), cost, tokens and a 95 % score CI."""
    query = (
        T.select(
            T.id,
            T.provider_name,
            T.model,
            T.position,
            T.warmup_ms,
            T.warmup_error,
            fn.COUNT(I.id),
            _count(I.status == COMPLETED),
            _count(I.status.in_([NEW, WAITING_FOR_JUDGE])),
            _count(IS_ANSWER_FAILED),
            _count(IS_WARMUP_FAILED),
            _count(IS_JUDGE_FAILED),
            fn.AVG(_answered(I.time_taken_ms)),
            fn.AVG(_answered(I.ttft_ms)),
            fn.AVG(_answered(I.tokens_per_second)),
            fn.AVG(SCORE),
            fn.COUNT(SCORE),
            fn.SUM(SCORE),
            fn.SUM(SCORE * SCORE),
            fn.MIN(SCORE),
            fn.MAX(SCORE),
            fn.SUM(I.cost_usd),
            fn.SUM(I.prompt_tokens),
            fn.SUM(I.tokens_generated),
        )
        # run_id in the join lets SQLite use an index that starts with (run, target).
        .join(I, JOIN.LEFT_OUTER, on=((I.target == T.id) & (I.run == run.id)))
        .where(T.run == run)
        .group_by(T.id)
        .order_by(T.position, T.id)
        .tuples()
    )
    rows = []
    for (
        tid,
        provider,
        model,
        position,
        warmup_ms,
        warmup_error,
        items,
        completed,
        pending,
        failed_answer,
        failed_warmup,
        failed_judge,
        avg_time,
        avg_ttft,
        avg_tps,
        avg_score,
        score_n,
        score_sum,
        score_sumsq,
        score_min,
        score_max,
        cost,
        prompt_tokens,
        tokens,
    ) in query:
        rows.append(
            {
                "target_id": tid,
                "provider_name": provider,
                "model": model,
                "label": f"{provider}/{model}",
                "position": position,
                "item_count": items,
                "completed": completed,
                "pending": pending,
                "failed_answer": failed_answer,
                "failed_warmup": failed_warmup,
                "failed_judge": failed_judge,
                "failed": failed_answer + failed_judge,
                "avg_time_ms": avg_time,
                "avg_ttft_ms": avg_ttft,
                "avg_tokens_per_second": avg_tps,
                "avg_score": avg_score,
                "score_n": score_n,
                "ci_low": None,
                "ci_high": None,
                "cost_usd": cost,
                "prompt_tokens": prompt_tokens,
                "tokens_generated": tokens,
                "warmup_ms": warmup_ms,
                "warmup_error": warmup_error,
                "_ci_key": (run.id, tid, score_n, score_sum, score_sumsq, score_min, score_max),
            }
        )
    _attach_cis(run, rows)
    return sort_averages(rows, sort, direction)


def _attach_cis(run, rows):
    """Fill ci_low/ci_high; scores are fetched (one query) only for models not cached yet."""
    missing = []
    for row in rows:
        key = row.pop("_ci_key")
        with _CI_LOCK:
            ci = _CI_CACHE.get(key)
            if ci is not None:
                _CI_CACHE.move_to_end(key)
        if ci is None and row["score_n"]:
            missing.append((row, key))
        elif ci is not None:
            row["ci_low"], row["ci_high"] = ci
    if not missing:
        return
    scores = {row["target_id"]: [] for row, _ in missing}
    query = (
        I.select(I.target, I.evaluation_score)
        .where(
            (I.run == run)
            & (I.status == COMPLETED)
            & I.evaluation_score.is_null(False)
            & I.target.in_(list(scores))
        )
        .tuples()
    )
    for target_id, score in query:
        scores[target_id].append(score)
    for row, key in missing:
        ci = stats.bootstrap_mean_ci(scores[row["target_id"]])
        row["ci_low"], row["ci_high"] = ci
        with _CI_LOCK:
            _CI_CACHE[key] = ci
            while len(_CI_CACHE) > _CI_CACHE_SIZE:
                _CI_CACHE.popitem(last=False)


def sort_averages(rows, sort=None, direction="asc"):
    """Sort average rows by a whitelisted key; missing values last either way."""
    key = AVERAGE_SORTS.get(sort or "position", "position")
    present = [r for r in rows if r[key] is not None]
    absent = [r for r in rows if r[key] is None]
    present.sort(key=lambda r: (r["position"], r["target_id"]))
    # Stable even when reversed: ties keep run order.
    present.sort(key=lambda r: r[key], reverse=(direction == "desc"))
    return present + absent


# ---- breakdowns -----------------------------------------------------------------------------


def breakdown(run, by="category", targets=None):
    """Average score per category (or difficulty) per model, as rows of cells in model order."""
    column = {"category": I.category, "difficulty": I.difficulty}.get(by)
    if column is None:
        raise ValidationError.field("by", "must be category or difficulty")
    if targets is None:
        targets = list(
            T.select(T.id, T.provider_name, T.model)
            .where(T.run == run)
            .order_by(T.position, T.id)
            .tuples()
        )
    query = (
        I.select(
            I.target,
            column,
            fn.AVG(SCORE),
            fn.COUNT(SCORE),
            fn.COUNT(I.id),
            _count(IS_JUDGE_FAILED),
            _count(IS_ANSWER_FAILED),
        )
        .where(I.run == run)
        .group_by(I.target, column)
        .tuples()
    )
    cells = {}
    for target_id, key, avg, n, items, failed_judge, failed_answer in query:
        cells[(key, target_id)] = {
            "avg": avg,
            "n": n,
            "item_count": items,
            "failed_judge": failed_judge,
            "failed_answer": failed_answer,
        }
    keys = sorted({k for k, _ in cells}, key=lambda k: _key_order(by, k))
    empty = {"avg": None, "n": 0, "item_count": 0, "failed_judge": 0, "failed_answer": 0}
    out_rows = []
    for key in keys:
        row_cells = [cells.get((key, t[0]), empty) for t in targets]
        n = sum(c["n"] for c in row_cells)
        overall = sum(c["avg"] * c["n"] for c in row_cells if c["n"]) / n if n else None
        out_rows.append({"key": key, "cells": row_cells, "avg": overall, "n": n})
    models = [{"target_id": t[0], "label": f"{t[1]}/{t[2]}"} for t in targets]
    return {"by": by, "keys": keys, "models": models, "rows": out_rows}


def _key_order(by, key):
    if by == "difficulty" and key in DIFFICULTIES:
        return (0, DIFFICULTIES.index(key), key)
    return (1, 0, key or "")


# ---- the detailed table ---------------------------------------------------------------------


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


def _conditions(run, filters):
    cond = I.run == run
    model = filters.get("model")
    if model:
        if str(model).isdigit():
            cond &= I.target == int(model)
        else:
            provider, _, name = str(model).partition("/")
            cond &= I.target.in_(
                T.select(T.id).where(
                    (T.run == run) & (T.provider_name == provider) & (T.model == name)
                )
            )
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
    total = I.select(fn.COUNT(I.id)).where(cond).scalar() or 0
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


# ---- one item, and chart data ---------------------------------------------------------------


def get_item(run, item_id):
    """One item of `run` with its target, or NotFound."""
    item = (
        I.select(I, T)
        .join(T, on=(I.target == T.id))
        .where((I.run == run) & (I.id == item_id))
        .first()
    )
    if item is None:
        raise NotFound(f"Run {run.run_id!r} has no item {item_id}.")
    return item


def latency_samples(run, buckets=1000):
    """Per target id: answer times (ms), sorted; above `buckets` values, evenly spaced order stats.

    Bounded whatever the run's size: a box plot needs the quantiles, not every value.
    """
    table = I._meta.table_name
    sql = (
        f"SELECT target_id, t FROM ("
        f" SELECT target_id, time_taken_ms AS t,"
        f"  ROW_NUMBER() OVER (PARTITION BY target_id ORDER BY time_taken_ms) - 1 AS r,"
        f"  COUNT(*) OVER (PARTITION BY target_id) AS n"
        f" FROM {table} WHERE run_id = ? AND time_taken_ms IS NOT NULL"
        f" AND NOT (status IN (?, ?) AND COALESCE(error_stage, '') != 'judge'))"
        f" WHERE n <= ? OR r = 0 OR r = n - 1 OR (r * ?) / (n - 1) != ((r - 1) * ?) / (n - 1)"
        f" ORDER BY target_id, t"
    )
    out = {}
    cursor = database.execute_sql(
        sql, (run.id, FAILED, CANT_BE_FINISHED, buckets + 1, buckets, buckets)
    )
    for target_id, value in cursor:
        out.setdefault(target_id, []).append(value)
    return out
