"""jsontext.loads_line, the import's reader of one JSONL line: loads()' value, or its error at
the same place with the same words, whatever the line holds."""

import json

import pytest

from app import jsontext

DEPTH = jsontext.MAX_DEPTH
LINES = [
    '{"id": "q1", "prompt": "Question?", "auto_fail": ["x"]}\n',
    '{"id": "q1"}\r\n',
    '{"id": "q1"}',
    '{"id": "q1"}  \t \n',
    '  {"id": "q1"}\n',
    '\ufeff{"id": "q1"}\n',
    '{"a": NaN, "b": -Infinity, "c": 1e400, "d": 12345678901234567890}\n',
    '{"id": "é ünï \\u2028 \\ud83d\\ude00"}\n',
    '[1, 2, "three"]\n',
    '"text"\n',
    "42\n",
    "{not json\n",
    '{"id": "q1"} {"id": "q2"}\n',
    '{"id": "q1"},\n',
    '{"id": "q1"}\x0b\n',
    '{"id": "q1"}\u00a0\n',
    "",
    "   \n",
    "[" * DEPTH + "]" * DEPTH + "\n",
    "[" * (DEPTH + 1) + "]" * (DEPTH + 1) + "\n",
    '{"s": "' + "[" * (DEPTH + 5) + '"}\n',
    "[" * 5000 + "]" * 5000 + "\n",
    '{"n": ' + "9" * 5000 + "}\n",
    b'{"id": "bytes"}\n',
]


def _outcome(read, line):
    try:
        return ("value", read(line))
    except json.JSONDecodeError as exc:
        return ("error", exc.msg, exc.pos, exc.lineno, exc.colno)


@pytest.mark.parametrize("line", LINES, ids=range(len(LINES)))
def test_a_line_reads_as_loads_reads_it(line):
    got, expected = _outcome(jsontext.loads_line, line), _outcome(jsontext.loads, line)
    assert repr(got) == repr(expected)  # repr: NaN is not equal to itself
