"""Datasets: import and export tasks in every seed format."""
