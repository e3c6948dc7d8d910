"""A JSON schema's validator for the json-schema check, whose `pattern`s cannot hang: they run
with the regex check's timeout (jsonschema's own `pattern` uses re, which has none).

Imported only where a task has a json-schema check (spec.py): jsonschema takes ~60 ms to
import, which `llmbench validate` and every run paid for tasks that have none."""

import jsonschema
import regex
from jsonschema.exceptions import ValidationError

from .text import REGEX_TIMEOUT
from .text import PatternTimeout
from .text import concurrent


def _pattern(validator, pattern, instance, schema):
    if not validator.is_type(instance, "string"):
        return
    try:
        found = regex.search(
            pattern, instance, timeout=REGEX_TIMEOUT, concurrent=concurrent(instance)
        )
    except TimeoutError:
        raise PatternTimeout(
            f"the schema's pattern `{pattern}` timed out after {REGEX_TIMEOUT} s"
        ) from None
    if not found:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def bounded_validator(schema):
    """A validator for the schema (checked first: a bad one raises jsonschema.SchemaError)."""
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return jsonschema.validators.extend(cls, {"pattern": _pattern})(schema)
