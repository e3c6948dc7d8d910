"""promptfoo asserts as llmbench checks: `to_check(assert)` -> ("check", check dict),
("rubric", text for the judge) or ("unsupported", why).

promptfoo's thresholds are 0-1 scores (ours 0-100), a levenshtein threshold is a largest edit
distance (a similarity check's max_edits), and latency and cost take their largest value as
the threshold. `weight` is carried over as it is."""

from .common import as_text
from .common import plain
from .lines import YamlSyntaxError
from .lines import load_yaml

_TEXT = ("equals", "contains", "icontains", "starts-with", "regex")
_LISTS = ("contains-any", "contains-all")
_NEGATED = {f"not-{kind}": kind for kind in (*_TEXT, *_LISTS) if kind != "contains"}
_METRICS = {"rouge-n": ("rouge-1", 0.75), "bleu": ("bleu", 0.5)}
_SPEED = ("latency", "cost")
_KNOWN_KEYS = {"type", "value", "threshold", "weight", "metric", "description"}
_NEVER = {
    "javascript": "runs JavaScript",
    "python": "runs Python",
    "webhook": "calls a webhook",
    "similar": "needs an embedding provider",
}


def to_check(item):
    """(kind, result) for one promptfoo assert (see the module docstring)."""
    if not isinstance(item, dict) or not isinstance(item.get("type"), str):
        return "unsupported", "an assert must be a mapping with a type"
    kind = item["type"]
    label = f"assert {kind!r}"
    if kind in _NEVER or kind.startswith("not-") and kind[4:] in _NEVER:
        return "unsupported", f"{label} {_NEVER.get(kind, _NEVER.get(kind[4:]))}: not supported"
    extra = sorted(set(item) - _KNOWN_KEYS - ({"provider"} if kind == "llm-rubric" else set()))
    if extra:
        return "unsupported", f"{label}: the key(s) {', '.join(extra)} are not supported"
    value = plain(item.get("value"))
    if isinstance(value, str) and value.startswith("file://"):
        return "unsupported", f"{label}: a file:// value is not supported"
    check = {}
    if "weight" in item:
        check["weight"] = item["weight"]
    threshold = item.get("threshold")
    if threshold is not None and (
        isinstance(threshold, bool) or not isinstance(threshold, int | float)
    ):
        return "unsupported", f"{label}: threshold must be a number"
    if kind == "llm-rubric":
        if not isinstance(value, str) or not value.strip():
            return "unsupported", f"{label}: the rubric must be text"
        return "rubric", value.strip()
    if kind == "not-contains" or kind in _TEXT:
        return "check", {"type": kind, "value": as_text(value), **check}
    if kind in _NEGATED:
        base = _NEGATED[kind]
        if base in _LISTS:
            value = _as_list(value)
        else:
            value = as_text(value)
        return "check", {"type": base, "value": value, "negate": True, **check}
    if kind in _LISTS:
        return "check", {"type": kind, "value": _as_list(value), **check}
    if kind in ("is-json", "contains-json"):
        if kind == "contains-json":
            check["anywhere"] = True  # the JSON may stand among words
        if value is None:
            return "check", {"type": "json", **check}
        if isinstance(value, str):  # promptfoo also takes the schema as YAML (or JSON) text
            try:
                value = plain(load_yaml(value))
            except YamlSyntaxError as exc:
                return "unsupported", f"{label}: the schema is not YAML or JSON: {exc}"
        return "check", {"type": "json-schema", "value": value, **check}
    if kind == "is-valid-openai-tools-call":
        calls = value if isinstance(value, list) else [value]
        if not calls or not all(isinstance(c, dict) and c.get("name") for c in calls):
            return "unsupported", (
                f"{label}: give the expected call as value {{name, arguments}} (a schema "
                "check of any call is not supported)"
            )
        return "check", {"type": "tool-call", "value": value, **check}
    if kind == "levenshtein":
        if not isinstance(value, str) or not value:
            return "unsupported", f"{label}: the expected text must be given as value"
        distance = item.get("threshold", 5)
        if distance < 0 or distance != int(distance):
            return "unsupported", f"{label}: threshold must be a whole number of edits"
        # promptfoo passes when the Levenshtein distance is at most the threshold.
        return "check", {"type": "similarity", "value": value, "max_edits": int(distance), **check}
    if kind in _METRICS:
        ours, default = _METRICS[kind]
        threshold = _pct(float(item.get("threshold", default)))
        return "check", {"type": ours, "value": as_text(value), "threshold": threshold, **check}
    if kind in _SPEED:
        if "threshold" not in item:
            return "unsupported", f"{label}: give its largest value as threshold"
        return "check", {"type": kind, "value": item["threshold"], **check}
    return "unsupported", f"{label} is not supported (llmbench runs no such check)"


def _as_list(value):
    """promptfoo also takes a comma-separated text for contains-any/-all."""
    if isinstance(value, str):
        return comma_separated(value)
    return [as_text(v) for v in value] if isinstance(value, list) else value


def comma_separated(text):
    """The fields of a comma-separated text as promptfoo reads them: each trimmed, empty ones
    dropped, a "quoted" field kept as it is (commas too; \\" or "" is a quote)."""
    fields, i = [], 0
    while i < len(text):
        while i < len(text) and (text[i].isspace() or text[i] == ","):
            i += 1
        if i >= len(text):
            break
        if text[i] != '"':
            end = text.find(",", i)
            end = len(text) if end == -1 else end
            fields.append(text[i:end].strip())
            i = end
            continue
        i, field = i + 1, []
        while i < len(text) and text[i] != '"' or text[i : i + 2] == '""':
            if text[i] == "\\" and text[i + 1 : i + 2] in ('"', "\\"):
                i += 1
            elif text[i] == '"':  # a doubled quote
                i += 1
            field.append(text[i])
            i += 1
        fields.append("".join(field))
        i += 1  # past the closing quote (an unclosed field ends the text)
    return [f for f in fields if f]


def _pct(share):
    return round(min(max(share, 0.0), 1.0) * 100, 2)
