"""Quality gates for CI (`llmbench run --fail-under 70 --max-failed-pct 5 ...`).

Each gate is checked overall and per target (the composite score and the speed gates per target
only: they are a target's numbers); a gate that fails says which one, where and the figures. A
gate that cannot be measured (no scored item for a score gate, no judged item for the auto-fail
gate, no scored and timed answer for the composite, no TTFT, token gaps or send times for the
speed gates) fails too: CI must not pass on nothing.

The speed gates (`--max-ttft-p90 MS`, `--max-itl-p90 MS`, `--min-goodput R`) read run_speed's
percentiles and results/goodput.py: goodput against the run's SLO, or, in a run without one,
against these gates' own latency bounds. The limits asked for are a Gates (gate_limits.py).
"""

from ..runs.spec import run_slo
from .averages import model_averages
from .composite import DEFAULT_SETTINGS
from .composite_figures import target_composites
from .figures import overall_figures
from .figures import target_figures
from .goodput import number
from .goodput import run_goodput
from .goodput import slo_words
from .speed import run_speed

MIN_COMPOSITE = "--min-composite"
MAX_TTFT_P90 = "--max-ttft-p90"
MAX_ITL_P90 = "--max-itl-p90"
MIN_GOODPUT = "--min-goodput"
# (gate, speed figure, words, what it lacks when it cannot be checked) of the percentile gates.
PERCENTILE_GATES = (
    (MAX_TTFT_P90, "ttftMs", "p90 TTFT", "no answer with a TTFT"),
    (MAX_ITL_P90, "itlMs", "p90 ITL", "no token gaps (one-chunk or unstreamed answers)"),
)


def gate_cases(run, gates, composite_settings=DEFAULT_SETTINGS, averages=None):
    """[{gate, limit, scope, value, message}] of every per-target gate asked for (composite,
    then the speed gates), one per target each in the run's order; message is None where the
    target passes (JUnit lists passes too)."""
    averages = model_averages(run) if averages is None else averages
    cases = []
    if gates.min_composite is not None:
        cases += [
            {"gate": MIN_COMPOSITE, "limit": gates.min_composite, **case}
            for case in composite_cases(run, gates.min_composite, composite_settings, averages)
        ]
    if any(v is not None for v in gates.speed_limits()):
        cases += speed_cases(run, gates, averages)
    return cases


def speed_cases(run, gates, averages=None):
    """The speed gates' cases ({gate, limit, scope, value, message}), per target: p90 TTFT and
    p90 ITL (ms) from run_speed, goodput (answers/s) from results/goodput.py."""
    averages = model_averages(run) if averages is None else averages
    speed = run_speed(run, averages)
    by_id = {t["targetId"]: t for t in speed["targets"]}
    cases = []
    for (gate, figure, words, lacking), limit in zip(
        PERCENTILE_GATES, (gates.max_ttft_p90, gates.max_itl_p90), strict=True
    ):
        if limit is None:
            continue
        for row in averages:
            scope = row["label"]
            value = ((by_id.get(row["target_id"]) or {}).get(figure) or {}).get("p90")
            if value is None:
                message = f"{scope}: {lacking}, so the {words} cannot be checked"
            elif value > limit:
                shown = f"{value:.0f}" if value >= 10 else f"{value:.2f}"
                message = f"{scope}: {words} {shown} ms is over {number(limit)} ms"
            else:
                message = None
            cases.append(
                {"gate": gate, "limit": limit, "scope": scope, "value": value, "message": message}
            )
    if gates.min_goodput is not None:
        cases += _goodput_cases(run, gates, averages, speed)
    return cases


def goodput_slo(run, gates):
    """The SLO --min-goodput counts good answers against: the run's own, or with none, the
    latency bounds of --max-ttft-p90 and --max-itl-p90 ({} with neither: every answer that did
    not auto-fail is good)."""
    slo = run_slo(run)
    if slo:
        return slo
    bounds = {"ttftP90Ms": gates.max_ttft_p90, "itlP90Ms": gates.max_itl_p90}
    return {key: value for key, value in bounds.items() if value is not None}


def _goodput_cases(run, gates, averages, speed):
    slo = goodput_slo(run, gates)
    found = run_goodput(run, slo=slo, speed=speed)
    by_id = {t["targetId"]: t for t in found["targets"]}
    against = f" (SLO: {slo_words(slo)})" if slo else " (no SLO: answers that did not auto-fail)"
    limit = gates.min_goodput
    cases = []
    for row in averages:
        scope = row["label"]
        value = (by_id.get(row["target_id"]) or {}).get("goodput")
        if value is None:
            message = f"{scope}: no answer with a send time, so the goodput cannot be checked"
        elif value < limit:
            message = f"{scope}: goodput {value:.2f} answers/s is under {number(limit)}{against}"
        else:
            message = None
        cases.append(
            {
                "gate": MIN_GOODPUT,
                "limit": limit,
                "scope": scope,
                "value": value,
                "message": message,
            }
        )
    return cases


def composite_cases(run, limit, composite_settings=DEFAULT_SETTINGS, averages=None):
    """[{scope, value, message}] of the composite gate, one per target in the run's order:
    message is None when the target's composite is at least `limit` (JUnit lists passes too)."""
    averages = model_averages(run) if averages is None else averages
    composites = target_composites(run, composite_settings, averages)
    cases = []
    for row in averages:
        c = composites.get(row["target_id"])
        scope = row["label"]
        if c is None:
            message = f"{scope}: no scored answer with a time, so the composite cannot be checked"
        elif c.score < limit:
            message = f"{scope}: composite {_fmt(c.score)} is under {_fmt(limit)}"
        else:
            message = None
        cases.append({"scope": scope, "value": c.score if c else None, "message": message})
    return cases


def _fmt(value):
    return f"{value:.1f}"


def _score_failure(scope, score, limit):
    if score is None:
        return f"{scope}: no scored item, so the score cannot be checked"
    if score < limit:
        return f"{scope}: score {_fmt(score)} is under {_fmt(limit)}"
    return None


def _pct_failure(scope, what, pct, count, total, limit, unmeasured):
    if pct is None:
        return f"{scope}: {unmeasured}"
    if pct > limit:
        return f"{scope}: {what} {_fmt(pct)} % ({count} of {total}) is over {_fmt(limit)} %"
    return None


def check_gates(run, gates, composite_settings=DEFAULT_SETTINGS):
    """[{gate, limit, scope, value, message}] for every gate that fails ([] when all pass)."""
    if not gates:
        return []
    averages = model_averages(run)
    figures = target_figures(run)
    overall = overall_figures(figures)
    scored = sum(r["score_n"] for r in averages)
    overall_score = (
        sum(r["avg_score"] * r["score_n"] for r in averages if r["score_n"]) / scored
        if scored
        else None
    )
    scopes = [("overall", overall_score, overall)] + [
        (r["label"], r["avg_score"], figures.get(r["target_id"])) for r in averages
    ]
    failures = []
    for scope, score, fig in scopes:
        fig = fig or {"failed_pct": None, "auto_fail_rate": None}
        checks = []
        if gates.fail_under is not None:
            checks.append(
                (
                    "--fail-under",
                    gates.fail_under,
                    score,
                    _score_failure(scope, score, gates.fail_under),
                )
            )
        if gates.max_failed_pct is not None:
            message = _pct_failure(
                scope,
                "failed items",
                fig["failed_pct"],
                fig.get("failed"),
                fig.get("items"),
                gates.max_failed_pct,
                "no items",
            )
            checks.append(("--max-failed-pct", gates.max_failed_pct, fig["failed_pct"], message))
        if gates.max_auto_fail_pct is not None:
            message = _pct_failure(
                scope,
                "auto-fail rate",
                fig["auto_fail_rate"],
                fig.get("auto_failed"),
                fig.get("judged"),
                gates.max_auto_fail_pct,
                "no judged item, so the auto-fail rate cannot be checked",
            )
            checks.append(
                ("--max-auto-fail-pct", gates.max_auto_fail_pct, fig["auto_fail_rate"], message)
            )
        for gate, limit, value, message in checks:
            if message is not None:
                failures.append(
                    {
                        "gate": gate,
                        "limit": limit,
                        "scope": scope,
                        "value": value,
                        "message": message,
                    }
                )
    if gates.per_target():
        failures += [
            case
            for case in gate_cases(run, gates, composite_settings, averages)
            if case["message"] is not None
        ]
    return failures


def junit_cases(run, gates, composite_settings=DEFAULT_SETTINGS):
    """The per-target gates as JUnit testcases: (target, "--min-composite N" or
    "--max-ttft-p90 MS" ..., failure or None)."""
    return [
        (case["scope"], f"{case['gate']} {number(case['limit'])}", case["message"])
        for case in gate_cases(run, gates, composite_settings)
    ]
