"""A JSON column's text: acyclic_json_text, the import's cheaper encoder, writes what
JSONField.db_value writes for every kind of value a task's lists and mappings hold."""

import math

import pytest

from app.db.models import JSONField
from app.db.models import acyclic_json_text

VALUES = [
    ["Gives dangerous advice"],
    [" spaced ", "é ünï ✓", "tab\tnew\nline", 'quote " and \\ back', "\u2028", "\x00"],
    {"b": 1, "a": [1, 2.5, -0.0, 1e300, 10**30, True, False, None], "ä": {"z": "", "y": []}},
    [{"id": "r1", "text": "Right", "weight": 1, "max_score": 1.5}],
    {"city": "Paris", "n": "42"},
    [{"type": "json-schema", "value": {"type": "object", "properties": {"x": {}}}}],
    [],
    {},
    "text alone",
    [math.inf, -math.inf, math.nan],
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_acyclic_json_text_is_the_text_the_json_column_writes(value):
    assert acyclic_json_text(value) == JSONField().db_value(value)


def test_a_value_json_cannot_hold_is_refused_as_the_json_column_refuses_it():
    with pytest.raises(TypeError, match="not JSON serializable"):
        JSONField().db_value([object()])
    with pytest.raises(TypeError, match="not JSON serializable"):
        acyclic_json_text([object()])
    assert acyclic_json_text(["after a refusal"]) == '["after a refusal"]'
