"""report.html's section on people's ratings, votes and the judge check, with its charts."""

from markupsafe import Markup

from ..ratings.charts import report_chart
from ..ratings.judge_check import judge_check
from ..ratings.leaderboard import leaderboard
from ..ratings.report import has_labels
from ..ratings.report import report_with_latency

REPORT_CHART_CAPTIONS = (
    ("ratings", "How many answers people rated 1 to 5, per target."),
    ("latency", "Answer time histogram per target."),
    ("cost_quality", "Cost per 1000 tasks against the judge's score and people's rating."),
    ("tokens", "Average completion tokens per answer."),
)


def report_html_section(run):
    """report.html's ratings section (KPIs, charts as inline SVG, the judge check and the
    leaderboard), or None when the run has no ratings, votes or judge check."""
    if not has_labels(run):
        return None
    report = report_with_latency(run)
    return {
        "targets": report["targets"],
        # pygal escapes every label it draws; the SVG is ours, so it is safe to inline.
        "charts": {
            name: Markup(report_chart(report, name, narrow=True))
            for name, _caption in REPORT_CHART_CAPTIONS
        },
        "captions": REPORT_CHART_CAPTIONS,
        "check": judge_check(run.run_id),
        "board": leaderboard([run]),
    }
