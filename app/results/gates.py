"""Quality gates for CI (`llmbench run --fail-under 70 --max-failed-pct 5 ...`).

Each gate is checked overall and per target; a gate that fails says which one, where and the
figures. A gate that cannot be measured (no scored item for a score gate, no judged item for the
auto-fail gate) fails too: CI must not pass on nothing.
"""

from dataclasses import dataclass

from .averages import model_averages
from .figures import overall_figures
from .figures import target_figures


@dataclass
class Gates:
    """Limits in points / percent; None means the gate is off."""

    fail_under: float | None = None
    max_failed_pct: float | None = None
    max_auto_fail_pct: float | None = None

    def __bool__(self):
        return any(
            v is not None for v in (self.fail_under, self.max_failed_pct, self.max_auto_fail_pct)
        )


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


def check_gates(run, gates):
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
    return failures
