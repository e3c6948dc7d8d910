"""Doing the work: the scheduler thread, the orchestrator, lease, claims, workers, warm-ups."""
