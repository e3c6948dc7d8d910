"""Compare of two runs (compare.compare_runs), kept per state of both (kept.py): it pairs every
task of the two runs and bootstraps the paired differences, seconds at 100 000 items, so a view
of two unchanged runs reads one row instead (stored with run A, named after run B:
kept.kept_across)."""

import hashlib
import json

from .compare import compare_runs
from .composite import DEFAULT_SETTINGS
from .kept import code_stamp
from .kept import is_kept_across
from .kept import kept_across

# The code of the comparison, in its stamp: one kept by an older version is worked out again.
# Task changes the compare page and its Markdown list: part of a kept compare's name, so the
# compare exports/warm.py works out ahead is the one the page reads.
PAGE_LIMIT = 25
_CODE = code_stamp(__file__, ("compare.py", "compare_pairs.py", "stats.py"))


def kept_compare_runs(run_a, run_b, limit=50, composite_settings=DEFAULT_SETTINGS, memory=True):
    """compare_runs(run_a, run_b, limit, composite_settings), read back while both runs (their
    rows and items) and the settings hold; `memory` as results/kept.kept_figures has it."""
    name, also = _kept_as(run_a, run_b, limit, composite_settings)
    return kept_across(
        [run_a, run_b],
        name,
        lambda: compare_runs(run_a, run_b, limit=limit, composite_settings=composite_settings),
        also=also,
        memory=memory,
    )


def compare_is_kept(run_a, run_b, limit=50, composite_settings=DEFAULT_SETTINGS):
    """Whether kept_compare_runs(run_a, run_b, limit, composite_settings) would read a kept row
    now (both runs' stamps and one index read, no item)."""
    name, also = _kept_as(run_a, run_b, limit, composite_settings)
    return is_kept_across([run_a, run_b], name, also=also)


def _kept_as(run_a, run_b, limit, composite_settings):
    """(name, also) a compare is kept under: the page's limit and settings, the code and both
    runs' rows."""
    settings = hashlib.sha256(repr(composite_settings).encode()).hexdigest()[:16]
    rows = json.dumps([run_a.__data__, run_b.__data__], sort_keys=True, default=str)
    return f"compare:{limit}:{settings}", f"{_CODE}|{rows}"
