"""A promptfoo config (`promptfooconfig.yaml`) run as it is: `llmbench run -c promptfooconfig.yaml`.

The suite itself is the run's dataset (format promptfoo, collection named for the suite) and
its providers the targets:

    ollama:chat:MODEL, ollama:MODEL      an OLLAMA provider (config.apiBaseUrl, else
                                         $OLLAMA_BASE_URL, else http://localhost:11434)
    openai:MODEL, openai:chat:MODEL      an OPENAI provider (config.apiBaseUrl or apiHost, else
                                         $OPENAI_BASE_URL, else https://api.openai.com), with
                                         Authorization: Bearer ${OPENAI_API_KEY} (or the
                                         config.apiKeyEnvar variable) for OpenAI itself or when
                                         the variable is set

A provider is named `ollama` / `openai` on its default URL, else `ollama-HOST:PORT`. The
judge is defaultTest.options.provider (or --judge); a run needs one only when a test has an
llm-rubric assert, and the error names those tasks.
"""

from urllib.parse import urlsplit

from ..datasets import promptfoo as suite
from ..datasets.lines import LineDict
from ..providers import formats

DEFAULT_URLS = {
    "ollama": "http://localhost:11434",
    "openai": "https://api.openai.com",
}
_URL_ENV = {"ollama": "OLLAMA_BASE_URL", "openai": "OPENAI_BASE_URL"}
_TYPES = {"ollama": formats.OLLAMA, "openai": formats.OPENAI}
_PARAMS = ("temperature", "max_tokens", "top_p", "seed")


def is_promptfoo(doc):
    """A promptfoo config: prompts and tests at the top (ours has run, targets)."""
    return isinstance(doc, dict) and {"prompts", "tests"} <= set(doc) and "run" not in doc


def _map(line=None, **values):
    out = LineDict()
    out.line = line
    for key, value in values.items():
        out[key] = value
        out.key_lines[key] = line
    return out


class PromptfooConfig:
    """Converts one promptfoo document; problems are collected with their lines."""

    def __init__(self, doc, problems, file, environ):
        self.doc, self.problems, self.file, self.environ = doc, problems, file, environ
        self.providers = {}  # name -> provider mapping

    def model(self, ident, config, line, path):
        """{provider, model, params} for a promptfoo provider id, or None (reported)."""
        if not isinstance(ident, str) or ":" not in ident:
            self.problems.add(path, "must be a provider id like ollama:chat:MODEL", line)
            return None
        family, _, rest = ident.partition(":")
        if family not in _TYPES:
            self.problems.add(
                path,
                f"provider {ident!r} is not supported; use ollama:chat:MODEL, ollama:MODEL, "
                "openai:MODEL or openai:chat:MODEL",
                line,
            )
            return None
        if rest.startswith("chat:"):
            rest = rest[len("chat:") :]
        elif rest.split(":", 1)[0] in ("completion", "embeddings", "embedding", "assistant"):
            self.problems.add(path, f"{ident!r}: only chat models are supported", line)
            return None
        if not rest:
            self.problems.add(path, f"{ident!r} names no model", line)
            return None
        config = config if isinstance(config, dict) else {}
        name = self.provider(family, config)
        params = {k: config[k] for k in _PARAMS if k in config}
        return _map(line, provider=name, model=rest, params=_map(line, **params))

    def provider(self, family, config):
        base = config.get("apiBaseUrl")
        if not base and config.get("apiHost"):
            base = f"https://{config['apiHost']}"
        base = base or self.environ.get(_URL_ENV[family]) or DEFAULT_URLS[family]
        kind = _TYPES[family]
        suffix = formats.wire_format(kind).api_prefix
        base = base.rstrip("/")
        if suffix and base.endswith(suffix):
            base = base[: -len(suffix)]
        name = family if base == DEFAULT_URLS[family] else f"{family}-{urlsplit(base).netloc}"
        provider = _map(None, name=name, type=kind, base_url=base)
        if family == "openai":
            env = config.get("apiKeyEnvar")
            if not env and (base == DEFAULT_URLS["openai"] or self.environ.get("OPENAI_API_KEY")):
                env = "OPENAI_API_KEY"
            if env:
                provider["headers"] = _map(None, Authorization=f"Bearer ${{{env}}}")
        self.providers.setdefault(name, provider)
        return name

    def convert(self):
        doc = self.doc
        targets = []
        for n, (ident, config, line) in enumerate(suite.provider_ids(doc)):
            target = self.model(ident, config, line, f"providers[{n}]")
            if target is not None:
                raw = (doc.get("providers") or [])[n]
                if isinstance(raw, dict) and isinstance(raw.get("label"), str):
                    target["label"] = raw["label"]
                targets.append(target)
        if not doc.get("providers"):
            self.problems.add("providers", "give at least one provider (or the targets)", doc.line)
        out = _map(doc.line)
        dataset = str(self.file).replace("\\", "/").rsplit("/", 1)[-1]
        name = suite.suite_name(self.file)
        run = _map(
            doc.line,
            name=name,  # the run id starts with it: the suite's name, with no spaces
            dataset=dataset,
            dataset_format="promptfoo",
            dataset_collection=name,
        )
        out["run"] = run
        default = doc.get("defaultTest")
        options = default.get("options") if isinstance(default, dict) else None
        grader = options.get("provider") if isinstance(options, dict) else None
        if grader is not None:
            ident, config = grader, {}
            if isinstance(grader, dict):
                ident, config = grader.get("id"), grader.get("config") or {}
            judge = self.model(ident, config, default.line_of("options"), "defaultTest.options")
            if judge is not None:
                out["judge"] = judge
        out["providers"] = list(self.providers.values())
        out["targets"] = targets
        out.key_lines.update({"providers": doc.line_of("providers"), "targets": doc.line})
        return out


def convert(doc, problems, file, environ):
    """Our document for a promptfoo config (see the module docstring)."""
    return PromptfooConfig(doc, problems, file, environ).convert()


def needs_judge(text, file):
    """task_ids of the suite's tasks that have an llm-rubric (a rubric for the judge)."""
    dataset = suite.parse(text, file)
    return [t.data["task_id"] for t in dataset.tasks if t.data.get("rubric")]
