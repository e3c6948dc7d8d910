"""Options shared by `run`, `resume` and `validate`: overrides, quality gates, CI outputs.

Only the options: reading the plan they shape is plans.py's, which imports the whole run
config reader (providers, the HTTP adapters, a run's creation) that `validate` of a dataset
never needs."""

import click

from ..results.gate_limits import Gates
from ..runconfig.invocation import Overrides
from .output import check_outputs

PERCENT = click.FloatRange(0, 100)


def _stack(*decorators):
    def apply(fn):
        for decorator in reversed(decorators):
            fn = decorator(fn)
        return fn

    return apply


override_options = _stack(
    click.option("--limit", help="Only the first N tasks (run.question_limit)."),
    click.option("--categories", help="Only these categories, comma separated (run.categories)."),
    click.option(
        "--concurrency",
        help="Answers in flight per target for this run (run.concurrency; default: the "
        "provider's max_concurrency).",
    ),
    click.option("--name", help="Run name (run.name; the run id is NAME-YYYYMMDD-HHMMSS)."),
    click.option(
        "--judge",
        help="Judge as PROVIDER/MODEL (judge.provider and judge.model), or none: the "
        "tasks' checks alone score the run.",
    ),
    click.option(
        "--set",
        "sets",
        multiple=True,
        metavar="KEY.PATH=VALUE",
        help="Set any config key for this invocation, as the file names it "
        "(e.g. --set targets[0].params.temperature=0.2); checked like the file. Repeatable.",
    ),
    click.option(
        "--allow-unpriced",
        is_flag=True,
        help="Accept a budget with targets or a judge that have no price (the server "
        "reports each call's cost, e.g. OpenRouter).",
    ),
    click.option(
        "--skip-unsupported",
        is_flag=True,
        help="Leave out what the dataset holds that llmbench cannot run (a promptfoo "
        "javascript assert, ...), listing each (file, line, assert) before the run.",
    ),
)


def overrides_from(limit, categories, concurrency, name, judge, sets):
    """The command line's overrides for reader.load."""
    return Overrides(limit, categories, concurrency, name, judge, tuple(sets))


selection_options = _stack(
    click.option(
        "--model",
        "models",
        multiple=True,
        metavar="PROVIDER/MODEL[:LABEL]",
        help="A target for this invocation, in place of the config's targets (the provider "
        "by its name in the config or the database). Repeatable; the label follows the last "
        "':' (an Ollama tag keeps its own with a label: ollama/llama3:8b:llama3).",
    ),
    click.option("--repeat", metavar="N", help="Ask each task N times (run.repeats)."),
    click.option(
        "--filter-pattern",
        metavar="REGEX",
        help="Only the tasks whose id or question the regular expression finds.",
    ),
    click.option(
        "--filter-failing",
        metavar="RUN",
        help="Only the tasks that failed, auto-failed or scored under the pass score "
        "(--pass-score, default 50) in RUN: a run id, or a results.jsonl kept from it.",
    ),
    click.option(
        "--sample",
        type=click.IntRange(1),
        metavar="N",
        help="Only N of the selected tasks, picked at random (the same N for the same --seed).",
    ),
    click.option("--seed", type=int, default=0, show_default=True, help="The --sample's pick."),
)


gate_options = _stack(
    click.option(
        "--fail-under",
        type=click.FloatRange(0, 100),
        metavar="SCORE",
        help="Exit 4 when the average score, overall or of any target, is under SCORE.",
    ),
    click.option(
        "--max-failed-pct",
        type=PERCENT,
        metavar="P",
        help="Exit 4 when more than P % of the items failed, overall or for any target.",
    ),
    click.option(
        "--max-auto-fail-pct",
        type=PERCENT,
        metavar="P",
        help="Exit 4 when more than P % of the judged answers auto-failed, overall or for "
        "any target.",
    ),
    click.option(
        "--min-composite",
        type=click.FloatRange(0, 100),
        metavar="N",
        help="Exit 4 when any target's composite score is under N (a JUnit testcase per "
        "target with --junit).",
    ),
    click.option(
        "--max-ttft-p90",
        type=click.FloatRange(0, min_open=True),
        metavar="MS",
        help="Exit 4 when any target's p90 time to first token is over MS milliseconds (a "
        "JUnit testcase per target with --junit).",
    ),
    click.option(
        "--max-itl-p90",
        type=click.FloatRange(0, min_open=True),
        metavar="MS",
        help="Exit 4 when any target's p90 gap between tokens is over MS milliseconds (a "
        "JUnit testcase per target with --junit).",
    ),
    click.option(
        "--min-goodput",
        type=click.FloatRange(0),
        metavar="R",
        help="Exit 4 when any target gives fewer than R good answers per second: answers "
        "meeting the run's SLO (settings.slo), or without one these gates' latency bounds, "
        "and not auto-failed (a JUnit testcase per target with --junit).",
    ),
    click.option(
        "--junit",
        type=click.Path(dir_okay=False),
        metavar="PATH",
        help="Write a JUnit XML file: one testcase per item (classname = target, name = task "
        "id); failed, auto-failed or under --pass-score is a failure.",
    ),
    click.option(
        "--pass-score",
        type=click.FloatRange(0, 100),
        default=None,
        metavar="SCORE",
        help="The score a JUnit testcase needs to pass (default 50).",
    ),
)


def gates_from(
    fail_under,
    max_failed_pct,
    max_auto_fail_pct,
    min_composite=None,
    max_ttft_p90=None,
    max_itl_p90=None,
    min_goodput=None,
):
    """The quality and speed gates asked for (all off when none is given)."""
    return Gates(
        fail_under,
        max_failed_pct,
        max_auto_fail_pct,
        min_composite,
        max_ttft_p90,
        max_itl_p90,
        min_goodput,
    )


file_options = _stack(
    click.option(
        "-o",
        "--output",
        "output_files",
        multiple=True,
        metavar="FILE",
        callback=check_outputs,
        help="Write a file of the run, its format from the extension: .jsonl (results per "
        "item), .json (summary), .csv (results per item), .xml (JUnit), .md (Markdown), .html "
        "(report). Relative to the working folder. Repeatable.",
    ),
    click.option(
        "--summary-md",
        type=click.Path(dir_okay=False),
        metavar="FILE",
        help="Write a Markdown summary (targets, scores, gates, files) to FILE; it is also "
        "appended to $GITHUB_STEP_SUMMARY when that is set.",
    ),
)
