"""Pattern page (debug/testing only): every run-UI partial rendered with sample data (STYLE W6)."""

import datetime as dt
from types import SimpleNamespace as NS

from flask import Blueprint
from flask import render_template

from ..charts.linechart import line_chart
from ..db.models import ITEM_STATUSES
from ..providers import formats
from ..runs.outages import waiting_message
from ..runs.progress import pct
from ..runs.progress import progress_fraction
from ..runs.state import state_label
from .dashboard import PARAMS
from .dashboard import target_key

bp = Blueprint("patterns", __name__, url_prefix="/_patterns")

T0 = dt.datetime(2025, 8, 7, 18, 16, 10)


def _progress(state, phase, new, waiting, completed, failed=0, judge_failed=0, outage=None):
    total = new + waiting + completed + failed + judge_failed
    counts = dict.fromkeys(ITEM_STATUSES, 0)
    counts.update(
        NEW=new, WAITING_FOR_JUDGE=waiting, COMPLETED=completed, FAILED=failed + judge_failed
    )
    benchmarked, judged, judge_total = total - new, completed + judge_failed, total - failed
    label, tone = state_label(state, completed, failed + judge_failed)
    return {
        "total": total,
        "counts": counts,
        "benchmarked": benchmarked,
        "answered": benchmarked - failed,
        "answer_failed": failed,
        "judged": judged,
        "judge_failed": judge_failed,
        "judge_total": judge_total,
        "bench_pct": pct(benchmarked, total),
        "judge_pct": pct(judged, judge_total),
        "answered_pct": pct(benchmarked - failed, total),
        "answer_failed_pct": pct(failed, total),
        "judge_failed_pct": pct(judge_failed, judge_total),
        "completed_pct": pct(completed, judge_total),
        "overall_pct": round(100 * progress_fraction(counts), 1),
        "eta_seconds": 754 if state == "running" else None,
        "recent_tps": 25.4,
        "recent_tps_target": "llama3.1:8b",
        "in_flight": [
            {"task": "q7", "target": "llama3.1:8b", "step": "answering", "seconds": 95.0}
        ],
        "state": state,
        "state_label": label,
        "state_tone": tone,
        "phase": phase,
        "waiting": [outage] if outage else [],
    }


def sample():
    """Sample run, progress, log lines and items for every partial."""
    run = NS(
        run_id="nightly-20250807-181610",
        judge_provider_name="Local Ollama",
        judge_model="mistral:instruct",
        control_reason=None,
        source="web",
    )
    targets = [
        NS(id=i, provider_name="Local Ollama", model=m, label=f"Local Ollama / {m}")
        for i, m in ((1, "llama3:8b"), (2, "gemma:7b"))
    ]
    messages = [
        ("INFO", "phase_changed", "Benchmarking 80 items on 2 targets."),
        ("INFO", "warmup", "--- Starting model: gemma:7b --- warm-up 1,204 ms"),
        (
            "INFO",
            "item_done",
            "Task 'logic_puzzle_3' completed. Time: 6,102 ms, Tokens: 155, TPS: 25.4",
        ),
        ("WARNING", "retry", "Task 'python_fibonacci' on llama3:8b: HTTP 503; retry 2 of 3 in 4 s"),
        ("ERROR", "item_failed", "Task 'french_translation' failed after 3 attempts: read timeout"),
    ]
    data = {"taskId": "logic_puzzle_3", "ms": 6102}
    logs = [
        NS(
            id=i + 1,
            created_at=T0 + dt.timedelta(seconds=i * 7),
            level=lvl,
            event=ev,
            message=msg,
            data=data if ev == "item_done" else None,
        )
        for i, (lvl, ev, msg) in enumerate(messages)
    ][::-1]
    items = [
        NS(
            id=1,
            task_key="logic_puzzle_3",
            target=targets[1],
            status="COMPLETED",
            attempts=1,
            time_taken_ms=6102.0,
            tokens_generated=155,
            tokens_estimated=False,
            tokens_per_second=25.4,
            evaluation_score=95.0,
            error_msg=None,
        ),
        NS(
            id=2,
            task_key="python_fibonacci",
            target=targets[0],
            status="WAITING_FOR_JUDGE",
            attempts=2,
            time_taken_ms=812.0,
            tokens_generated=48,
            tokens_estimated=True,
            tokens_per_second=61.2,
            evaluation_score=None,
            error_msg=None,
            next_retry_at=T0 + dt.timedelta(seconds=30),
        ),
        NS(
            id=3,
            task_key="french_translation",
            target=targets[0],
            status="FAILED",
            attempts=3,
            time_taken_ms=None,
            tokens_generated=None,
            tokens_estimated=False,
            tokens_per_second=None,
            evaluation_score=None,
            error_msg="read timeout after 120 s (attempt 3 of 3)",
        ),
        NS(
            id=4,
            task_key="sql_join_2",
            target=targets[1],
            status="NEW",
            attempts=1,
            next_retry_at=T0 + dt.timedelta(seconds=40),
            time_taken_ms=None,
            tokens_generated=None,
            tokens_estimated=False,
            tokens_per_second=None,
            evaluation_score=None,
            error_msg="HTTP 503 from the server; retrying",
        ),
    ]
    return run, targets, logs, items


def _sysmetrics_sample():
    """runs/_sysmetrics.html's context: a minute of samples on a box without a GPU."""
    start = 1_754_590_570
    cpu = [{"t": start + 2 * i, "y": 30 + (i * 7) % 45} for i in range(30)]
    ram = [{"t": start + 2 * i, "y": 9.2 + i / 60} for i in range(30)]
    charts = {
        name: {
            variant: line_chart(
                [{"name": label, "points": points}],
                title=title,
                y_max=top,
                narrow=variant == "narrow",
                height=240,
                chart_id=f"pattern-{name}-{variant}",
            )
            for variant in ("wide", "narrow")
        }
        for name, label, title, points, top in (
            ("load", "CPU %", "CPU and GPU load (%)", cpu, 100),
            ("memory", "RAM used (GiB)", "Memory (GiB)", ram, 32),
            ("throughput", "tokens/s", "Throughput (tokens/s)", cpu[::5], None),
        )
    }
    peaks = {
        "cpuPercent": 74,
        "ramUsedGb": 9.7,
        "rssMb": 182,
        "gpuUtilPercent": None,
        "vramUsedGb": None,
    }
    latest = {
        "ramTotalGb": 31.3,
        "vramTotalGb": None,
        "loadedModels": [{"name": "llama3:8b", "sizeGb": 5.6, "vramGb": 0.0}],
    }
    return {"samples": 30, "peaks": peaks, "latest": latest, "charts": charts}


@bp.get("/")
def index():
    """Every partial of the run UI with sample data, in each of its states."""
    run, targets, logs, items = sample()
    progresses = [
        ("running", _progress("running", "BENCHMARKING", 36, 20, 24)),
        ("paused", _progress("paused", "JUDGING", 0, 30, 48, failed=2)),
        ("stopped", _progress("stopped", "BENCHMARKING", 50, 10, 20)),
        ("finished", _progress("finished", "JUDGING", 0, 0, 76, failed=2, judge_failed=2)),
        ("finished, nothing completed", _progress("finished", "BENCHMARKING", 0, 0, 0, failed=80)),
        (
            "running, a server unreachable",
            _progress(
                "running",
                "BENCHMARKING",
                44,
                20,
                16,
                outage={
                    "providerId": 1,
                    "message": waiting_message(
                        "Local Ollama",
                        "connection refused",
                        T0,
                        T0 + dt.timedelta(seconds=30),
                    ),
                },
            ),
        ),
        ("queued", _progress("queued", "BENCHMARKING", 80, 0, 0)),
    ]
    provider = NS(id=1, name="Local Ollama", type=formats.OLLAMA, base_url="http://localhost:11434")
    params = {
        target_key(1, "llama3:8b"): {"temperature": 0.2, "stop": ["###"]},
        target_key(1, "llama3:8b", 2): {"temperature": 1.0},
    }
    group = {
        "provider": provider,
        "models": ["llama3:8b", "gemma:7b", "mistral:instruct"],
        "profiles": {
            "llama3:8b": range(1, 3),
            "gemma:7b": range(1, 2),
            "mistral:instruct": range(1, 2),
        },
        "picked": {target_key(1, "llama3:8b"), target_key(1, "llama3:8b", 2)},
        "listed": ["gemma:7b", "mistral:instruct"],
        "error": None,
        "params": params,
        "labels": {target_key(1, "llama3:8b", 2): "llama3 hot"},
        "key": target_key,
    }
    down = dict(
        group,
        models=[],
        profiles={},
        picked=set(),
        listed=[],
        error="Cannot connect to http://localhost:11434 (connection refused)",
    )
    budget_run = NS(
        **{
            **vars(run),
            "control_reason": (
                "budget reached: spent $2.0130 of the $2.0000 limit (settings.maxBudgetUsd); "
                "continue with a higher budget to go on"
            ),
        }
    )
    budget_halt = {"spent": 2.013, "limit": 2.0, "minimum": 2.02, "suggested": 4.03}
    return render_template(
        "patterns.html",
        sys=_sysmetrics_sample(),
        run=run,
        targets=targets,
        logs=logs,
        items=items,
        budget_run=budget_run,
        budget_halt=budget_halt,
        progresses=progresses,
        group=group,
        down=down,
        params_names=PARAMS,
        log_mark=logs[0].id,
        items_mark="sample",
        statuses=ITEM_STATUSES,
        filter_model=None,
        filter_status=None,
        now=T0,
        param_error={
            target_key(1, "llama3:8b") + "#temperature": "temperature must be at most 2.0"
        },
    )
