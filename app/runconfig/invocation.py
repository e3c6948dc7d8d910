"""One invocation's changes to a run config: `--limit`, `--categories`, `--concurrency`, `--name`,
`--judge provider/model` and `--set key.path=value`.

They are written into the parsed document before it is checked, so the config's own rules check
them; a value they set has no line, and its errors name the option instead (`--set
run.question_limit=abc: run.question_limit: must be a whole number ...`). `--set` paths are the
file's own keys (`run.questionLimit` in an apocbench-style file); the other options name our keys.
"""

import os
import re
from dataclasses import dataclass

from ..datasets.lines import LineDict

_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


@dataclass
class Overrides:
    """What the command line changes, as typed (text; the config's rules check the values)."""

    limit: str | None = None
    categories: str | None = None
    concurrency: str | None = None
    name: str | None = None
    judge: str | None = None
    sets: tuple = ()
    models: tuple = ()  # --model PROVIDER/MODEL[:LABEL], replacing the config's targets
    repeat: str | None = None  # --repeat N: run.repeats

    def __bool__(self):
        return any(
            v not in (None, "", ())
            for v in (
                self.limit,
                self.categories,
                self.concurrency,
                self.name,
                self.judge,
                self.sets,
                self.models,
                self.repeat,
            )
        )


# Paths a `--set` may give: relative to the working folder (where the command was typed), not
# to the config file as the same key written in the file is (docs/CLI.md says both).
PATH_KEYS = ("out_dir", "outDir", "dataset", "datasetPath")


def _value(text):
    """A typed value as YAML reads it (`3`, `0.5`, `[a, b]`, `{provider: p, model: m}`,
    `true`), else the text itself; its mappings are the config's own kind (LineDict)."""
    # Lazy: every command with --set imports this module, and a dataset's `validate` reads no
    # YAML (datasets/lines.py).
    import yaml

    try:
        return _lined(yaml.safe_load(text)) if text.strip() else text
    except (yaml.YAMLError, RecursionError, ValueError):  # too deep, or a number too long
        return text


def _lined(value):
    """Mappings as LineDict (with no lines: their errors name the option) all the way down."""
    if isinstance(value, dict):
        mapping = LineDict()
        for key, item in value.items():
            _put(mapping, key, _lined(item))
        return mapping
    if isinstance(value, list):
        return [_lined(item) for item in value]
    return value


def _from_here(key, value):
    """A path given on the command line, made absolute from the working folder."""
    if key in PATH_KEYS and isinstance(value, str) and value and not os.path.isabs(value):
        return os.path.abspath(value)
    return value


def _steps(path):
    """`targets[0].params.temperature` (or `targets.0.params...`) as keys and list indexes."""
    steps, pos = [], 0
    for match in _STEP.finditer(path):
        if match.start() != pos and path[pos : match.start()] != ".":
            return None
        key, index = match.groups()
        steps.append(int(index) if index is not None else (int(key) if key.isdigit() else key))
        pos = match.end()
    return steps if steps and pos == len(path) else None


def _put(mapping, key, value):
    """Set `key` with no line of its own: its errors then name the option, not a line."""
    mapping[key] = value
    if isinstance(mapping, LineDict):
        mapping.key_lines[key] = None


def _set_path(doc, steps):
    """Walk to the last step's container, making mappings on the way; (container, key) or why."""
    node = doc
    for n, step in enumerate(steps[:-1]):
        nxt = steps[n + 1]
        if isinstance(step, int):
            if not isinstance(node, list) or step >= len(node):
                size = len(node) if isinstance(node, list) else 0
                return None, f"there is no item {step} (the list has {size})"
            node = node[step]
            continue
        if not isinstance(node, dict):
            return None, f"{step} is inside a value that is not a mapping"
        if node.get(step) is None:
            if isinstance(nxt, int):
                return None, f"{step} has no list to index"
            _put(node, step, LineDict())
        node = node[step]
    last = steps[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or last >= len(node):
            return None, f"there is no item {last} to set"
    elif not isinstance(node, dict):
        return None, f"{last} would go inside a value that is not a mapping"
    return (node, last), None


def apply_sets(doc, overrides, problems):
    """Apply `--set key.path=value` to the document as written; [(path, label)] applied."""
    tags = []
    for raw in overrides.sets if overrides else ():
        label = f"--set {raw}"
        path, sep, text = raw.partition("=")
        steps = _steps(path.strip()) if sep else None
        if steps is None:
            problems.add(None, "write KEY.PATH=VALUE, e.g. run.question_limit=10", None, label)
            continue
        where, why = _set_path(doc, steps)
        if where is None:
            problems.add(path.strip(), why, None, label)
            continue
        node, key = where
        if isinstance(key, int):
            node[key] = _value(text)
        else:
            _put(node, key, _from_here(key, _value(text)))
        tags.append((path.strip(), label))
    return tags


def apply_options(doc, overrides, problems):
    """Apply the named options to our document shape; [(path, label)] applied."""
    if not overrides:
        return []
    run = doc.get("run")
    if not isinstance(run, dict):
        run = LineDict()
        _put(doc, "run", run)
    tags = []
    for option, key, text in (
        ("--limit", "question_limit", overrides.limit),
        ("--concurrency", "concurrency", overrides.concurrency),
        ("--name", "name", overrides.name),
        ("--categories", "categories", overrides.categories),
        ("--repeat", "repeats", overrides.repeat),
    ):
        if text is None:
            continue
        # Written under the file's own spelling (questionLimit), so errors name that key.
        spelled = [k for k in run if _snake(k) == key]
        for other in spelled[1:]:
            del run[other]
        value = [c.strip() for c in text.split(",") if c.strip()] if key == "categories" else text
        _put(
            run,
            spelled[0] if spelled else key,
            value if key in ("categories", "name") else _value(value),
        )
        tags.append((f"run.{key}", option))
    if overrides.models:
        tags += _apply_models(doc, overrides.models, problems)
    if overrides.judge is not None and overrides.judge.strip().lower() == "none":
        # No judge: the tasks' checks score the run (each task needs some).
        _put(doc, "judge", None)
        tags.append(("judge", "--judge"))
    elif overrides.judge is not None:
        provider, sep, model = overrides.judge.partition("/")
        if not sep or not provider.strip() or not model.strip():
            problems.add(
                None,
                "write PROVIDER/MODEL (e.g. openrouter/google/gemini-3-flash) or none",
                None,
                "--judge",
            )
            return tags
        judge = doc.get("judge")
        if not isinstance(judge, dict):
            judge = LineDict()
            _put(doc, "judge", judge)
        _put(judge, "provider", provider.strip())
        _put(judge, "model", model.strip())
        tags += [("judge.provider", "--judge"), ("judge.model", "--judge")]
    return tags


def parse_model(text):
    """`provider/model[:label]` -> (provider, model, label or None), or None when malformed.
    The label follows the last `:`; a model whose name holds one (an Ollama tag, llama3:8b)
    gives a label to keep its tag: `ollama/llama3:8b:llama3`."""
    provider, sep, rest = text.partition("/")
    if not sep or not provider.strip() or not rest.strip():
        return None
    model, colon, label = rest.rpartition(":")
    if not colon:
        model, label = rest, ""
    if not model.strip():
        return None
    return provider.strip(), model.strip(), label.strip() or None


def _apply_models(doc, models, problems):
    """--model (repeatable): the targets of this invocation, in place of the config's."""
    targets = []
    for text in models:
        parsed = parse_model(text)
        if parsed is None:
            problems.add(
                None,
                f"write PROVIDER/MODEL or PROVIDER/MODEL:LABEL, not {text!r}",
                None,
                "--model",
            )
            continue
        provider, model, label = parsed
        target = LineDict()
        _put(target, "provider", provider)
        _put(target, "model", model)
        if label:
            _put(target, "label", label)
        targets.append(target)
    _put(doc, "targets", targets)
    return [("targets", "--model")]


def _snake(key):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", str(key)).lower()


def _covers(path, field):
    return field == path or field.startswith(path + ".") or field.startswith(path + "[")


def tag_problems(entries, tags, file):
    """Problems at a path an option set name that option (no line), not the config file."""
    for entry in entries:
        field = entry.get("field") or ""
        if entry.get("file") != file:
            continue
        for path, label in tags:
            if _covers(path, field):
                entry["file"], entry["line"] = label, None
                break


def rename_fields(entries, renames, file):
    """Our key paths back to the file's own (`run.question_limit` -> `run.questionLimit`)."""
    if not renames:
        return
    ordered = sorted(renames.items(), key=lambda kv: -len(kv[0]))
    for entry in entries:
        field = entry.get("field")
        if not field or entry.get("file") != file:
            continue
        for ours, theirs in ordered:
            if _covers(ours, field):
                entry["field"] = theirs + field[len(ours) :]
                break
