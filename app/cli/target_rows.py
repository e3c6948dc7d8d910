"""The per-target rows a run's end prints (`llmbench run`, `show`, the files' summary): the
averages in summary.json's shape with the speed and SLO figures. Apart from output.py, which
every command imports, because these read a run's figures.

A finished run's figures are kept (results/kept.py, kept_speed.py): read back, they need no
numpy, so the speed figures (speed.py) and the SLO's (goodput.py), which work them out with
numpy, are loaded only when they are not kept or the run has an SLO."""

from ..config import load as load_config
from ..results.averages import averages_to_dict
from ..results.averages import model_averages
from ..results.check_figures import target_check_figures
from ..results.composite import settings_from
from ..results.composite_figures import target_composites
from ..results.figures import target_figures
from ..results.kept_speed import kept_speed
from ..runs.queries import get_run
from ..runs.spec import run_slo
from .lazy import load

RUN_SPEED = "app.results.speed:run_speed"
RUN_GOODPUT = "app.results.goodput:run_goodput"


def averages(run_id, composite_settings=None):
    """Per-target rows for the end of a run: averages (summary.json's shape) plus the
    auto-fail rate, the median answer time, the composite score and the checks' pass counts
    (quality_line) and the compact speed figures (speed_line). composite_settings: the
    composite's weights and time curve (the config's when None)."""
    run = get_run(run_id)
    if composite_settings is None:
        composite_settings = settings_from(load_config())
    averages_rows = model_averages(run)
    figures = target_figures(run)
    composites = target_composites(run, composite_settings, averages_rows)
    checks = target_check_figures(run)
    speeds = kept_speed(run)
    if speeds is None:
        speeds = load(RUN_SPEED)(run, averages_rows)
    speed = {t["targetId"]: t for t in speeds["targets"]}
    goodput = (load(RUN_GOODPUT)(run, speed=speeds) if run_slo(run) else None) or {"targets": []}
    slo = {t["targetId"]: t for t in goodput["targets"]}
    rows = []
    for raw in averages_rows:
        r = averages_to_dict(raw)
        fig = figures.get(raw["target_id"]) or {}
        rows.append(
            {
                "target": r.get("label"),
                "completed": r.get("completed", 0),
                "failed": (r.get("failedAnswer") or 0) + (r.get("failedJudge") or 0),
                "avgScore": r.get("avgScore"),
                "avgTimeMs": r.get("avgTimeMs"),
                "avgTokensPerSecond": r.get("avgTokensPerSecond"),
                "costUsd": r.get("costUsd"),
                "autoFailRate": fig.get("auto_fail_rate"),
                "p50Ms": (fig.get("latency_ms") or {}).get("p50"),
                "compositeScore": _composite(composites.get(raw["target_id"])),
                "checks": _checks(checks.get(raw["target_id"])),
                "speed": compact_speed(speed.get(raw["target_id"])),
                "slo": compact_slo(slo.get(raw["target_id"])),
                "steps": step_rows(speed.get(raw["target_id"]), slo.get(raw["target_id"])),
            }
        )
    return rows


def step_rows(speed, slo=None):
    """A target's figures per load step (results/speed.py's steps, with goodput.py's SLO
    attainment and goodput where the run has an SLO); [] for a run without load steps."""
    steps = (speed or {}).get("steps") or []
    good = {s["step"]: s for s in (slo or {}).get("steps") or []}
    rows = []
    for s in steps:
        g = good.get(s["step"]) or {}
        rows.append(
            {
                "step": s["step"] + 1,
                "mode": s["mode"],
                "load": s["load"],
                "requests": s["answers"],
                "outputTokensPerSecond": s["window"].get("outputTokensPerSecond"),
                "ttftP90Ms": s["ttftMs"].get("p90"),
                "itlP90Ms": (s["itlMs"] or {}).get("p90"),
                "good": g.get("good"),
                "sloMet": g.get("met"),
                "goodput": g.get("goodput"),
                "score": s["meanScore"],
            }
        )
    return rows


def compact_speed(figures):
    """The few speed figures the CLI prints per target (None when it has none)."""
    if not figures:
        return None
    window = figures["window"]
    return {
        "ttftP50Ms": figures["ttftMs"]["p50"],
        "ttftP90Ms": figures["ttftMs"]["p90"],
        "itlP50Ms": figures["itlMs"]["p50"],
        "e2eP90Ms": figures["e2eMs"]["p90"],
        "outputTokensPerSecond": window["outputTokensPerSecond"],
        "requestsPerSecond": window["requestsPerSecond"],
        "achievedConcurrency": window["achievedConcurrency"],
    }


def compact_slo(figures):
    """The SLO figures the CLI prints per target (None without an SLO in the run)."""
    if not figures:
        return None
    return {
        "good": figures["good"],
        "answers": figures["answers"],
        "goodput": figures["goodput"],
        "met": figures["met"],
        "highestLoad": figures["highestLoad"],
        "sentence": figures["sentence"],
    }


def _composite(composite):
    return None if composite is None else composite.score


def _checks(figures):
    """A target's checked answers: {answers, answersPassed, checks, checksPassed} (None when
    no answer of it was checked)."""
    if figures is None:
        return None
    return {
        "answers": figures.answers,
        "answersPassed": figures.answers_passed,
        "checks": figures.checks,
        "checksPassed": figures.checks_passed,
    }
