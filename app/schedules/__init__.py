"""Templates, schedules, the queue, trends, baselines and regression alerts."""
