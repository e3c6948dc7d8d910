"""What a scorer is and what it gives back: a Score (0-100, pass or fail, a reason, maybe an
auto-fail) for one task's answer.

A scorer's stage says when the engine asks it. A rule scorer (ANSWER) needs no model call: it
is asked right after an answer is stored, and again beside a judgement, so it must be pure (the
same task, answer and facts give the same Score). A scorer that needs a call (JUDGE) is asked in
the judge stage with the run's judge model, under its claims, retries, budget and pause.
"""

from dataclasses import dataclass

ANSWER = "answer"
JUDGE = "judge"
PASS_SCORE = 50.0  # the rubric's "passing answer" band starts here

# The task as a scorer reads it beside its task_key: the item's snapshot of the task.
TASK_FIELDS = (
    "question",
    "excellent",
    "good",
    "pass_answer",
    "incorrect_direction",
    "rubric",
    "auto_fail_rules",
    "checks",
)
# The answer's call facts a rule scorer may read beside the answer (the item's columns).
FACTS = (
    "time_taken_ms",
    "ttft_ms",
    "prompt_tokens",
    "tokens_generated",
    "tokens_per_second",
    "cost_usd",
    "finish_reason",
    "answer_cut",
    "tool_calls",  # [{name, arguments}] the answer called (tool-call checks read them)
)


@dataclass(frozen=True)
class Score:
    """One scorer's verdict on one answer."""

    score: float  # 0-100
    passed: bool
    reason: str
    by: str  # the scorer's name
    auto_fail: bool = False  # failed hard: the item scores 0 whatever the other scorers say
    rubric_scores: dict | None = None  # per rubric id, when the scorer read a rubric
    auto_fail_reason: str | None = None  # what failed it hard, in words (kept on the item)
    check_results: list | None = None  # each check's result as plain JSON (the checks scorer)

    @classmethod
    def of(cls, score, reason, *, by, auto_fail=False, rubric_scores=None, auto_fail_reason=None):
        """A Score that passes at PASS_SCORE and up, unless it auto-fails (then it is 0)."""
        score = 0.0 if auto_fail else round(float(score), 2)
        return cls(
            score=score,
            passed=not auto_fail and score >= PASS_SCORE,
            reason=reason,
            by=by,
            auto_fail=auto_fail,
            rubric_scores=rubric_scores,
            auto_fail_reason=auto_fail_reason if auto_fail else None,
        )


class Scorer:
    """A way to score an answer. A rule scorer overrides score(); one that needs a call sets
    stage = JUDGE and overrides ask()."""

    name = ""
    stage = ANSWER

    @property
    def needs_call(self):
        return self.stage == JUDGE

    def applies(self, task):
        """Whether this scorer scores the task (every task unless a scorer says otherwise)."""
        return True

    def score(self, task, answer, facts):
        """A rule scorer's Score for `answer` to `task`; `facts` maps FACTS to the call's."""
        raise NotImplementedError

    def ask(self, adapter, model, task, *, params, keep_alive, cancel):
        """A call scorer's (Score, call): the call holds `request`, `raws`, `ms` and
        `completions`; a failure raises judge_calls.JudgeError carrying the same."""
        raise NotImplementedError


def combine(scores, weights=None):
    """An item's one score from its scorers': their mean (weighted by `weights`, {by: weight},
    where given; a scorer it leaves out weighs 1), 0 when any auto-fails; it passes when every
    one that weighs anything passes. One score stands as it is."""
    if len(scores) == 1:
        return scores[0]
    weights = [(weights or {}).get(s.by, 1.0) for s in scores]
    total = sum(weights)
    auto_fail = any(s.auto_fail for s in scores)
    mean = sum(w * s.score for w, s in zip(weights, scores, strict=True)) / total if total else 0
    return Score(
        score=0.0 if auto_fail else round(mean, 2),
        passed=all(s.passed for w, s in zip(weights, scores, strict=True) if w),
        reason="; ".join(f"{s.by}: {s.reason}" for s in scores),
        by="+".join(s.by for s in scores),
        auto_fail=auto_fail,
        rubric_scores=_first(scores, "rubric_scores"),
        auto_fail_reason=_first([s for s in scores if s.auto_fail], "auto_fail_reason"),
        check_results=_first(scores, "check_results"),
    )


def _first(scores, name):
    return next((getattr(s, name) for s in scores if getattr(s, name) is not None), None)
