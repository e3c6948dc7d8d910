"""A task's checks and tools: validated where a task comes in, stored as the plain JSON given.

The checks themselves are validated by scoring/checks/spec.py (one rule set for every way a task
is entered); this module reads them from text (a form's YAML or JSON, a CSV cell's JSON), checks
the tools' shape (OpenAI function schemas) and that a tool-call check names an offered tool."""

import json
import re

from .. import jsontext
from ..scoring.checks.spec import COMMON
from ..scoring.checks.spec import REFERENCES
from ..scoring.checks.spec import CheckError
from ..scoring.checks.spec import parse_checks

# OpenAI's own rule for a function name: a model server refuses any other.
TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
TOOL_KEYS = {"type", "function"}
FUNCTION_KEYS = {"name", "description", "parameters", "strict"}


def from_text(value, field):
    """A list given as text (YAML or JSON, as a form or a CSV cell gives it) read into data;
    other values pass through. Blank text is None. Raises CheckError naming the field."""
    if not isinstance(value, str):
        return value
    if not value.strip():
        return None
    if value.strip()[:1] in ("[", "{"):
        try:
            return jsontext.loads(value)
        except ValueError:
            pass  # YAML's flow style ([{type: number, value: 4}]) is read below
    # Lazy: every task's fields pass through this module, and only checks or tools given as
    # YAML text need yaml (a JSON or JSONL dataset's check reads none: datasets/lines.py).
    import yaml

    try:
        _check_tokens(value, field)
        return yaml.safe_load(value)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise CheckError.field(field, f"not valid YAML or JSON{where}: {problem}") from None


def _check_tokens(text, field):
    """Refuse YAML that would blow up when loaded, before loading it (the scan is flat): an
    alias repeats a node without copying it (a few lines could stand for millions), and deep
    nesting overflows the loader's stack."""
    import yaml  # lazy, as in from_text

    opens = (
        yaml.BlockSequenceStartToken,
        yaml.BlockMappingStartToken,
        yaml.FlowSequenceStartToken,
        yaml.FlowMappingStartToken,
    )
    closes = (yaml.BlockEndToken, yaml.FlowSequenceEndToken, yaml.FlowMappingEndToken)
    depth = 0
    for token in yaml.scan(text):
        if isinstance(token, yaml.AliasToken):
            raise CheckError.field(field, "YAML aliases (*name) are not accepted here")
        depth += isinstance(token, opens) - isinstance(token, closes)
        if depth > jsontext.MAX_DEPTH:
            raise CheckError.field(field, f"nests deeper than {jsontext.MAX_DEPTH} levels")


def clean_checks(value, *, has_reference, tools=None, check_schemas=True):
    """The checks list as given (plain JSON), or None for none; CheckError names the check
    (`checks[i] (type).field`). A tool-call check must name one of the task's tools.
    `check_schemas`: as parse_checks takes it."""
    value = from_text(value, "checks")
    if value in (None, []):
        return None
    checks = parse_checks(value, has_reference=has_reference, check_schemas=check_schemas)
    offered = {t["function"]["name"] for t in tools or []}
    for index, check in enumerate(checks):
        if check.type != "tool-call":
            continue
        for n, call in enumerate(check.value):
            if call["name"] not in offered:
                at = f"value[{n}]" if isinstance(value[index]["value"], list) else "value"
                known = ", ".join(sorted(offered))
                offers = f"offers only {known}" if known else "offers no tools: add them"
                raise CheckError.field(
                    f"checks[{index}] (tool-call).{at}",
                    f"expects a call to {call['name']!r}, but the task {offers}",
                )
    return value


def clean_tools(value):
    """The tools list as given, or None; each an OpenAI function schema
    {"type": "function", "function": {"name", "description", "parameters"}}."""
    value = from_text(value, "tools")
    if value in (None, []):
        return None
    if not isinstance(value, list):
        raise CheckError.field("tools", "must be a list of function schemas")
    seen = set()
    for index, tool in enumerate(value):
        where = f"tools[{index}]"
        if not isinstance(tool, dict):
            raise CheckError.field(where, 'must be {"type": "function", "function": {...}}')
        unknown = sorted(set(tool) - TOOL_KEYS)
        if unknown:
            raise CheckError.field(f"{where}.{unknown[0]}", "unknown key (known: function, type)")
        if tool.get("type") != "function":
            raise CheckError.field(f"{where}.type", 'must be "function"')
        function = tool.get("function")
        if not isinstance(function, dict):
            raise CheckError.field(f"{where}.function", "must be an object with a `name`")
        unknown = sorted(set(function) - FUNCTION_KEYS)
        if unknown:
            known = ", ".join(sorted(FUNCTION_KEYS))
            raise CheckError.field(
                f"{where}.function.{unknown[0]}", f"unknown key (known: {known})"
            )
        name = function.get("name")
        if not isinstance(name, str) or not TOOL_NAME_RE.match(name):
            raise CheckError.field(
                f"{where}.function.name", "required: 1 to 64 letters, digits, _ or -"
            )
        if name in seen:
            raise CheckError.field(f"{where}.function.name", f"{name!r} is offered twice")
        seen.add(name)
        if not isinstance(function.get("description", ""), str):
            raise CheckError.field(f"{where}.function.description", "must be text")
        if not isinstance(function.get("parameters", {}), dict):
            raise CheckError.field(f"{where}.function.parameters", "must be a JSON schema object")
        if not isinstance(function.get("strict", False), bool):
            raise CheckError.field(f"{where}.function.strict", "must be true or false")
    return value


def describe_checks(checks, *, has_reference=False):
    """A task's checks as rows to read: type, value (as short text), threshold, gate, weight and
    the other options in words; every default filled in, so a page says what will be applied."""
    try:
        parsed = [c.to_dict() for c in parse_checks(checks or [], has_reference=True)]
    except CheckError:
        parsed = [c if isinstance(c, dict) else {"type": "?", "value": c} for c in checks or []]
    rows = []
    for check in parsed:
        options = {k: v for k, v in check.items() if k not in COMMON and v not in (None, [], "")}
        value = check.get("value")
        if value is None and check.get("type") in REFERENCES:
            value = "the excellent answer" if has_reference else None
        rows.append(
            {
                "type": check.get("type"),
                "value": _short(value),
                "threshold": check.get("threshold"),
                "gate": bool(check.get("gate")),
                "weight": check.get("weight"),
                "options": ", ".join(f"{k}: {_short(v)}" for k, v in options.items()),
            }
        )
    return rows


def _short(value, limit=120):
    if value is None:
        return ""
    if isinstance(value, str):
        text = value
    elif isinstance(value, list) and all(isinstance(v, dict) and "name" in v for v in value):
        text = ", ".join(f"{v['name']}({json.dumps(v.get('arguments', {}))})" for v in value)
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        text = " | ".join(value)
    else:
        text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def as_text(value):
    """Checks or tools as YAML for a form's box (it reads best there; YAML or JSON comes back)."""
    if not value:
        return ""
    import yaml  # lazy, as in from_text

    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True, width=100)


def tool_names(tools):
    """The names of the tools a task offers, in order."""
    return [t["function"]["name"] for t in tools or [] if isinstance(t, dict) and "function" in t]
