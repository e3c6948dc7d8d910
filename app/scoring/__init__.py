"""Scoring: where an answer becomes a score 0-100, a pass or fail, a reason, maybe an auto-fail.

The rubric judge is one scorer (it needs a model call, so it runs in the judge stage); rule
scorers need no call and run in the answer step."""
