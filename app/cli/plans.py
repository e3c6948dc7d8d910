"""A run config read into a plan, as `run`, `--dry-run` and `validate` read it.

Apart from options.py because the reader brings the providers, the HTTP adapters and a run's
creation with it: `validate` loads this module only for a run config (lazy.load), so checking
a dataset file imports none of that."""

from dataclasses import replace

from ..runconfig import reader
from ..runconfig import run_plan
from ..runconfig.filters import TaskFilters
from ..runconfig.filters import failing_tasks


def read_plan(
    config_path, overrides, selection, *, allow_unpriced, skip_unsupported, store_dataset=False
):
    """The plan `run`, `--dry-run` and `validate` all read (the same checks, the same counts);
    `selection`: the selection_options' values (and pass_score, where the command has it).
    `store_dataset`: `run` imports the dataset as it is checked, in its own transaction."""
    failing = None
    if selection.get("filter_failing"):
        failing = failing_tasks(selection["filter_failing"], selection.get("pass_score"))
    filters = TaskFilters(
        pattern=selection.get("filter_pattern"),
        failing=failing,
        failing_from=selection.get("filter_failing"),
        sample=selection.get("sample"),
        seed=selection.get("seed"),
    )
    filters.regex()  # a bad pattern is the option's error, before any file is read
    overrides = replace(
        overrides, models=tuple(selection.get("models") or ()), repeat=selection.get("repeat")
    )
    return reader.load(
        config_path,
        overrides=overrides,
        allow_unpriced=allow_unpriced,
        skip_unsupported=skip_unsupported,
        filters=filters,
        store_dataset=store_dataset,
    )


def check_config(config_path, overrides, selection, *, allow_unpriced, skip_unsupported):
    """`validate` of a run config: (its JSON event, its lines of text) for the plan read as
    `run` would read it; a bad config raises read_plan's ValidationError."""
    plan = read_plan(
        config_path,
        overrides,
        selection,
        allow_unpriced=allow_unpriced,
        skip_unsupported=skip_unsupported,
    )
    result = {**run_plan.plan_to_dict(plan), "event": "valid", "kind": "config"}
    text = [f"{config_path}: valid run config"] + ["  " + x for x in run_plan.describe(plan)]
    return result, text
