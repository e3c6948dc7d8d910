"""Reuse on request (`llmbench run --reuse`): a new run's items take earlier work instead of
asking again. Off by default: a benchmark measures speed.

- An answer is taken from the latest earlier item with the same context hash (provider, base
  URL, model, params, messages, template version, tools offered) that has one.
- Its checks are scored afresh against the item's own (a changed check never keeps the old
  result); when they settle it (a gate failed, or no judge scores the task) it is completed.
- A judgement too, when that earlier item was judged by the same judge (provider, model,
  params, judge prompt, scoreWeights) for the same rubric, auto-fail rules, references and
  checks: the judge would have seen exactly what it saw then, weighed the same.

A reused item is marked (`answer_reused_from`, `judgement_reused_from`: the earlier item's id),
costs this run nothing and carries no speed figures (time, TTFT, tokens/s, the stream's timing
and its sent time stay empty), so averages, percentiles and the run's throughput window only
hold what this run measured.
"""

from peewee import fn

from ..db.models import COMPLETED
from ..db.models import FAILED
from ..db.models import NEW
from ..db.models import WAITING_FOR_JUDGE
from ..db.models import Item
from ..db.models import Run
from ..hashing import canonical_params
from ..scoring.item_score import check_columns
from ..scoring.item_score import rule_scores
from ..scoring.item_score import settled
from ..scoring.score import FACTS

ANSWER_FIELDS = (
    "answer",
    "response_raw",
    "request_json",
    "finish_reason",
    "prompt_tokens",
    "tokens_generated",
    "tokens_estimated",
    "answer_cut",
    "tool_calls",
    # A count of the answer's tokens like tokens_generated; its stream timing (first answer
    # token, last token, sent, events, gaps, queue) stays behind with the speed figures.
    "reasoning_tokens",
)
JUDGEMENT_FIELDS = (
    "judge_request_json",
    "judge_raw",
    "evaluation_score",
    "evaluation_reason",
    "rubric_scores",
    "auto_fail",
    "auto_fail_reason",
    "judge_scores",
)
# What the judge sees besides the answer (the question is in the context hash), and the checks
# its score was combined with.
JUDGED_ON = (
    "rubric",
    "auto_fail_rules",
    "excellent",
    "good",
    "pass_answer",
    "incorrect_direction",
    "checks",
)
CHUNK = 500


def _judge_key(run):
    return (
        run.judge_provider_name,
        run.judge_model,
        tuple(sorted(canonical_params(run.judge_params).items(), key=str)),
        run.prompt_hash,
        repr(_weights(run)),
    )


def _weights(run):
    return (run.settings or {}).get("scoreWeights")


def _snapshot(item):
    return tuple(repr(getattr(item, name)) for name in JUDGED_ON)


def _sources(run, hashes):
    """Earlier answered items per context hash, newest first, with their run's judge key."""
    found = {}
    judges = {}
    for start in range(0, len(hashes), CHUNK):
        chunk = hashes[start : start + CHUNK]
        query = (
            Item.select()
            .where(
                Item.context_hash.in_(chunk)
                & (Item.run != run.id)
                & Item.answer.is_null(False)
                & (fn.LENGTH(Item.answer) > 0)
                & (
                    Item.status.in_([WAITING_FOR_JUDGE, COMPLETED])
                    | ((Item.status == FAILED) & (Item.error_stage == "judge"))
                )
            )
            .order_by(Item.id.desc())
        )
        for item in query:
            found.setdefault(item.context_hash, []).append(item)
            judges.setdefault(item.run_id, None)
    runs = Run.select().where(Run.id.in_(list(judges))) if judges else []
    return found, {r.id: _judge_key(r) for r in runs}


def reuse_earlier(run, now):
    """Fill `run`'s NEW items from earlier runs; {"answers": n, "judgements": m} reused."""
    items = list(Item.select().where((Item.run == run) & (Item.status == NEW)))
    hashes = sorted({i.context_hash for i in items if i.context_hash})
    if not hashes:
        return {"answers": 0, "judgements": 0}
    found, judge_keys = _sources(run, hashes)
    mine = _judge_key(run)
    answers = judgements = 0
    judge, weights = bool(run.judge_model), _weights(run)
    for item in items:
        candidates = found.get(item.context_hash)
        if not candidates:
            continue
        judged = next(
            (
                c
                for c in candidates
                if c.status == COMPLETED
                and judge
                and c.judge_raw is not None
                and judge_keys.get(c.run_id) == mine
                and _snapshot(c) == _snapshot(item)
            ),
            None,
        )
        source = judged or candidates[0]
        fields = {name: getattr(source, name) for name in ANSWER_FIELDS}
        fields.update(
            status=WAITING_FOR_JUDGE,
            answer_reused_from=source.id,
            answered_at=now,
            updated_at=now,
        )
        # A reused answer carries no speed figures: its checks see only what it kept.
        facts = {name: fields.get(name) for name in FACTS}
        scores = rule_scores(item, source.answer, facts)
        fields.update(check_columns(scores))
        score = settled(scores, item, judge, weights)
        if score is not None:
            fields.update(
                status=COMPLETED,
                evaluation_score=score.score,
                evaluation_reason=score.reason,
                rubric_scores=score.rubric_scores,
                auto_fail=score.auto_fail,
                auto_fail_reason=score.auto_fail_reason if score.auto_fail else None,
                judged_at=now,
            )
        elif judged is not None:
            fields.update({name: getattr(judged, name) for name in JUDGEMENT_FIELDS})
            fields.update(status=COMPLETED, judgement_reused_from=judged.id, judged_at=now)
            judgements += 1
        Item.update(**fields).where((Item.id == item.id) & (Item.status == NEW)).execute()
        answers += 1
    return {"answers": answers, "judgements": judgements}


def reuse_counts(run):
    """How many of the run's items took an earlier answer / judgement."""
    answers, judgements = (
        Item.select(fn.COUNT(Item.answer_reused_from), fn.COUNT(Item.judgement_reused_from))
        .where(Item.run == run)
        .tuples()
        .get()
    )
    return {"answers": answers or 0, "judgements": judgements or 0}
