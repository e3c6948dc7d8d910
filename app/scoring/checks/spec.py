"""A task's checks parsed and validated up front: a bad check is refused here, naming its index,
type and field, so a valid check never fails an item at run time.

A check is `{type, value, weight, threshold, gate, ...options}`. Its score is 0-100 and it
passes at `threshold`: by default 100 for a yes/no check (it must hold) and METRIC_THRESHOLD
for a metric (ROUGE, BLEU, chrF, similarity: half of a perfect overlap) and for a tool call's
share of expected calls made (100: all of them). `weight` (default 1) weighs it in the answer's
mean; a failed `gate: true` check auto-fails the answer. A text check may take `negate: true`:
it then passes when the text test fails (promptfoo's not-icontains, not-regex, ...)."""

import math
import re
from dataclasses import dataclass
from dataclasses import field

from ...errors import ValidationError

TEXT = ("equals", "contains", "icontains", "contains-any", "contains-all", "not-contains")
TEXT += ("starts-with", "regex")
SHAPES = ("choice", "number", "json", "json-schema", "length")
REFERENCES = ("rouge-1", "rouge-2", "rouge-l", "bleu", "chrf", "similarity")
TOOLS = ("tool-call",)
SPEED = ("latency", "ttft", "tokens", "cost")
TYPES = TEXT + SHAPES + REFERENCES + TOOLS + SPEED

METRIC_THRESHOLD = 50.0
COMMON = {"type", "value", "weight", "threshold", "gate"}
# Each type's options and their defaults.
OPTIONS = {
    "equals": {"normalize": ()},
    "regex": {"flags": ""},
    # anywhere: a JSON object among the answer's words will do (promptfoo's contains-json).
    "json": {"anywhere": False},
    "json-schema": {"anywhere": False},
    # max_edits: yes/no, the answer is at most this many Levenshtein edits from the text
    # (promptfoo's levenshtein); unset, the score is the edit-distance ratio.
    "similarity": {"max_edits": None},
    "number": {"tolerance": 0},
    "length": {"min": None, "max": None, "unit": "words"},
    "tool-call": {"match": "exact", "tolerance": 0},
}
NORMALIZE = ("trim", "case", "whitespace", "punctuation")
# The flag letters a regex check takes, with the regex module's flag each names.
REGEX_FLAGS = {"i": "IGNORECASE", "m": "MULTILINE", "s": "DOTALL", "x": "VERBOSE"}
UNITS = ("words", "characters")
MATCHES = ("exact", "subset")
_PERCENT = re.compile(r"^\d+(?:\.\d+)?%$")


class CheckError(ValidationError):
    """A task's checks are not valid: the one problem found, naming the check and its field."""


@dataclass(frozen=True)
class Check:
    """One validated check; `compiled` holds its ready regex or schema validator."""

    type: str
    value: object
    weight: float = 1.0
    threshold: float = 100.0
    gate: bool = False
    options: dict = field(default_factory=dict)
    compiled: object = field(default=None, compare=False, repr=False)

    def to_dict(self):
        """The check as plain JSON, every default filled in."""
        return {
            "type": self.type,
            "value": self.value,
            "weight": self.weight,
            "threshold": self.threshold,
            "gate": self.gate,
            **{k: list(v) if isinstance(v, tuple) else v for k, v in self.options.items()},
        }


def parse_checks(raw, *, has_reference=False, check_schemas=True):
    """Validated Checks from a task's raw `checks` list; raises CheckError naming the field.
    `has_reference`: the task has an excellent answer for reference metrics to compare with.
    `check_schemas=False` takes a json-schema check's schema as valid and compiles no validator
    (its `compiled` is None: such checks are for storing, not evaluating): for the built-in
    bank, whose schemas a test checks, so that a new database need not import jsonschema."""
    if not isinstance(raw, list):
        raise CheckError.field("checks", "must be a list of checks")
    return [_parse(i, item, has_reference, check_schemas) for i, item in enumerate(raw)]


def _is_number(value):
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _parse(index, item, has_reference, check_schemas=True):
    where = f"checks[{index}]"
    if not isinstance(item, dict):
        raise CheckError.field(where, "must be an object with a `type`")
    kind = item.get("type")
    if kind is None:
        raise CheckError.field(f"{where}.type", "required")
    if kind not in TYPES:
        raise CheckError.field(
            f"{where}.type", f"unknown check type {kind!r} (known: {', '.join(TYPES)})"
        )

    def fail(name, message):
        raise CheckError.field(f"{where} ({kind}).{name}", message)

    options = OPTIONS.get(kind, {})
    negatable = kind in TEXT and kind != "not-contains"
    for key in item:
        if key == "negate" and negatable:
            continue
        if key not in COMMON and key not in options:
            known = ", ".join(sorted(COMMON | set(options)))
            fail(key, f"unknown key (a {kind} check takes: {known})")
    weight = item.get("weight", 1)
    if not _is_number(weight) or weight <= 0:
        fail("weight", "must be a number above 0")
    metric = kind in REFERENCES
    threshold = item.get("threshold", METRIC_THRESHOLD if metric else 100)
    if not _is_number(threshold) or not 0 <= threshold <= 100:
        fail("threshold", "must be a number from 0 to 100")
    gate = item.get("gate", False)
    if not isinstance(gate, bool):
        fail("gate", "must be true or false")
    chosen = {name: item.get(name, default) for name, default in options.items()}
    negate = item.get("negate", False)
    if not isinstance(negate, bool):
        fail("negate", "must be true or false")
    if negate:
        chosen["negate"] = True  # kept only when set: stored checks without it are unchanged
    read = _VALUES[_family(kind)] if check_schemas or kind != "json-schema" else _schema_shape
    value, compiled = read(kind, item, chosen, fail, has_reference)
    return Check(kind, value, float(weight), float(threshold), gate, chosen, compiled)


def _family(kind):
    for name, family in (("text", TEXT), ("references", REFERENCES), ("speed", SPEED)):
        if kind in family:
            return name
    return kind


def _text_value(kind, item, options, fail, has_reference):
    value = item.get("value")
    if kind in ("contains-any", "contains-all"):
        if not isinstance(value, list) or not value:
            fail("value", "must be a non-empty list of texts")
        if not all(isinstance(v, str) and v for v in value):
            fail("value", "every item must be a non-empty text")
        return list(value), None
    if not isinstance(value, str) or not value:
        fail("value", "must be a non-empty text")
    if kind == "equals":
        normalize = options["normalize"]
        if not isinstance(normalize, list | tuple) or not all(
            isinstance(n, str) for n in normalize
        ):
            fail("normalize", f"must be a list of: {', '.join(NORMALIZE)}")
        unknown = [n for n in normalize if n not in NORMALIZE]
        if unknown:
            fail("normalize", f"unknown option {unknown[0]!r} (known: {', '.join(NORMALIZE)})")
        options["normalize"] = tuple(normalize)
    if kind != "regex":
        return value, None
    flags = options["flags"]
    if not isinstance(flags, str) or any(f not in REGEX_FLAGS for f in flags):
        fail("flags", f"must be letters among {''.join(REGEX_FLAGS)}, got {flags!r}")
    # Lazy: the regex module (~15-30 ms to import) only for a task that has a regex check.
    import regex

    bits = 0
    for letter in flags:
        bits |= getattr(regex, REGEX_FLAGS[letter])
    try:
        return value, regex.compile(value, bits)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        fail("value", f"bad regex: {exc}")


def _choice_value(kind, item, options, fail, has_reference):
    value = item.get("value")
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z]", value.strip()):
        fail("value", "must be the expected option letter, e.g. 'B'")
    return value.strip().upper(), None


def _number_value(kind, item, options, fail, has_reference):
    value = item.get("value")
    if not _is_number(value):
        fail("value", "must be a number")
    _check_tolerance(options, fail)
    return value, None


def _check_tolerance(options, fail):
    tolerance = options["tolerance"]
    if _is_number(tolerance) and tolerance >= 0:
        return
    if isinstance(tolerance, str) and _PERCENT.match(tolerance):
        return
    fail("tolerance", f"must be a number ≥ 0 or a percentage like '1%', got {tolerance!r}")


def _json_value(kind, item, options, fail, has_reference):
    if "value" in item:
        fail("value", "a json check takes no value (use json-schema to check the content)")
    _check_anywhere(options, fail)
    return None, None


def _check_anywhere(options, fail):
    if not isinstance(options["anywhere"], bool):
        fail("anywhere", "must be true or false")


def _schema_value(kind, item, options, fail, has_reference):
    schema = item.get("value")
    if not isinstance(schema, dict | bool):
        fail("value", "must be a JSON schema (an object)")
    _check_anywhere(options, fail)
    # Lazy: jsonschema (~60 ms to import) only for a task that has a json-schema check.
    import jsonschema

    from .schemas import bounded_validator

    try:
        return schema, bounded_validator(schema)
    except jsonschema.SchemaError as exc:
        fail("value", f"invalid JSON schema: {exc.message}")
    except Exception as exc:  # e.g. an unknown $schema dialect
        fail("value", f"invalid JSON schema: {exc}")


def _schema_shape(kind, item, options, fail, has_reference):
    """A json-schema check's value checked as _schema_value does, but for the schema itself."""
    schema = item.get("value")
    if not isinstance(schema, dict | bool):
        fail("value", "must be a JSON schema (an object)")
    _check_anywhere(options, fail)
    return schema, None


def _length_value(kind, item, options, fail, has_reference):
    if "value" in item:
        fail("value", "a length check takes `min` and `max`, not a value")
    low, high = options["min"], options["max"]
    for name, bound in (("min", low), ("max", high)):
        if bound is not None and (not isinstance(bound, int) or isinstance(bound, bool)):
            fail(name, "must be a whole number")
        if bound is not None and bound < 0:
            fail(name, "must be 0 or more")
    if low is None and high is None:
        fail("min", "give `min`, `max` or both")
    if low is not None and high is not None and low > high:
        fail("max", f"must be at least min ({low})")
    if options["unit"] not in UNITS:
        fail("unit", f"must be one of: {', '.join(UNITS)}")
    return None, None


def _reference_value(kind, item, options, fail, has_reference):
    edits = options.get("max_edits")
    if edits is not None and (not isinstance(edits, int) or isinstance(edits, bool) or edits < 0):
        fail("max_edits", "must be a whole number, 0 or more")
    value = item.get("value")
    if value is None:
        if not has_reference:
            fail("value", "no reference: give a text, or an excellent answer on the task")
        return None, None
    if not isinstance(value, str) or not value:
        fail("value", "must be the reference text")
    return value, None


def _tool_value(kind, item, options, fail, has_reference):
    value = item.get("value")
    calls = value if isinstance(value, list) else [value]
    if not calls:
        fail("value", "must be a call {name, arguments} or a non-empty list of them")
    for n, call in enumerate(calls):
        at = f"value[{n}]" if isinstance(value, list) else "value"
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not call["name"]:
            fail(at, "must be a call with a `name` (and `arguments`)")
        if set(call) - {"name", "arguments"}:
            fail(at, f"unknown key {sorted(set(call) - {'name', 'arguments'})[0]!r}")
        if not isinstance(call.get("arguments", {}), dict):
            fail(f"{at}.arguments", "must be an object")
    if options["match"] not in MATCHES:
        fail("match", f"must be one of: {', '.join(MATCHES)}")
    _check_tolerance(options, fail)
    return [{"name": c["name"], "arguments": c.get("arguments", {})} for c in calls], None


def _speed_value(kind, item, options, fail, has_reference):
    value = item.get("value")
    if not _is_number(value) or value < 0:
        fail("value", "must be the largest allowed number (0 or more)")
    return value, None


_VALUES = {
    "text": _text_value,
    "choice": _choice_value,
    "number": _number_value,
    "json": _json_value,
    "json-schema": _schema_value,
    "length": _length_value,
    "references": _reference_value,
    "tool-call": _tool_value,
    "speed": _speed_value,
}


def allowed_gap(tolerance, expected):
    """A validated tolerance as an absolute gap around `expected` ('1%' is 1% of it)."""
    if isinstance(tolerance, str):
        return abs(expected) * float(tolerance[:-1]) / 100
    return tolerance
