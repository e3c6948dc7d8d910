"""Per-target figures beyond the averages: the auto-fail rate, rubric item means,
judge failures and latency / TTFT percentiles. summary.json, report.html, the CLI's quality
gates and its summary screen read them."""

from array import array

from peewee import fn

from ..db.connection import database
from ..db.models import COMPLETED
from ..latency import percentile
from ..runs.outcomes import FAILED_STATUSES
from ..runs.outcomes import IS_ANSWER_FAILED
from ..runs.outcomes import IS_JUDGE_FAILED
from ..runs.outcomes import I
from ..runs.outcomes import count_where


def empty_figures():
    """The figures of a target with no items."""
    return {
        "items": 0,
        "judged": 0,
        "auto_failed": 0,
        "auto_fail_rate": None,
        "failed": 0,
        "failed_pct": None,
        "judge_failures": 0,
        "answer_failures": 0,
        "rubric_means": [],
        "latency_ms": {"p50": None, "p90": None},
        "ttft_ms": {"p50": None, "p90": None},
    }


def target_figures(run):
    """{target id: figures}: counts and rates in percent (None without a denominator)."""
    out = {}
    rows = (
        I.select(
            I.target,
            fn.COUNT(I.id),
            count_where(I.status == COMPLETED),
            count_where((I.status == COMPLETED) & (I.auto_fail == True)),  # noqa: E712 - SQL
            count_where(I.status.in_(FAILED_STATUSES)),
            count_where(IS_JUDGE_FAILED),
            count_where(IS_ANSWER_FAILED),
        )
        .where(I.run == run)
        .group_by(I.target)
        .tuples()
    )
    for target, items, judged, auto_failed, failed, judge_failed, answer_failed in rows:
        figures = out[target] = empty_figures()
        figures.update(
            items=items,
            judged=judged,
            auto_failed=auto_failed,
            auto_fail_rate=100.0 * auto_failed / judged if judged else None,
            failed=failed,
            failed_pct=100.0 * failed / items if items else None,
            judge_failures=judge_failed,
            answer_failures=answer_failed,
        )
    _percentiles(run, out)
    _rubric_means(run, out)
    return out


def _percentiles(run, out):
    """p50 / p90 of answer time and TTFT per target, over the answers this run measured."""
    # Packed doubles (8 bytes a value), not lists of float objects (32): at a million answers
    # the lists were 64 MiB, the largest part of a warm's peak (summary.json, report.html).
    times, ttfts = {}, {}
    query = (
        I.select(I.target, I.time_taken_ms, I.ttft_ms)
        .where((I.run == run) & ~IS_ANSWER_FAILED & I.time_taken_ms.is_null(False))
        .tuples()
    )
    for target, ms, ttft in database.execute(query):
        _values(times, target).append(ms)
        if ttft is not None:
            _values(ttfts, target).append(ttft)
    for target, figures in out.items():
        for key, values in (
            ("latency_ms", times.pop(target, ())),
            ("ttft_ms", ttfts.pop(target, ())),
        ):
            values = sorted(values)  # one target's values as floats at a time
            figures[key] = {"p50": percentile(values, 0.5), "p90": percentile(values, 0.9)}


def _values(by_target, target):
    values = by_target.get(target)
    if values is None:
        values = by_target[target] = array("d")
    return values


def _rubric_means(run, out):
    """Mean score per rubric item id (as the judge gave it, 0..max_score) per target."""
    # The JSON object's members as rows: SQLite's json_each, PostgreSQL's jsonb_each_text.
    each = (
        "jsonb_each_text(CAST(i.rubric_scores AS JSONB)) AS j(key, value)"
        if database.is_postgres
        else "json_each(i.rubric_scores) AS j"
    )
    cursor = database.execute_sql(
        f"SELECT i.target_id, j.key, AVG(CAST(j.value AS DOUBLE PRECISION)), COUNT(*) "
        f"FROM {I._meta.table_name} AS i, {each} "
        f"WHERE i.run_id = ? AND i.status = ? AND i.rubric_scores IS NOT NULL "
        f"GROUP BY i.target_id, j.key ORDER BY i.target_id, j.key",
        (run.id, COMPLETED),
    )
    for target, key, mean, n in cursor:
        if target in out:
            out[target]["rubric_means"].append({"id": key, "mean": mean, "n": n})


def overall_figures(per_target):
    """The run's own rates from the per-target figures (auto-fail and failed, in percent)."""
    items = sum(f["items"] for f in per_target.values())
    judged = sum(f["judged"] for f in per_target.values())
    auto_failed = sum(f["auto_failed"] for f in per_target.values())
    failed = sum(f["failed"] for f in per_target.values())
    return {
        "items": items,
        "judged": judged,
        "auto_failed": auto_failed,
        "auto_fail_rate": 100.0 * auto_failed / judged if judged else None,
        "failed": failed,
        "failed_pct": 100.0 * failed / items if items else None,
    }


def figures_to_dict(figures):
    """camelCase for summary.json."""
    return {
        "judged": figures["judged"],
        "autoFailed": figures["auto_failed"],
        "autoFailRate": figures["auto_fail_rate"],
        "failedPct": figures["failed_pct"],
        "judgeFailures": figures["judge_failures"],
        "rubricMeans": figures["rubric_means"],
        "latencyMs": figures["latency_ms"],
        "ttftMs": figures["ttft_ms"],
    }
