"""summary.json: run metadata, per-model averages, breakdowns, failure counts, cost and tokens."""

from peewee import fn

from ..clock import isoformat
from ..db.models import Item
from ..db.models import RunCollection
from ..db.models import RunTarget
from ..results.averages import averages_to_dict
from ..results.averages import breakdown
from ..results.averages import model_averages
from ..results.averages import targets_from_averages
from ..results.check_figures import target_check_figures
from ..results.composite import DEFAULT_SETTINGS
from ..results.composite import best
from ..results.composite_figures import target_composites
from ..results.figures import empty_figures
from ..results.figures import figures_to_dict
from ..results.figures import overall_figures
from ..results.figures import target_figures
from ..results.goodput import run_goodput
from ..results.speed import run_speed
from ..results.stability import has_repeats
from ..results.stability import stability
from ..runs.records import run_record
from ..runs.reuse import reuse_counts
from ..runs.state import run_state
from ..runs.state import state_label
from ..sysmetrics.store import run_peaks
from ..sysmetrics.store import run_samples
from .ratings import ratings_summary

SCHEMA = "llmbench.summary/1"


def breakdown_to_list(table):
    """A breakdown as [{key, avgScore, scored, models: [{label, avgScore, scored, ...}]}]."""
    out = []
    for row in table["rows"]:
        out.append(
            {
                "key": row["key"],
                "avgScore": row["avg"],
                "scored": row["n"],
                "models": [
                    {
                        "label": model["label"],
                        "avgScore": c["avg"],
                        "scored": c["n"],
                        "items": c["item_count"],
                        "failedJudge": c["failed_judge"],
                        "failedAnswer": c["failed_answer"],
                    }
                    for model, c in zip(table["models"], row["cells"], strict=True)
                ],
            }
        )
    return out


def results_dict(run, averages=None, estimates=False):
    """Averages and both breakdowns (GET /api/runs/<id>/results and summary.json); estimated
    token rates join the averages only when `estimates` is asked for."""
    averages = model_averages(run, estimates=estimates) if averages is None else averages
    targets = targets_from_averages(averages)
    return {
        "runId": run.run_id,
        "models": [averages_to_dict(r) for r in averages],
        "breakdowns": {
            by: breakdown_to_list(breakdown(run, by, targets=targets))
            for by in ("category", "difficulty")
        },
    }


def judge_cost_usd(run):
    """What the run's judgements cost (USD), or None when no judgement has a known cost."""
    return (
        Item.select(fn.SUM(Item.judge_cost_usd))
        .where((Item.run == run) & Item.judge_cost_usd.is_null(False))
        .scalar()
    )


def composite_to_dict(averages, composites, settings):
    """The composite keys of summary.json: per model and the run's best (with who has it)."""
    labels = {r["target_id"]: r["label"] for r in averages}
    top = best(composites.values())
    best_label = next((labels.get(t) for t, c in composites.items() if c is top), None)
    return {
        "bestCompositeScore": (
            {"label": best_label, "score": top.score, "formula": top.formula()} if top else None
        ),
        "compositeSettings": {
            "qualityWeight": settings.quality_weight,
            "fullTimeSeconds": settings.full_time_seconds,
            "pointsPerMinute": settings.points_per_minute,
        },
    }


def summary_json(run, composite_settings=DEFAULT_SETTINGS):
    """The run's summary as a JSON-ready dict (no secrets: provider headers are never read).

    Each model also carries the apocbench report's figures: auto-fail rate, rubric item means, judge
    failures, p50/p90 answer time and TTFT (results/figures.py), its composite score and its
    checks' pass rate."""
    averages = model_averages(run)
    figures = target_figures(run)
    overall = overall_figures(figures)
    targets = (
        RunTarget.select().where(RunTarget.run == run).order_by(RunTarget.position, RunTarget.id)
    )
    failed_answer = sum(r["failed_answer"] for r in averages)
    failed_judge = sum(r["failed_judge"] for r in averages)
    scored = sum(r["score_n"] for r in averages)
    costs = [r["cost_usd"] for r in averages if r["cost_usd"] is not None]
    answer_cost = sum(costs) if costs else None
    judge_cost = judge_cost_usd(run)
    summary = {
        "schema": SCHEMA,
        # What a reader may find here before sharing it ("Security & privacy"): the
        # summary holds numbers only; report.html and the detailed exports hold the texts.
        "contains": {"prompts": False, "answers": False, "judgeReasons": False, "secrets": False},
        "runId": run.run_id,
        "name": run.name,
        "state": run_state(run),
        "stateLabel": state_label(
            run_state(run), sum(r["completed"] for r in averages), failed_answer + failed_judge
        )[0],
        "status": run.status,
        "phase": run.phase,
        "source": run.source,
        "judge": {
            "providerName": run.judge_provider_name,
            "model": run.judge_model,
            "params": run.judge_params or {},
        },
        "targets": [
            {
                "providerName": t.provider_name,
                "model": t.model,
                "label": t.label,
                "params": t.params or {},
                "warmupMs": t.warmup_ms,
                "loadMs": t.load_ms,
                "warmupError": t.warmup_error,
            }
            for t in targets
        ],
        "collections": [
            c.collection_name
            for c in RunCollection.select()
            .where(RunCollection.run == run)
            .order_by(RunCollection.id)
        ],
        "settings": run.settings or {},
        "createdAt": isoformat(run.created_at),
        "startedAt": isoformat(run.started_at),
        "finishedAt": isoformat(run.finished_at),
        "datasetHash": run.dataset_hash,
        "promptHash": run.prompt_hash,
        # How the run was made: llmbench's version, the command line and config as given.
        "record": run_record(run),
        # Warm-up failures are answer failures too (the answer never came); listed apart as well.
        "failures": {
            "answer": failed_answer,
            "judge": failed_judge,
            "warmup": sum(r["failed_warmup"] for r in averages),
            "total": failed_answer + failed_judge,
        },
        "totals": {
            "items": sum(r["item_count"] for r in averages),
            "completed": sum(r["completed"] for r in averages),
            "pending": sum(r["pending"] for r in averages),
            "avgScore": (
                sum(r["avg_score"] * r["score_n"] for r in averages if r["score_n"]) / scored
                if scored
                else None
            ),
            "costUsd": answer_cost,  # the answers only: the per-model costUsd summed
            "judgeCostUsd": judge_cost,
            "totalCostUsd": (
                None
                if answer_cost is None and judge_cost is None
                else (answer_cost or 0.0) + (judge_cost or 0.0)
            ),
            "promptTokens": sum(r["prompt_tokens"] or 0 for r in averages),
            "tokensGenerated": sum(r["tokens_generated"] or 0 for r in averages),
            "autoFailRate": overall["auto_fail_rate"],
            "failedPct": overall["failed_pct"],
        },
        # `llmbench run --reuse`: items that took an earlier answer / judgement (no speed).
        "reused": reuse_counts(run),
    }
    summary.update({k: v for k, v in results_dict(run, averages).items() if k != "runId"})
    composites = target_composites(run, composite_settings, averages)
    checks = target_check_figures(run)
    speeds = run_speed(run, averages)
    speed = {t["targetId"]: t for t in speeds["targets"]}
    goodput = run_goodput(run, speed=speeds) or {"targets": []}
    slo = {t["targetId"]: t for t in goodput["targets"]}
    for row, model in zip(averages, summary["models"], strict=True):
        model.update(figures_to_dict(figures.get(row["target_id"]) or empty_figures()))
        composite = composites.get(row["target_id"])
        model["compositeScore"] = composite.score if composite else None
        model["composite"] = composite.to_dict() if composite else None
        # How its answers fared on their tasks' checks (null when none was checked).
        checked = checks.get(row["target_id"])
        model["checks"] = checked.to_dict() if checked else None
        # Speed as a load tester reports it (results/speed.py; GET /api/runs/<id>/speed).
        model["speed"] = speed.get(row["target_id"])
        # Its SLO attainment and goodput, per load step (results/goodput.py; null without an
        # SLO in the run's settings).
        model["slo"] = slo.get(row["target_id"])
    summary.update(composite_to_dict(averages, composites, composite_settings))
    # System metrics sampled during the run (null when none were taken) and, with repeats,
    # how stable the scores were.
    summary["systemPeaks"] = run_peaks(run) if run_samples(run) else None
    if has_repeats(run):
        summary["stability"] = stability(run, limit=100)
    summary["ratings"] = ratings_summary(run)
    return summary
