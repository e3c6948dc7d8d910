"""The judge: one answer scored against a rubric (rubric.py), two answers compared (pairwise.py)."""
