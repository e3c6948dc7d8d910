"""JSON text from outside (a form field, an upload, an import line, a request body) parsed
within bounds: every failure is a json.JSONDecodeError with a message, line and column, so each
caller's one `except ValueError` turns it into a 400 naming its field and line."""

import json
import re
import sys

MAX_DEPTH = 32  # no file or body of ours nests deeper; far deeper ones overflow the stack
# Python refuses longer integer text (sys.set_int_max_str_digits); json.loads raises a plain
# ValueError for it, without a position.
MAX_DIGITS = sys.get_int_max_str_digits() or 4300
_LONG_NUMBER = re.compile(rf"-?\d{{{MAX_DIGITS + 1},}}")
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def loads(text, **kwargs):
    """json.loads(text), refusing nesting past MAX_DEPTH and integers past MAX_DIGITS."""
    try:
        data = json.loads(text, **kwargs)
    except RecursionError:
        raise _too_deep(text) from None
    except json.JSONDecodeError:
        raise
    except ValueError:
        match = _LONG_NUMBER.search(text)
        raise json.JSONDecodeError(
            f"a number longer than {MAX_DIGITS} digits", text, match.start() if match else 0
        ) from None
    # Text with no more brackets than MAX_DEPTH cannot nest deeper (brackets in strings only
    # add to the count): an import line is checked without walking every value it holds.
    if _brackets(text) > MAX_DEPTH and depth_over(data):
        raise _too_deep(text)
    return data


# The C scanner json.loads ends in, with json.loads' defaults.
_scan_once = json.JSONDecoder().scan_once
_JSON_SPACE = " \t\n\r"


def loads_line(line):
    """loads() of one line of text (its line end kept or not): the same value, the same errors.

    A line that is one JSON value from its first character is read by json's C scanner alone:
    json.loads' checks and its two whitespace matches around it were a third of a short
    object's cost (an import reads a line per task). Anything else (space before the value,
    a BOM, bad JSON, more after it, brackets enough to nest too deep) is read by loads()."""
    if line.__class__ is str:
        try:
            value, end = _scan_once(line, 0)
        except (StopIteration, ValueError, RecursionError):
            return loads(line)
        if (end == len(line) or not line[end:].strip(_JSON_SPACE)) and _brackets(line) <= MAX_DEPTH:
            return value
    return loads(line)


def _brackets(text):
    """How many containers the text could open: its [ and { (in bytes or text)."""
    if isinstance(text, bytes | bytearray):
        return text.count(b"[") + text.count(b"{")
    return text.count("[") + text.count("{")


def depth_over(data):
    """True when containers nest deeper than MAX_DEPTH (walked without recursion)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            value = value.values()
        elif not isinstance(value, list):
            continue
        if depth > MAX_DEPTH:
            return True
        stack.extend((item, depth + 1) for item in value)
    return False


def _too_deep(text):
    """The error, at the bracket that opens level MAX_DEPTH + 1."""
    depth, pos = 0, 0
    for token in _TOKENS.finditer(text):
        if token.group() in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                pos = token.start()
                break
        elif token.group() in "]}":
            depth -= 1
    return json.JSONDecodeError(f"nested too deeply (more than {MAX_DEPTH} levels)", text, pos)
