"""Which of the selected tasks a run asks, from the command line: `--filter-pattern REGEX` (the
task id or the question), `--filter-failing RUN` (the tasks that failed, auto-failed or scored
under the pass score in that run, or in a results.jsonl kept from it), `--sample N --seed S`.

The plan applies them (run_plan.select_tasks), so `--dry-run` and `validate` count the tasks
the run will hold."""

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

from ..db.models import COMPLETED
from ..db.models import Item
from ..db.models import Run
from ..errors import NotFound
from ..errors import ValidationError

DEFAULT_PASS_SCORE = 50.0


@dataclass
class TaskFilters:
    """The filters as given; `failing` is the task ids --filter-failing found (None: off)."""

    pattern: str | None = None
    failing: frozenset | None = None
    failing_from: str | None = None
    sample: int | None = None
    seed: int | None = None

    def __bool__(self):
        return any(v is not None for v in (self.pattern, self.failing, self.sample))

    def regex(self):
        """The pattern compiled, or a ValidationError naming --filter-pattern."""
        try:
            return re.compile(self.pattern) if self.pattern is not None else None
        except re.error as exc:
            raise ValidationError.field(
                "--filter-pattern", f"not a regular expression: {exc}"
            ) from None

    def keep(self, task_ids, matching):
        """`task_ids` (in run order) filtered: the pattern's matches (`matching`: the ids
        whose id or question matched), the failing tasks, then a sample kept in run order."""
        ids = list(task_ids)
        if self.pattern is not None:
            ids = [t for t in ids if t in matching]
        if self.failing is not None:
            ids = [t for t in ids if t in self.failing]
        if self.sample is not None and self.sample < len(ids):
            chosen = set(random.Random(self.seed).sample(ids, self.sample))
            ids = [t for t in ids if t in chosen]
        return ids


def _bad(row, status_key, score_key, auto_key, pass_score):
    if row.get(status_key) != COMPLETED:
        return row.get(status_key) in ("FAILED", "CANT_BE_FINISHED")
    score = row.get(score_key)
    return bool(row.get(auto_key)) or score is None or score < pass_score


def failing_tasks(source, pass_score=None):
    """Task ids that failed, auto-failed or scored under `pass_score` (default 50) in the run
    `source` names (a run id, or a results.jsonl file kept from a run)."""
    pass_score = DEFAULT_PASS_SCORE if pass_score is None else pass_score
    path = Path(source)
    if path.is_file():
        failing = set()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValidationError.field(
                    "--filter-failing", f"{path} line {number}: not JSON ({exc.msg})"
                ) from None
            if not isinstance(row, dict) or "taskId" not in row:
                raise ValidationError.field(
                    "--filter-failing", f"{path} line {number}: not a results.jsonl row"
                )
            if _bad(row, "status", "score", "autoFail", pass_score):
                failing.add(row["taskId"])
        return frozenset(failing)
    run = Run.get_or_none(Run.run_id == source)
    if run is None:
        raise NotFound(
            f"--filter-failing: no run {source!r} in this database, and no such results file"
        )
    query = Item.select(Item.task_key, Item.status, Item.evaluation_score, Item.auto_fail).where(
        Item.run == run
    )
    return frozenset(
        key
        for key, status, score, auto_fail in query.tuples()
        if _bad({"s": status, "v": score, "a": auto_fail}, "s", "v", "a", pass_score)
    )
