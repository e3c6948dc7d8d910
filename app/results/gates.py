"""Quality gates for CI (`llmbench run --fail-under 70 --max-failed-pct 5 ...`).

Each gate is checked overall and per target (the composite score per target only: it is a
target's number); a gate that fails says which one, where and the figures. A gate that cannot be
measured (no scored item for a score gate, no judged item for the auto-fail gate, no scored and
timed answer for the composite) fails too: CI must not pass on nothing.
"""

from dataclasses import dataclass

from .averages import model_averages
from .composite import DEFAULT_SETTINGS
from .composite_figures import target_composites
from .figures import overall_figures
from .figures import target_figures


@dataclass
class Gates:
    """Limits in points / percent; None means the gate is off."""

    fail_under: float | None = None
    max_failed_pct: float | None = None
    max_auto_fail_pct: float | None = None
    min_composite: float | None = None

    def __bool__(self):
        limits = (self.fail_under, self.max_failed_pct, self.max_auto_fail_pct, self.min_composite)
        return any(v is not None for v in limits)


MIN_COMPOSITE = "--min-composite"


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
    if gates.min_composite is not None:
        failures += [
            {"gate": MIN_COMPOSITE, "limit": gates.min_composite, **case}
            for case in composite_cases(run, gates.min_composite, composite_settings, averages)
            if case["message"] is not None
        ]
    return failures
