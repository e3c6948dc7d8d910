"""The one set of run-spec rules: every problem reported at once, by field.

The API, the new-run form, run configs (runconfig/checker.py) and Resume's budget all
check through the tables and functions here. Each error names its `field` as text
(`targets[1].params.temperature`) and its `path` as a list (`["targets", 1, "params",
"temperature"]`), so a form can show it beside the input that caused it. A whole spec, whose
models are also asked of their providers' servers, is checked by spec_check.py: the field rules
here load no HTTP client (a run's budget read by the live view, a paused run resumed).
"""

import math
import re

from ..db.models import Provider
from ..db.models import RunTarget
from ..hashing import canonical_params
from ..hashing import sha256_json
from ..ids import SQLITE_INT_MAX
from ..jsontext import loads

RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
# Generation params: name -> (type, minimum, maximum); `stop` is a list of strings.
PARAMS = {
    "temperature": (float, 0.0, 2.0),
    "top_p": (float, 0.0, 1.0),
    "max_tokens": (int, 1, 1_000_000),
    "seed": (int, None, None),
    # Ours, never sent to the server: the most one call to the target may take, in seconds
    # (default: the provider's timeout; providers/base.py call_seconds).
    "max_seconds": (float, 1.0, 86400.0),
}
# JSON mode and tool choice, sent as given (the Ollama adapter maps response_format to `format`).
ANSWER_FORMATS = ("json_object", "json_schema")
TOOL_CHOICES = ("auto", "none", "required")
PARAM_NAMES = (*PARAMS, "stop", "response_format", "tool_choice")
PARAM_ALIASES = {"topP": "top_p", "maxTokens": "max_tokens"}
# OpenRouter's provider routing preferences (`routing`): an object sent as is as the
# request body's `provider`; run configs check its keys (runconfig/apocbench.py).
ROUTING_PARAM = "provider"
# Run settings: name -> (type, minimum, maximum, message); the budget must be above its minimum.
# concurrency / judgeConcurrency: requests in flight for this run's answers / judgements, in
# place of the provider's max_concurrency (run.concurrency.candidate / judge).
SETTINGS = {
    "maxAttempts": (int, 1, 20, "must be a whole number from 1 to 20"),
    "questionLimit": (int, 1, 1_000_000, "must be a whole number from 1 to 1000000"),
    "maxBudgetUsd": (float, 0.0, 1e9, "must be a number of dollars above 0"),
    "concurrency": (int, 1, 64, "must be a whole number from 1 to 64"),
    "judgeConcurrency": (int, 1, 64, "must be a whole number from 1 to 64"),
    # Stability (over time): K answers per task and target, J judgements per answer.
    "repeats": (int, 1, 20, "must be a whole number from 1 to 20"),
    "judgeRepeats": (int, 1, 10, "must be a whole number from 1 to 10"),
    # The answer time (ms) an answer should meet: its share is part of the composite score.
    "latencyTargetMs": (int, 1, 3_600_000, "must be whole milliseconds from 1 to 3600000"),
}
# Load steps (settings.load): the same tasks asked again at each step's load, one step after
# another, each step's answers kept apart (Item.step). Concurrency steps are requests in flight
# (as settings.concurrency); rate steps are requests started per second, not waiting for answers.
LOAD_MODES = ("concurrency", "rate")
LOAD_ARRIVALS = ("poisson", "constant")
LOAD_JUDGE_STEPS = ("all", "first")
LOAD_KEYS = ("mode", "steps", "arrivals", "warmup", "requestsPerStep", "judgeSteps")
LOAD_MAX_STEPS = 12
LOAD_MAX_RATE = 1000.0  # requests/s
LOAD_MAX_WARMUP = 64
LABEL_MAX = 300  # a target's label (RunTarget.label)
# settings.slo, the service level a run's answers should meet (results/goodput.py): latency
# bounds in ms on a target's percentiles and on each answer, and the score a good answer needs.
SLO_BOUNDS = ("ttftP90Ms", "itlP90Ms", "e2eP95Ms")
SLO_KEYS = (*SLO_BOUNDS, "minScore")
SLO_MAX_MS = 3_600_000


def field_name(path):
    """A path as one field name: ("targets", 1, "model") -> "targets[1].model"."""
    text = str(path[0])
    for part in path[1:]:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def _error(errors, path, message):
    errors.append({"field": field_name(path), "path": list(path), "message": message})


def _first(data, *keys):
    for key in keys:
        if data.get(key) not in (None, ""):
            return data[key]
    return None


def _int(value):
    if isinstance(value, bool):
        raise ValueError
    if isinstance(value, float) and (not math.isfinite(value) or value != int(value)):
        raise ValueError
    number = int(value)
    if abs(number) > SQLITE_INT_MAX:  # SQLite cannot even look such a number up
        raise ValueError
    return number


def _number(value):
    """A finite float (nan and inf are not numbers a server can use)."""
    if isinstance(value, bool):
        raise ValueError
    number = float(value)
    if not math.isfinite(number):
        raise ValueError
    return number


def setting(name, value):
    """One run setting checked against SETTINGS: the number, or ValueError with the message."""
    kind, low, high, message = SETTINGS[name]
    try:
        number = _int(value) if kind is int else _number(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(message) from None
    too_low = number <= low if name == "maxBudgetUsd" else number < low
    if too_low or number > high:
        raise ValueError(message)
    return number


def clean_params(raw, path, errors):
    """Generation params: known names only, numbers in range, stop as a list of strings."""
    path = tuple(path)
    if raw in (None, ""):
        return {}
    if not isinstance(raw, dict):
        _error(errors, path, "must be an object of generation params")
        return {}
    params = {}
    for key, value in raw.items():
        name = PARAM_ALIASES.get(key, key)
        if value in (None, "", []):
            continue  # a blank form field means "server default"
        if name == ROUTING_PARAM:
            if not isinstance(value, dict):
                _error(errors, (*path, key), "must be an object of OpenRouter provider preferences")
                continue
            params[name] = value
            continue
        if name in SHAPED:
            shaped, problem = SHAPED[name](value)
            if problem:
                _error(errors, (*path, name), problem)
            else:
                params[name] = shaped
            continue
        if name == "stop":
            stops = [value] if isinstance(value, str) else value
            if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
                _error(errors, (*path, "stop"), "must be text or a list of texts")
                continue
            params["stop"] = stops
            continue
        if name not in PARAMS:
            _error(errors, (*path, key), "unknown param; use " + ", ".join(PARAM_NAMES))
            continue
        kind, low, high = PARAMS[name]
        try:
            number = _int(value) if kind is int else _number(value)
        except (TypeError, ValueError, OverflowError):
            _error(
                errors, (*path, name), f"must be a {'whole number' if kind is int else 'number'}"
            )
            continue
        if (low is not None and number < low) or (high is not None and number > high):
            _error(errors, (*path, name), f"must be between {low:g} and {high:g}")
            continue
        params[name] = number
    return params


def _json_param(value):
    """A param that is an object, or the JSON text of one (a form's field)."""
    if isinstance(value, str):
        try:
            return loads(value)
        except ValueError:
            return value
    return value


def _response_format(value):
    """(response_format, None), or (None, the message saying what is wrong with it)."""
    value = _json_param(value)
    kinds = " or ".join(f'{{"type": "{k}"}}' for k in ANSWER_FORMATS)
    if not isinstance(value, dict) or value.get("type") not in ANSWER_FORMATS:
        return None, f"must be {kinds} (with a json_schema object)"
    if value["type"] == "json_schema":
        schema = value.get("json_schema")
        if not isinstance(schema, dict) or not isinstance(schema.get("schema"), dict):
            return None, (
                'with type json_schema needs "json_schema": {"name": ..., "schema": {...}}, '
                "the schema a JSON Schema object"
            )
    return value, None


def _tool_choice(value):
    """(tool_choice, None), or (None, the message saying what is wrong with it)."""
    if isinstance(value, str) and value in TOOL_CHOICES:
        return value, None
    value = _json_param(value)
    function = value.get("function") if isinstance(value, dict) else None
    if (
        isinstance(value, dict)
        and value.get("type") == "function"
        and isinstance(function, dict)
        and isinstance(function.get("name"), str)
        and function["name"]
    ):
        return value, None
    return None, (
        "must be auto, none, required or "
        '{"type": "function", "function": {"name": "<a tool\'s name>"}}'
    )


SHAPED = {"response_format": _response_format, "tool_choice": _tool_choice}


def _provider(value, path, errors):
    try:
        pk = _int(value)
    except (TypeError, ValueError, OverflowError):
        message = (
            "is required (a provider id)"
            if value in (None, "")
            else f"{value!r} is not a provider id"
        )
        _error(errors, path, message)
        return None
    provider = Provider.get_or_none(Provider.id == pk)
    if provider is None:
        _error(errors, path, f"no provider with id {pk}")
    return provider


def _model(value, path, errors):
    if not isinstance(value, str) or not value.strip():
        _error(errors, path, "is required (a model name)")
        return None
    return value.strip()


def _ids(value, name, errors):
    if value in (None, ""):
        return []
    if not isinstance(value, list | tuple):
        value = [value]
    out = []
    for v in value:
        try:
            out.append(_int(v))
        except (TypeError, ValueError, OverflowError):
            _error(errors, (name,), f"{v!r} is not an id")
    return list(dict.fromkeys(out))


def clean_settings(raw, errors):
    """maxAttempts, maxBudgetUsd, questionLimit, repeats, judgeRepeats (SETTINGS), categories."""
    raw = raw or {}
    if not isinstance(raw, dict):
        _error(errors, ("settings",), "must be an object")
        return {}
    settings = {}
    for name in SETTINGS:
        value = raw.get(name)
        if value in (None, ""):
            continue
        try:
            settings[name] = setting(name, value)
        except ValueError as exc:
            _error(errors, ("settings", name), str(exc))
    slo = clean_slo(raw.get("slo"), ("settings", "slo"), errors)
    if slo:
        settings["slo"] = slo
    categories = raw.get("categories")
    if isinstance(categories, str):
        categories = [c.strip() for c in categories.split(",")]
    if categories:
        if not isinstance(categories, list) or not all(isinstance(c, str) for c in categories):
            _error(errors, ("settings", "categories"), "must be a list of names")
        else:
            settings["categories"] = [c for c in categories if c]
    load = clean_load(raw.get("load"), errors)
    if load:
        settings["load"] = load
    return settings


def clean_load(raw, errors, path=("settings", "load")):
    """settings.load: {mode, steps, arrivals (rate), warmup, requestsPerStep, judgeSteps}, or
    {} when not given. `steps` may be text ("1, 2, 4, 8", a form's field)."""
    path = tuple(path)
    if raw in (None, "", {}):
        return {}
    if not isinstance(raw, dict):
        _error(errors, path, 'must be an object like {"mode": "concurrency", "steps": [1, 2, 4]}')
        return {}
    for key in raw:
        if key not in LOAD_KEYS:
            _error(errors, (*path, key), "unknown key; use " + ", ".join(LOAD_KEYS))
    mode = raw.get("mode") or "concurrency"
    if mode not in LOAD_MODES:
        _error(errors, (*path, "mode"), "must be " + " or ".join(LOAD_MODES))
        return {}
    load = {"mode": mode, "steps": _load_steps(raw.get("steps"), mode, path, errors)}
    if mode == "rate":
        arrivals = raw.get("arrivals") or "poisson"
        if arrivals not in LOAD_ARRIVALS:
            _error(errors, (*path, "arrivals"), "must be " + " or ".join(LOAD_ARRIVALS))
        load["arrivals"] = arrivals
    elif raw.get("arrivals") not in (None, ""):
        _error(errors, (*path, "arrivals"), 'is for mode "rate" only')
    for key, low, high in (("warmup", 0, LOAD_MAX_WARMUP), ("requestsPerStep", 1, 1_000_000)):
        value = raw.get(key)
        if value in (None, ""):
            continue
        try:
            number = _int(value)
        except (TypeError, ValueError, OverflowError):
            number = low - 1
        if not low <= number <= high:
            _error(errors, (*path, key), f"must be a whole number from {low} to {high}")
            continue
        load[key] = number
    judge_steps = raw.get("judgeSteps") or "all"
    if judge_steps not in LOAD_JUDGE_STEPS:
        _error(errors, (*path, "judgeSteps"), 'must be "all" or "first"')
    load["judgeSteps"] = judge_steps
    return load


def _load_steps(raw, mode, path, errors):
    """The steps of a load: whole numbers from 1 to 64 (concurrency) or requests/s above 0
    (rate), at least one, at most LOAD_MAX_STEPS; text is split at commas."""
    if isinstance(raw, str):
        raw = [part.strip() for part in raw.replace(";", ",").split(",") if part.strip()]
    if not isinstance(raw, list) or not raw:
        _error(errors, (*path, "steps"), "give at least one step, like [1, 2, 4, 8]")
        return []
    if len(raw) > LOAD_MAX_STEPS:
        _error(errors, (*path, "steps"), f"at most {LOAD_MAX_STEPS} steps")
        return []
    steps = []
    for i, value in enumerate(raw):
        try:
            if mode == "concurrency":
                number = _int(value)
                ok = 1 <= number <= SETTINGS["concurrency"][2]
            else:
                number = _number(value)
                ok = 0 < number <= LOAD_MAX_RATE
        except (TypeError, ValueError, OverflowError):
            ok = False
        if not ok:
            message = (
                f"must be whole requests in flight from 1 to {SETTINGS['concurrency'][2]}"
                if mode == "concurrency"
                else f"must be requests per second above 0, at most {LOAD_MAX_RATE:g}"
            )
            _error(errors, (*path, "steps", i), message)
            continue
        steps.append(number)
    return steps


def _targets(raw_targets, errors):
    """The targets: the same model may come twice with different params (parameter
    profiles); each gets a label, unique in the run (given, or the model and its params)."""
    targets, seen = [], {}
    if not isinstance(raw_targets, list) or not raw_targets:
        _error(errors, ("targets",), "pick at least one target model")
        return targets
    for i, raw in enumerate(raw_targets):
        if not isinstance(raw, dict):
            _error(errors, ("targets", i), "must be an object {providerId, model}")
            continue
        provider = _provider(
            _first(raw, "providerId", "providerConfigId"), ("targets", i, "providerId"), errors
        )
        model = _model(_first(raw, "model", "modelName"), ("targets", i, "model"), errors)
        params = clean_params(raw.get("params"), ("targets", i, "params"), errors)
        label = _label(raw.get("label"), ("targets", i, "label"), errors)
        if provider is None or model is None:
            continue
        profile = (provider.id, model, sha256_json(canonical_params(params)))
        if profile in seen:
            _error(
                errors,
                ("targets", i, "model"),
                f"{provider.name}/{model} with these params is already targets[{seen[profile]}]; "
                "give it other params to compare settings",
            )
            continue
        seen[profile] = i
        targets.append(
            {"provider": provider, "model": model, "params": params, "label": label, "index": i}
        )
    _labels(targets, errors)
    for target in targets:
        del target["index"]
    return targets


def _label(value, path, errors):
    if value in (None, ""):
        return None
    if not isinstance(value, str) or not value.strip():
        _error(errors, path, "must be text")
        return None
    if len(value.strip()) > LABEL_MAX:
        _error(errors, path, f"must be at most {LABEL_MAX} characters")
        return None
    return value.strip()


def _labels(targets, errors):
    """Give every target its label: a given one must be unique in the run; a default one that
    clashes (one model on two providers) gets its provider's name in front."""
    given = {}
    for t in targets:
        if t["label"] is None:
            continue
        if t["label"] in given:
            _error(
                errors,
                ("targets", t["index"], "label"),
                f"{t['label']!r} is already the label of targets[{given[t['label']]}]",
            )
        given.setdefault(t["label"], t["index"])
    taken = set(given)
    for t in targets:
        if t["label"] is not None:
            continue
        label = RunTarget.default_label(t["model"], t["params"])
        if label in taken:
            label = f"{t['provider'].name}/{label}"
        t["label"] = label[:LABEL_MAX]
        taken.add(t["label"])


def clean_score_weights(raw, errors):
    """scoreWeights: {"checks": 0-1}, the checks' share of an item's score beside the judge
    (scoring/task_checks.py); {} when not given (each task's default)."""
    if raw in (None, "", {}):
        return {}
    if not isinstance(raw, dict):
        _error(errors, ("scoreWeights",), 'must be an object like {"checks": 0.5}')
        return {}
    weights = {}
    for key, value in raw.items():
        if key != "checks":
            _error(errors, ("scoreWeights", key), 'unknown weight; give "checks" (0-1)')
            continue
        if value in (None, ""):
            continue
        try:
            number = _number(value)
        except (TypeError, ValueError, OverflowError):
            number = -1.0
        if not 0.0 <= number <= 1.0:
            _error(errors, ("scoreWeights", key), "must be a number from 0 to 1")
            continue
        weights[key] = number
    return weights


def run_slo(run):
    """The run's SLO as clean_slo kept it in its settings ({} when it has none)."""
    slo = (run.settings or {}).get("slo")
    return dict(slo) if isinstance(slo, dict) else {}


def clean_slo(raw, path, errors):
    """settings.slo: {ttftP90Ms, itlP90Ms, e2eP95Ms (ms above 0), minScore (0-100)}, each
    optional; {} when none is given. Errors name the field (settings.slo.ttftP90Ms)."""
    path = tuple(path)
    if raw in (None, "", {}):
        return {}
    if not isinstance(raw, dict):
        _error(errors, path, 'must be an object like {"ttftP90Ms": 500, "minScore": 70}')
        return {}
    slo = {}
    for key, value in raw.items():
        if key not in SLO_KEYS:
            _error(errors, (*path, key), "unknown SLO; use " + ", ".join(SLO_KEYS))
            continue
        if value in (None, ""):
            continue  # a blank form field: no bound
        try:
            number = _number(value)
        except (TypeError, ValueError, OverflowError):
            number = None
        if key == "minScore":
            if number is None or not 0.0 <= number <= 100.0:
                _error(errors, (*path, key), "must be a number from 0 to 100")
                continue
        elif number is None or not 0.0 < number <= SLO_MAX_MS:
            _error(errors, (*path, key), f"must be a positive number of ms (at most {SLO_MAX_MS})")
            continue
        slo[key] = number
    return slo
