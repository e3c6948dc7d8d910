"""A baseline against several runs: one pairwise comparison each (results/compare.py), gathered
per model, and the order people expect (the older run is the baseline, newer ones follow).
Each comparison is kept per state of its two runs (kept_compare.py): a view of unchanged runs
reads one row per other run, not every item of each."""

from ..db.models import Run
from ..errors import NotFound
from .composite import DEFAULT_SETTINGS
from .kept_compare import kept_compare_runs


def runs_in_order(run_ids):
    """The runs named (each once), oldest first. Raises NotFound naming every missing one."""
    wanted = list(dict.fromkeys(r for r in run_ids if r))
    found = {r.run_id: r for r in Run.select().where(Run.run_id.in_(wanted))}
    missing = [r for r in wanted if r not in found]
    if missing:
        raise NotFound(f"no run named {', '.join(missing)}")
    return sorted(found.values(), key=lambda r: (r.created_at, r.id))


def pick_baseline(runs, base_id=None):
    """(baseline, the others oldest first): the run named `base_id`, else the oldest."""
    base = next((r for r in runs if r.run_id == base_id), runs[0])
    return base, [r for r in runs if r is not base]


def newer_default(run_id, choices):
    """The run to offer as B beside A: the newest run created after A, else the newest
    other one. `choices` are (run_id, label) newest first (compare.run_choices)."""
    ids = [c[0] for c in choices]
    if run_id not in ids:
        return None
    newer = ids[: ids.index(run_id)]
    if newer:
        return newer[0]
    others = [i for i in ids if i != run_id]
    return others[0] if others else None


def compare_baseline(base, others, limit=10, composite_settings=DEFAULT_SETTINGS):
    """The baseline against each other run: the pairwise comparisons and, per model, the
    comparison's model row for each run (None where that run lacks the model)."""
    comparisons = [
        kept_compare_runs(base, other, limit=limit, composite_settings=composite_settings)
        for other in others
    ]
    labels = []
    for comparison in comparisons:
        labels += [m["label"] for m in comparison["models"] if m["label"] not in labels]
    models = []
    for label in labels:
        cells = []
        for comparison in comparisons:
            row = next((m for m in comparison["models"] if m["label"] == label), None)
            cells.append(row)
        models.append({"label": label, "cells": cells})
    return {
        "base": comparisons[0]["a"] if comparisons else None,
        "runs": [c["b"] for c in comparisons],
        "comparisons": comparisons,
        "models": models,
    }


def delta_series(comparisons):
    """[(run_id, {model label: score change})] for the chart: the paired mean change on
    shared tasks where there is one, else the change of averages."""
    series = []
    for comparison in comparisons:
        values = {}
        for m in comparison["models"]:
            paired = m["pairedScore"]["meanDiff"]
            values[m["label"]] = paired if paired is not None else m["scoreDelta"]
        series.append((comparison["b"]["runId"], values))
    return series
