"""LLM Runner's report for one run, per target: avg_rating, winrate, cost_per_1k_tasks,
avg_latency and avg_tokens, each with the n it stands on, and the data behind its charts.

Three grouped queries (items, ratings, votes), whatever the run's size.
"""

from ..db.connection import database
from ..db.models import COMPLETED
from ..db.models import RunTarget
from ..db.target_name import target_name
from ..results.averages import kept_latency_samples
from .agreement import LIKERT

KPI_COLUMNS = (
    "provider",
    "target",
    "model",
    "avg_rating",
    "ratings",
    "winrate",
    "votes",
    "cost_per_1k_tasks",
    "avg_latency_ms",
    "avg_tokens",
    "answered",
    "avg_score",
)


def _items(run):
    """{target id: (answered, mean answer time, mean tokens, cost, costed, mean score, scored)}.

    Grouped by status and stage first, as the covering index item_figures begins (models.py):
    read from it alone, in order. Grouped by target alone, the database read every wide item
    row through another index to save itself a sort (0.3 s CPU at 100 000 items)."""
    rows = database.execute_sql(
        "SELECT target_id, COUNT(answered_at), "
        "SUM(CASE WHEN answered_at IS NOT NULL THEN time_taken_ms END), "
        "COUNT(CASE WHEN answered_at IS NOT NULL THEN time_taken_ms END), "
        "SUM(CASE WHEN answered_at IS NOT NULL THEN tokens_generated END), "
        "COUNT(CASE WHEN answered_at IS NOT NULL THEN tokens_generated END), "
        "SUM(cost_usd), COUNT(cost_usd), "
        "SUM(CASE WHEN status = ? THEN evaluation_score END), "
        "COUNT(CASE WHEN status = ? THEN evaluation_score END) "
        "FROM item WHERE run_id = ? GROUP BY status, error_stage, target_id",
        (COMPLETED, COMPLETED, run.id),
    )
    sums = {}
    for target_id, *values in rows:
        was = sums.get(target_id)
        sums[target_id] = (
            values if was is None else [_add(a, b) for a, b in zip(was, values, strict=True)]
        )
    out = {}
    for target_id, summed in sums.items():
        answered, time, timed, tokens, counted, cost, costed, score, scored = summed
        cost = None if cost is None else float(cost)
        mean_time, mean_tokens = _mean(time, timed), _mean(tokens, counted)
        out[target_id] = (
            answered,
            mean_time,
            mean_tokens,
            cost,
            costed,
            _mean(score, scored),
            scored,
        )
    return out


def _add(a, b):
    """Two SUMs added; None only when both are (SQL's SUM of no values)."""
    if a is None or b is None:
        return b if a is None else a
    return a + b


def _mean(total, n):
    return float(total) / n if n else None


def _ratings(run):
    out = {}
    rows = database.execute_sql(
        "SELECT i.target_id, r.rating, COUNT(*) FROM rating r JOIN item i ON i.id = r.item_id "
        # r.run_id: from the run's ratings (an index), not a probe per item of the run.
        "WHERE i.run_id = ? AND r.run_id = ? AND r.rating IS NOT NULL "
        "GROUP BY i.target_id, r.rating",
        (run.id, run.id),
    )
    for target_id, rating, n in rows:
        out.setdefault(target_id, dict.fromkeys(LIKERT, 0))[rating] = n
    return out


def _votes(target_ids, source):
    """{target id: (wins, ties, votes)} over the votes each target was in (any opponent)."""
    if not target_ids:
        return {}
    marks = ",".join("?" * len(target_ids))
    # One person ("human:<name>") reads their votes; human, judge or all reads by source.
    column = "voter" if source.startswith("human:") else "source"
    where = "" if source == "all" else f" AND {column} = ?"
    extra = [] if source == "all" else [source]
    sql = (
        # CASE, not a bare comparison: PostgreSQL cannot SUM a boolean.
        "SELECT t, SUM(win), SUM(tie), COUNT(*) FROM ("
        " SELECT left_target_id AS t,"
        " CASE WHEN winner_target_id = left_target_id THEN 1 ELSE 0 END AS win,"
        " CASE WHEN winner = 'TIE' THEN 1 ELSE 0 END AS tie"
        f" FROM vote WHERE left_target_id IN ({marks}){where}"
        " UNION ALL"
        " SELECT right_target_id,"
        " CASE WHEN winner_target_id = right_target_id THEN 1 ELSE 0 END,"
        " CASE WHEN winner = 'TIE' THEN 1 ELSE 0 END"
        f" FROM vote WHERE right_target_id IN ({marks}){where}"
        ") AS sides GROUP BY t"
    )
    params = [*target_ids, *extra, *target_ids, *extra]
    return {t: (int(w or 0), int(ti or 0), n) for t, w, ti, n in database.execute_sql(sql, params)}


def run_report(run, source="all"):
    """Per target of the run, in run order: the KPIs with their n, and chart data."""
    targets = list(
        RunTarget.select().where(RunTarget.run == run).order_by(RunTarget.position, RunTarget.id)
    )
    items, ratings = _items(run), _ratings(run)
    votes = _votes([t.id for t in targets], source)
    rows = []
    for t in targets:
        answered, latency, tokens, cost, costed, score, scored = items.get(
            t.id, (0, None, None, None, 0, None, 0)
        )
        dist = ratings.get(t.id, dict.fromkeys(LIKERT, 0))
        n_ratings = sum(dist.values())
        wins, ties, n_votes = votes.get(t.id, (0, 0, 0))
        rows.append(
            {
                "target_id": t.id,
                "provider": t.provider_name,
                "target": t.label,
                "model": t.model,
                "label": target_name(t.provider_name, t.label),
                "avg_rating": (
                    sum(k * v for k, v in dist.items()) / n_ratings if n_ratings else None
                ),
                "ratings": n_ratings,
                "rating_counts": dist,
                "winrate": (wins + ties / 2) / n_votes if n_votes else None,
                "votes": n_votes,
                "wins": wins,
                "ties": ties,
                # Only answers with a known cost count; None when no answer has one.
                "cost_per_1k_tasks": cost / costed * 1000 if costed else None,
                "costed": costed,
                "avg_latency_ms": latency,
                "avg_tokens": tokens,
                "answered": answered,
                "avg_score": score,
                "scored": scored,
            }
        )
    return {"source": source, "targets": rows}


def report_with_latency(run, source="all"):
    """run_report plus each target's answer times (bounded order statistics) for a histogram.
    The times are kept with the run's items (a rating leaves them as they were): each chart
    of the report read every answer's time again, 0.5 s at 100 000 items."""
    report = run_report(run, source)
    report["latency"] = kept_latency_samples(run)
    return report


def kpi_to_dict(row):
    """One target's KPIs with camelCase keys (summary.json, the API)."""
    return {
        "provider": row["provider"],
        "target": row["target"],
        "model": row["model"],
        "avgRating": row["avg_rating"],
        "ratings": row["ratings"],
        "ratingCounts": {str(k): v for k, v in row["rating_counts"].items()},
        "winrate": row["winrate"],
        "votes": row["votes"],
        "costPer1kTasks": row["cost_per_1k_tasks"],
        "avgLatencyMs": row["avg_latency_ms"],
        "avgTokens": row["avg_tokens"],
        "answered": row["answered"],
        "avgScore": row["avg_score"],
    }


def kpi_csv_row(row):
    """One target's KPIs as a CSV row in KPI_COLUMNS order (numbers as plain text)."""
    return [row[c] if not isinstance(row[c], float) else f"{row[c]:.6g}" for c in KPI_COLUMNS]


def has_labels(run):
    """True when the run has people's ratings, votes (its targets in them) or a judge job: what
    decides whether a run's Markdown and report.html get the ratings section."""
    row = database.execute_sql(
        "SELECT EXISTS (SELECT 1 FROM rating r JOIN item i ON i.id = r.item_id WHERE i.run_id = ?)"
        " OR EXISTS (SELECT 1 FROM vote v JOIN runtarget t ON t.id = v.left_target_id"
        "  WHERE t.run_id = ?)"
        " OR EXISTS (SELECT 1 FROM vote v JOIN runtarget t ON t.id = v.right_target_id"
        "  WHERE t.run_id = ?)"
        " OR EXISTS (SELECT 1 FROM judgejob WHERE run_id = ?)",
        (run.id, run.id, run.id, run.id),
    ).fetchone()
    return bool(row[0])
