"""The SQL pieces every results query shares: failure kinds by stage, the score that counts."""

from peewee import Case
from peewee import fn

from ..db.models import CANT_BE_FINISHED
from ..db.models import COMPLETED
from ..db.models import FAILED
from ..db.models import Item
from ..db.models import RunTarget

I = Item  # noqa: E741 - short aliases keep the SQL builders readable
T = RunTarget

FAILED_STATUSES = (FAILED, CANT_BE_FINISHED)

# Item failures by stage. A judge failure is not a low score: it is counted apart everywhere.
_failed = I.status.in_(FAILED_STATUSES)
IS_JUDGE_FAILED = _failed & (I.error_stage == "judge")
IS_ANSWER_FAILED = _failed & (I.error_stage.is_null() | (I.error_stage != "judge"))
IS_WARMUP_FAILED = _failed & (I.error_stage == "warmup")
# Only a completed item has a score that counts.
SCORE = Case(None, [(I.status == COMPLETED, I.evaluation_score)], None)


def count_where(expr):
    """How many rows of the group `expr` holds for (0, never NULL)."""
    return fn.COALESCE(fn.SUM(Case(None, [(expr, 1)], 0)), 0)


def if_answered(column):
    """The column where the answer succeeded, else NULL (answer failures carry no speed)."""
    return Case(None, [(IS_ANSWER_FAILED, None)], column)
