"""The CLI's run config (YAML or JSON, apocbench-like): strict schema, errors with key paths
and lines, then a plan that a dry run prints and a real run applies.

    run:        {name, id?, dataset?, dataset_format?, dataset_collection?, on_duplicate?,
                 collections?, question_limit?, categories?, max_attempts?, max_budget_usd?,
                 concurrency?, judge_concurrency?, resume?, out_dir?, judge_check?}
    providers:  [{name, type?, base_url?, models_endpoint?, inference_endpoint?, headers?,
                  timeout_seconds?, max_concurrency?}]      created, or updated where given
    judge:      {provider: NAME | {inline provider}, model, params?}
    targets:    [{provider: NAME | {inline provider}, model, params?, label?}]  a model may
                 come twice with other params (each its own target)
    prices:     [{provider, model, input_per_1m, output_per_1m}]   saved to the price table
Header values and base_url may use ${ENV_VAR}; such headers are stored encrypted, never printed.
An apocbench-style shape (routers, models) is read too (apocbench.py), and a promptfoo suite
(promptfoo.py: prompts, tests, providers); one invocation's
overrides (invocation.py) are written in before the check. checker.py holds the
key sets and the checker; run_plan.py the RunPlan, which it applies (writes) or describes.
"""

import os
from pathlib import Path

from ..datasets.common import Problems
from ..datasets.common import summary_message
from ..datasets.lines import LineDict
from ..datasets.lines import YamlSyntaxError
from ..datasets.lines import load_yaml
from ..errors import ValidationError
from . import apocbench
from . import invocation
from . import promptfoo
from .checker import ConfigChecker


def load(
    path,
    environ=None,
    overrides=None,
    allow_unpriced=False,
    skip_unsupported=False,
    filters=None,
    store_dataset=False,
):
    """Read and validate a config file; RunPlan or ValidationError listing every problem.

    `overrides` (invocation.Overrides) change this invocation only; `allow_unpriced`
    accepts a budget with targets or a judge that have no price; `skip_unsupported` leaves
    out what the dataset holds that llmbench cannot run (a promptfoo javascript assert),
    listed in plan.dataset.unsupported, instead of refusing it; `filters`
    (filters.TaskFilters) narrow the tasks the plan selects; `store_dataset` imports the
    dataset as it is checked, inside the caller's transaction (run_plan.apply then does not)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ValidationError(
            [
                {
                    "file": str(path),
                    "line": None,
                    "field": None,
                    "message": f"cannot read the config: {exc.strerror}",
                }
            ]
        ) from None
    return parse(
        text,
        str(path),
        base_dir=path.parent,
        environ=environ,
        overrides=overrides,
        allow_unpriced=allow_unpriced,
        skip_unsupported=skip_unsupported,
        filters=filters,
        store_dataset=store_dataset,
    )


def parse(
    text,
    file="config",
    base_dir=".",
    environ=None,
    overrides=None,
    allow_unpriced=False,
    skip_unsupported=False,
    filters=None,
    store_dataset=False,
):
    """Validate config text (see the module docstring); RunPlan or ValidationError."""
    environ = os.environ if environ is None else environ
    problems = Problems(file)
    try:
        doc = load_yaml(text)
    except YamlSyntaxError as exc:
        problems.add(None, str(exc), exc.line)
        problems.raise_if_any()
    if not isinstance(doc, LineDict):
        problems.add(None, "the config must be a mapping with run, judge and targets", 1)
        problems.raise_if_any()
    tags = invocation.apply_sets(doc, overrides, problems)
    renames, reports_cost, rubric_tasks = {}, set(), None
    if apocbench.is_apocbench(doc):
        doc, renames, reports_cost = apocbench.convert(doc, problems)
    elif promptfoo.is_promptfoo(doc):
        doc = promptfoo.convert(doc, problems, file, environ)
        rubric_tasks = promptfoo.needs_judge(text, str(Path(base_dir) / Path(file).name))
    options = invocation.apply_options(doc, overrides, problems)
    if rubric_tasks and doc.get("judge") is None:
        shown = ", ".join(rubric_tasks[:10]) + (" ..." if len(rubric_tasks) > 10 else "")
        problems.add(
            "judge",
            f"these tasks have an llm-rubric assert and need a judge: {shown}; give "
            "--judge PROVIDER/MODEL or defaultTest.options.provider",
            1,
        )
    checker = ConfigChecker(
        doc,
        problems,
        Path(base_dir),
        environ,
        allow_unpriced,
        reports_cost=reports_cost,
        skip_unsupported=skip_unsupported,
        filters=filters,
        store_dataset=store_dataset,
    )
    start = len(problems.entries)
    plan = checker.plan()
    if problems:
        # Errors name the keys as the file (or the option) wrote them; the apocbench reader's
        # own errors do already.
        renames = {**checker.renames, **renames}
        invocation.rename_fields(problems.entries[start:], renames, file)
        named = [(_renamed(path, renames), label) for path, label in options]
        invocation.tag_problems(problems.entries, tags + named, file)
        # The config's problems in line order; a dataset's own follow, file by file.
        problems.entries.sort(key=lambda e: (e.get("file") != file, e.get("line") or 0))
        raise ValidationError(problems.entries, message=_message(problems.entries))
    plan.config_file = file
    return plan


def _renamed(path, renames):
    entry = {"field": path, "file": None}
    invocation.rename_fields([entry], renames, None)
    return entry["field"]


def _message(entries):
    return summary_message(entries).replace("nothing was imported", "nothing was run")
