"""People's ratings, votes and the judge check in a run's files: LLM Runner's report as CSV, and
its sections in summary.json and the Markdown (report.html's, with its charts, is
ratings_html.py's: the summary draws no chart, so it does not import pygal)."""

import io

from ..files.csvcells import SafeWriter
from ..ratings.judge_check import judge_check
from ..ratings.kept import kept_run_report
from ..ratings.leaderboard import leaderboard
from ..ratings.report import KPI_COLUMNS
from ..ratings.report import kpi_csv_row
from ..ratings.report import kpi_to_dict
from ..ratings.report import run_report
from ..results.composite import DEFAULT_SETTINGS
from ..results.composite_figures import target_composites
from .rows import number

MARKDOWN_HEADER = (
    "Provider",
    "Target",
    "Avg rating",
    "Ratings",
    "Win rate",
    "Votes",
    "Cost / 1k tasks (USD)",
    "Avg latency (ms)",
    "Avg tokens",
)


def report_csv_chunks(run, composite_settings=DEFAULT_SETTINGS):
    """LLM Runner's report table, one line per target (KPI_COLUMNS first, in their order, then
    the composite score), CRLF."""
    composites = target_composites(run, composite_settings)
    buffer = io.StringIO()
    writer = SafeWriter(buffer)
    writer.writerow((*KPI_COLUMNS, "composite_score"))
    # The report kept while the run, its ratings and votes hold (it reads every item).
    for row in kept_run_report(run)["targets"]:
        c = composites.get(row["target_id"])
        values = (*kpi_csv_row(row), number(c.score if c else None))
        writer.writerow(["" if v is None else v for v in values])
    yield buffer.getvalue()


def ratings_summary(run):
    """summary.json's "ratings": the KPIs per target, the leaderboard of the run's own votes and
    the judge check (numbers only, like the rest of the summary)."""
    check = judge_check(run.run_id)
    board = leaderboard([run])
    return {
        "targets": [kpi_to_dict(row) for row in run_report(run)["targets"]],
        "leaderboard": {
            "votes": board["votes"],
            "rows": [
                {k: v for k, v in row.items() if k not in ("targetId", "runId")}
                for row in board["rows"]
            ],
            "consistency": board["consistency"],
        },
        "judgeCheck": {
            "tasks": check["tasks"],
            "ordered": check["ordered"],
            "tied": check["tied"],
            "inverted": check["inverted"],
            "orderedRate": check["orderedRate"],
            "cannotTell": check["cannotTell"],
            "meanByLevel": check["meanByLevel"],
            "humanAgreement": {
                k: check["humanAgreement"][k] for k in ("n", "weightedKappa", "spearman", "bins")
            },
        },
    }


def _pct(value):
    return "" if value is None else f"{value * 100:.0f} %"


def ratings_markdown(run, cell):
    """The Markdown section: the report table, then the judge check in two lines."""
    report = run_report(run)["targets"]
    yield "\n## Ratings, votes and cost per target\n\n"
    yield "| " + " | ".join(MARKDOWN_HEADER) + " |\n"
    yield "| --- | --- | " + " | ".join(["---:"] * (len(MARKDOWN_HEADER) - 2)) + " |\n"
    for row in report:
        values = (
            row["provider"],
            row["target"],
            number(row["avg_rating"]),
            row["ratings"],
            _pct(row["winrate"]),
            row["votes"],
            number(row["cost_per_1k_tasks"], 4),
            number(row["avg_latency_ms"], 0),
            number(row["avg_tokens"], 1),
        )
        yield "| " + " | ".join(cell(v) for v in values) + " |\n"
    check = judge_check(run.run_id)
    if check["tasks"]:
        means = check["meanByLevel"]
        yield (
            f"\nJudge check: of {check['tasks']} tasks the judge ordered excellent > good > pass "
            f"on {check['ordered']} ({_pct(check['orderedRate'])}), tied {check['tied']} and "
            f"inverted {check['inverted']}"
            + ("; the judge cannot tell these apart" if check["cannotTell"] else "")
            + "; mean scores excellent "
            f"{number(means['excellent'], 1)}, good {number(means['good'], 1)}, pass "
            f"{number(means['pass'], 1)}.\n"
        )
    agreement = check["humanAgreement"]
    if agreement["n"]:
        yield (
            f"\nJudge vs people on {agreement['n']} rated items: weighted κ "
            f"{number(agreement['weightedKappa'], 2) or 'n/a'}, Spearman ρ "
            f"{number(agreement['spearman'], 2) or 'n/a'} ({agreement['bins']}).\n"
        )
