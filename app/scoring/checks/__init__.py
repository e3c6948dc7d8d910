"""Checks: rules on an answer that score it with no judge (a task's `checks`), pure functions.

spec.py parses and validates a task's checks; evaluate.py runs them on one answer. The others
score one family of check each: text, shapes (+ picks, reading a choice or a number out of an
answer; schemas, a JSON schema validator whose patterns cannot hang), references (ROUGE,
BLEU, chrF, similarity), tools (tool calls) and speed."""
