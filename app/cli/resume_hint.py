"""The command that continues a halted run, as `llmbench run` and `show` print it: apart from
the foreground run (watched_run.py, the engine), which `show` does not load."""

from ..runs.live import budget_halt


def resume_hint(run):
    """How to continue an interrupted run; with a higher budget when the budget stopped it."""
    halt = budget_halt(run)
    if halt is not None:
        return f"llmbench resume {run.run_id} --max-budget-usd {halt['suggested']:.2f}"
    return f"llmbench resume {run.run_id}"
