"""The pairwise judge: prompt, JSON schema, strict validation and one repair, like rubric.py.

The judge sees the question, the task's references when it has them, and two answers labelled
A and B; it names the better one or a tie. Which answer is A is the caller's choice: a pair is
judged in both orders and the two verdicts combined (MT-Bench's rule, engine/calls.py).
"""

from ..hashing import sha256_json
from .judge_calls import ask
from .replies import JudgeOutputError
from .replies import json_object
from .replies import reason
from .rubric import JUDGE_SYSTEM_PROMPT

PAIRWISE_PROMPT_VERSION = "pairwise-v1"
REASON_MAX_LENGTH = 300
# The judge's words for its verdict -> which side won, as shown.
VERDICTS = {"A": "LEFT", "B": "RIGHT", "tie": "TIE"}

PAIRWISE_TEMPLATE = """Compare two ANSWERS to the QUESTION below and decide which one is better.

## Question
{question}
{references}
## Answer A
<answer_a>
{answer_a}
</answer_a>

## Answer B
<answer_b>
{answer_b}
</answer_b>

## Reply
Judge correctness first, then completeness and clarity. The order of the answers and their
length must not sway you. One JSON object with exactly these keys:
- "winner": "A" if answer A is better, "B" if answer B is better, "tie" if neither is;
- "reason": string, at most {reason_max} characters, why.
"""

REPAIR_TEMPLATE = (
    "Your reply could not be used: {error}\n"
    "Reply again with the corrected JSON object only (keys: winner, reason), nothing else."
)

PAIRWISE_SCHEMA = {
    "type": "object",
    "properties": {
        "winner": {"type": "string", "enum": list(VERDICTS)},
        "reason": {"type": "string", "maxLength": REASON_MAX_LENGTH},
    },
    "required": ["winner", "reason"],
    "additionalProperties": False,
}

PROMPT_HASH = sha256_json(
    {
        "version": PAIRWISE_PROMPT_VERSION,
        "system": JUDGE_SYSTEM_PROMPT,
        "template": PAIRWISE_TEMPLATE,
        "repair": REPAIR_TEMPLATE,
    }
)


def _references(task):
    lines = [
        f"- {name} answer: {text.strip()}"
        for name, text in (
            ("An excellent", task.excellent),
            ("A good", task.good),
            ("A passing", task.pass_answer),
            ("An incorrect answer goes in this direction;", task.incorrect_direction),
        )
        if text and text.strip()
    ]
    return "\n## Reference answers\n" + "\n".join(lines) + "\n" if lines else ""


def build_pairwise_messages(task, answer_a, answer_b):
    """The judge's chat messages for one ordered pair (task: an item's question and references)."""
    user = PAIRWISE_TEMPLATE.format(
        question=task.question.strip(),
        references=_references(task),
        answer_a=answer_a or "",
        answer_b=answer_b or "",
        reason_max=REASON_MAX_LENGTH,
    )
    return [{"role": "system", "content": JUDGE_SYSTEM_PROMPT}, {"role": "user", "content": user}]


def parse_verdict(text, finish_reason=None):
    """Validate the reply; return {"verdict": LEFT|RIGHT|TIE, "reason"} (A is left)."""
    data = json_object(text, finish_reason)
    winner = data.get("winner")
    if isinstance(winner, str) and winner.strip().lower() == "tie":
        winner = "tie"
    elif isinstance(winner, str):
        winner = winner.strip().upper()
    if winner not in VERDICTS:
        raise JudgeOutputError(f'"winner" must be "A", "B" or "tie", got {data.get("winner")!r}')
    return {"verdict": VERDICTS[winner], "reason": reason(data)}


def judge_pair(
    adapter, model, task, answer_a, answer_b, *, params=None, keep_alive=None, cancel=None
):
    """Ask the judge which of two answers is better, with one repair request.

    Returns {"verdict", "reason", "request", "raws", "ms", "completions"}; failures raise
    JudgeError carrying the same (judge_calls.ask), exactly as rubric.judge_item.
    """
    return ask(
        adapter,
        model,
        build_pairwise_messages(task, answer_a, answer_b),
        PAIRWISE_SCHEMA,
        parse_verdict,
        lambda error: REPAIR_TEMPLATE.format(error=error),
        params=params,
        keep_alive=keep_alive,
        cancel=cancel,
    )
