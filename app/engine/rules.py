"""The rule scorers in the engine (scoring/registry.py): asked right after an answer is stored
and again beside its judgement (they are pure), with the task and the call's facts of the item.
With no rule scorer registered they read nothing and score nothing.

The run decides the judge's part: a run without a judge model asks no scorer that needs a
call, and its scoreWeights say how much the task's checks weigh beside the judgement."""

import threading
from types import SimpleNamespace

from ..db.connection import tuples_once
from ..db.models import Item
from ..scoring import registry
from ..scoring.item_score import call_scorer
from ..scoring.item_score import check_columns
from ..scoring.item_score import rule_scores
from ..scoring.item_score import settled
from ..scoring.score import FACTS
from ..scoring.score import combine
from ..scoring.task_checks import checks_weight
from ..scoring.task_checks import has_checks
from ..scoring.task_checks import parsed_checks
from ..scoring.task_checks import weights_of
from .claims import TASK_SNAPSHOT  # what its rule scorers and its call read of its task

# Tasks kept per run: a run of more tasks reads a task's snapshot again once it was dropped
# (one query, as every answer did before), and its memory stays bounded.
MAX_TASKS = 2000


class RunTasks:
    """The run's tasks as its items snapshot them, by task key, each read once (from the first
    item of it answered) with its checks parsed once: every item of a task in a run has the
    same snapshot (runs/lifecycle.create_run makes them in one transaction), so an answer's
    scoring and its call read no row of their own. Kept in the holder's memory of the run
    (engine/memory.py), shared by its worker threads."""

    def __init__(self, limit=MAX_TASKS):
        self.limit = limit
        self._tasks = {}
        self._lock = threading.Lock()

    def of(self, claim):
        """The task of a claimed item (a claims.Claimed or ClaimedAnswer): TASK_SNAPSHOT's fields
        and, where it has checks, `parsed_checks` (scoring/task_checks.parsed_checks)."""
        task = self._tasks.get(claim.task_key)
        if task is not None:
            return task
        # A judgement's claim carried the snapshot (claims.JUDGING): no row to read. An
        # answer's claim did not: the row is read, never a model instance loaded earlier.
        task = claim.task_snapshot() or _row(claim.id, TASK_SNAPSHOT)
        if has_checks(task):
            task.parsed_checks = parsed_checks(task)
        with self._lock:
            if len(self._tasks) >= self.limit:
                self._tasks.pop(next(iter(self._tasks)))  # the one read first
            self._tasks[claim.task_key] = task
        return task


def _row(item_id, columns):
    # Read here, not claimed: only rule scorers need it, and the claims stay lean. The SQL is
    # built once (tuples_once): peewee wrote this select anew per answer, and building it cost
    # more than running it (bench/profile_run.py --gil: 13 % of a 12k-call run's samples).
    rows = tuples_once(
        ("engine item row", columns),
        lambda: Item.select(*(getattr(Item, c) for c in columns)).where(Item.id == 0),
        (item_id,),
    )
    if not rows:
        raise Item.DoesNotExist(f"item {item_id}")
    return SimpleNamespace(**dict(zip(columns, rows[0], strict=True)))


def run_scoring(run):
    """(whether the run has a judge, its scoreWeights or None): what the engine passes on."""
    return bool(run.judge_model), (run.settings or {}).get("scoreWeights")


def judge_scorer(task, run):
    """The scorer that needs a call for this task in this run, or None: none without a judge
    model, nor where the task's checks take the whole score."""
    return call_scorer(task, *run_scoring(run))


def check_fields(score):
    """The item's columns a score fills beside evaluation_score: its checks' results and
    combined score, and what failed it hard."""
    fields = {"auto_fail_reason": score.auto_fail_reason if score.auto_fail else None}
    if score.check_results is not None:
        fields["check_results"] = score.check_results
    return fields


def settled_by_rules(task, answer, fields, run, judge=True):
    """(the item's score when rules alone settle it, else None; the columns its rule scores
    fill): rules settle it when no scorer that needs a call scores the task in this run, or a
    rule failed hard (a judge cannot lift an auto-fail's 0, so it is not asked). `task` is the
    item's (RunTasks.of), `fields` the answer's columns about to be stored (its facts among
    them). `judge` False: scored as in a run without a judge (a load step the judge does not
    score)."""
    if not registry.has_rules():
        return None, {}
    scores = rule_scores(task, answer, {name: fields.get(name) for name in FACTS})
    checks = check_columns(scores)
    stored = {**check_fields(combine(scores)), **checks} if checks else {}
    has_judge, weights = run_scoring(run)
    return settled(scores, task, has_judge and judge, weights), stored


def with_judgement(item, judged, run, tasks):
    """(the item's score: its rule scores, the judge's `judged` among them weighed by the
    run's scoreWeights, the columns the rule scores fill). `item` is the claimed answer,
    `tasks` the run's RunTasks."""
    scores = beside_judgement(item, tasks)
    _, weights = run_scoring(run)
    share = checks_weight(item, weights, judge=True)
    score = combine([*scores, judged], weights_of([*scores, judged], share))
    stored = check_fields(score)
    if checks := check_columns(scores):
        stored["check_score"] = checks["check_score"]
    return score, stored


def beside_judgement(item, tasks):
    """The rule scores of a claimed answer (claims.ClaimedAnswer: its text and task), to
    combine with its judgement ([] without rules); only its call's facts are read."""
    if not registry.has_rules():
        return []
    # The judgement's claim returned the answer's facts (claims.JUDGING): no row to read.
    facts = {name: getattr(item, name) for name in FACTS}
    return rule_scores(tasks.of(item), item.answer, facts)
