"""A JSON schema's validator for the json-schema check, whose `pattern`s cannot hang: they run
with the regex check's timeout (jsonschema's own `pattern` uses re, which has none)."""

import jsonschema
import regex
from jsonschema.exceptions import ValidationError

from .text import REGEX_TIMEOUT
from .text import concurrent


class PatternTimeout(Exception):
    """A schema's pattern ran past REGEX_TIMEOUT on the answer: the check fails, saying so."""


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
