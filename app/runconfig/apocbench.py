"""An apocbench-style run config (`apocbench.yml`) read as ours, strictly, with its own key names.

    run:     {name, datasetPath, outDir, resume, questionLimit?, categories?, maxBudgetUsd?,
              concurrency: {candidate, judge}}   (our other run keys are accepted too)
    judge:   {router, model, provider?, temperature?, maxTokens, structured, routing?}
    routers: {ollama: {baseUrl, apiKeyEnv?, default}, openrouter: {baseUrl, apiKeyEnv,
              headers?, default}}   (another name needs `type: OPENAI | OLLAMA`)
    models:  [{id, router, model, provider?, params?, promptFormat?, routing?}]
    prices:  ours: [{provider: ROUTER, model, input_per_1m, output_per_1m}]

A router becomes a provider of that name: `apiKeyEnv` an `Authorization: Bearer ${VAR}` secret
header, a trailing /v1 (OpenAI wire) or /api (Ollama) dropped from `baseUrl`, its `default`
request params every model's (and the judge's) starting params. For the budget, as apocbench
has it: the `openrouter` router reports each call's cost, and `ollama` models are local, priced 0
(added to prices: unless given there). `routing` (and `provider`, as
`order: [provider]`) becomes OpenRouter's `provider` preferences in snake_case, for OPENAI
routers only. `structured` must stay true: the judge always answers in structured output.

The file's keys are checked here with their lines; the document returned is ours, with `renames`
from our key paths back to the file's, so later errors still name the keys as written.
"""

from urllib.parse import urlsplit

from ..datasets.lines import LineDict
from ..providers import formats
from .run_plan import is_no_judge

TOP_KEYS = {"run", "judge", "routers", "models", "prices"}
ROUTER_KEYS = {
    "baseUrl",
    "apiKeyEnv",
    "headers",
    "default",
    "type",
    "timeoutSeconds",
    "maxConcurrency",
}
ROUTER_TYPES = {"ollama": formats.OLLAMA, "openrouter": formats.OPENAI}
JUDGE_KEYS = {
    "router",
    "model",
    "provider",
    "temperature",
    "maxTokens",
    "structured",
    "routing",
    "params",
}
MODEL_KEYS = {"id", "router", "model", "provider", "params", "promptFormat", "routing"}
CONCURRENCY_KEYS = {"candidate", "judge"}
_BOOL, _TEXTS = "bool", "texts"
# apocbench routing key -> (OpenRouter's snake_case key, kind or allowed values)
ROUTING = {
    "requireParameters": ("require_parameters", _BOOL),
    "allowFallbacks": ("allow_fallbacks", _BOOL),
    "order": ("order", _TEXTS),
    "only": ("only", _TEXTS),
    "ignore": ("ignore", _TEXTS),
    "sort": ("sort", ("price", "throughput", "latency")),
    "dataCollection": ("data_collection", ("allow", "deny")),
    "zdr": ("zdr", _BOOL),
    "maxPrice": ("max_price", ("prompt", "completion", "request", "image")),
    "quantizations": ("quantizations", _TEXTS),
}


def is_apocbench(doc):
    """An apocbench-style config: it has routers or models (ours has providers, targets)."""
    return isinstance(doc, dict) and bool({"routers", "models"} & set(doc))


def _map(line=None):
    out = LineDict()
    out.line = line
    return out


def _put(out, key, value, line):
    out[key] = value
    out.key_lines[key] = line


class ApocbenchConfig:
    """Converts one apocbench-style document; `problems` collects what is wrong, with lines."""

    def __init__(self, doc, problems):
        self.doc, self.problems = doc, problems
        self.renames = {}
        self.routers = {}  # name -> (type, default params LineDict)
        self.urls = {}  # name -> its baseUrl as given (whether it reports costs)
        self.local = []  # (router, model) served by the ollama router: free, priced 0

    def add(self, path, message, mapping=None, key=None):
        line = None
        if isinstance(mapping, LineDict):
            line = mapping.line_of(key) if key is not None else mapping.line
        self.problems.add(path, message, line)

    def unknown(self, mapping, allowed, prefix):
        for key in mapping:
            if key not in allowed:
                listed = ", ".join(sorted(allowed))
                self.add(f"{prefix}{key}", f"unknown key; allowed: {listed}", mapping, key)

    def convert(self):
        doc = self.doc
        self.unknown(doc, TOP_KEYS, "")
        out = _map(doc.line)
        if "run" in doc:
            _put(out, "run", self.run(doc["run"]), doc.line_of("run"))
        providers = self.routers_section(doc.get("routers"), doc)
        _put(out, "providers", providers, doc.line_of("routers"))
        if "judge" in doc and not is_no_judge(doc["judge"]):
            _put(out, "judge", self.judge(doc["judge"]), doc.line_of("judge"))
        _put(out, "targets", self.models(doc.get("models"), doc), doc.line_of("models"))
        prices = doc.get("prices")
        if self.local and (prices is None or isinstance(prices, list)):
            given = {
                (p.get("provider"), p.get("model")) for p in prices or [] if isinstance(p, dict)
            }
            prices = list(prices or []) + [
                LineDict(provider=router, model=model, input_per_1m=0, output_per_1m=0)
                for router, model in dict.fromkeys(self.local)
                if (router, model) not in given
            ]
        if prices is not None:
            _put(out, "prices", prices, doc.line_of("prices"))
        return out

    def run(self, run):
        if not isinstance(run, LineDict):
            return run  # the checker says what a run section must be
        out = _map(run.line)
        for key, value in run.items():
            if key == "concurrency" and isinstance(value, dict):
                self.unknown(value, CONCURRENCY_KEYS, "run.concurrency.")
                for part, ours in (("candidate", "concurrency"), ("judge", "judge_concurrency")):
                    if part in value:
                        _put(out, ours, value[part], value.line_of(part))
                        self.renames[f"run.{ours}"] = f"run.concurrency.{part}"
                continue
            _put(out, key, value, run.line_of(key))
        return out

    def routers_section(self, routers, doc):
        providers = []
        if routers is None:
            return providers
        if not isinstance(routers, LineDict):
            self.add(
                "routers", "must map a router name to {baseUrl, apiKeyEnv, default}", doc, "routers"
            )
            return providers
        for name, raw in routers.items():
            path = f"routers.{name}"
            if not isinstance(raw, LineDict):
                self.add(
                    path,
                    "must be a mapping {baseUrl, apiKeyEnv?, headers?, default?}",
                    routers,
                    name,
                )
                continue
            self.unknown(raw, ROUTER_KEYS, f"{path}.")
            kind = raw.get("type") or ROUTER_TYPES.get(str(name))
            if kind is None:
                self.add(
                    path,
                    f"give type: {' or '.join(formats.TYPES)} "
                    "(only ollama and openrouter are known by name)",
                    routers,
                    name,
                )
                continue
            kind = str(kind).upper()
            n = len(providers)
            ours = f"providers[{n}]"
            self.renames[ours] = path
            provider = _map(raw.line)
            _put(provider, "name", str(name), routers.line_of(name))
            _put(provider, "type", kind, raw.line_of("type"))
            for key, target in (
                ("baseUrl", "base_url"),
                ("timeoutSeconds", "timeout_seconds"),
                ("maxConcurrency", "max_concurrency"),
            ):
                if key in raw:
                    value = raw[key]
                    if key == "baseUrl" and isinstance(value, str):
                        value = _strip(value, kind)
                    _put(provider, target, value, raw.line_of(key))
                    self.renames[f"{ours}.{target}"] = f"{path}.{key}"
            given, headers = raw.get("headers"), _map(raw.line_of("headers"))
            if isinstance(given, LineDict):
                for key, value in given.items():
                    _put(headers, key, value, given.line_of(key))
            elif given is not None:
                self.add(f"{path}.headers", "must map a header name to its value", raw, "headers")
            env = raw.get("apiKeyEnv")
            if env is not None:
                if not isinstance(env, str) or not env.strip().isidentifier():
                    self.add(
                        f"{path}.apiKeyEnv", "must name an environment variable", raw, "apiKeyEnv"
                    )
                else:
                    _put(
                        headers,
                        "Authorization",
                        f"Bearer ${{{env.strip()}}}",
                        raw.line_of("apiKeyEnv"),
                    )
                    self.renames[f"{ours}.headers.Authorization"] = f"{path}.apiKeyEnv"
            if headers:
                _put(provider, "headers", headers, raw.line_of("headers") or raw.line)
            default = raw.get("default")
            if default is not None and not isinstance(default, LineDict):
                self.add(f"{path}.default", "must be a mapping of request params", raw, "default")
                default = None
            self.routers[str(name)] = (kind, default or LineDict())
            self.urls[str(name)] = raw.get("baseUrl")
            providers.append(provider)
        return providers

    def routing(self, raw, key, path, router, provider_pref):
        """OpenRouter preferences (snake_case) from `routing` and `provider`, or None."""
        value = raw.get(key)
        if value is None and provider_pref is None:
            return None
        kind = self.routers.get(str(router), (formats.OPENAI, None))[0]
        if not formats.wire_format(kind).takes_routing:
            what = key if value is not None else "provider"
            self.add(f"{path}.{what}", "is for OpenRouter (an OPENAI router) only", raw, what)
            return None
        prefs = {}
        if value is not None:
            if not isinstance(value, LineDict):
                self.add(f"{path}.{key}", "must be a mapping of routing options", raw, key)
                return None
            self.unknown(value, set(ROUTING), f"{path}.{key}.")
            for name, item in value.items():
                if name in ROUTING:
                    checked = self._routing_value(name, item, f"{path}.{key}.{name}", value)
                    if checked is not None:
                        prefs[ROUTING[name][0]] = checked
        if provider_pref is not None:
            if not isinstance(provider_pref, str) or not provider_pref.strip():
                self.add(f"{path}.provider", "must be an OpenRouter provider name", raw, "provider")
            elif "order" in prefs:
                self.add(
                    f"{path}.provider", "give provider or routing.order, not both", raw, "provider"
                )
            else:
                prefs["order"] = [provider_pref.strip()]
        return prefs

    def _routing_value(self, name, value, path, mapping):
        kind = ROUTING[name][1]
        if kind == _BOOL:
            if isinstance(value, bool):
                return value
            self.add(path, "must be true or false", mapping, name)
        elif kind == _TEXTS:
            if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
                return value
            self.add(path, "must be a list of names", mapping, name)
        elif name == "maxPrice":
            if isinstance(value, dict) and all(
                k in kind and isinstance(v, int | float) and not isinstance(v, bool) and v >= 0
                for k, v in value.items()
            ):
                return dict(value)
            self.add(
                path, "must map prompt, completion, request or image to a price >= 0", mapping, name
            )
        elif value in kind:
            return value
        else:
            self.add(path, "must be " + " or ".join(kind), mapping, name)
        return None

    def _local(self, router, model):
        if router == "ollama" and isinstance(model, str) and model.strip():
            self.local.append((router, model.strip()))

    def reports_cost(self):
        """Providers whose server reports each call's cost: a router whose baseUrl is
        OpenRouter's (openrouter.ai), whatever its name; a router named `openrouter` that
        points elsewhere (a local server on 127.0.0.1) reports none, so a budget needs prices."""
        return {name for name in self.routers if _is_openrouter(self.urls.get(name))}

    def params(self, router, own, extra, line):
        """The router's default params, then the entry's own, then `extra` (judge fields)."""
        merged = _map(line)
        default = self.routers.get(str(router), (None, LineDict()))[1]
        for source in (default, own if isinstance(own, dict) else {}, extra):
            for key, value in source.items():
                merged[key] = value
                if isinstance(source, LineDict) and key in source.key_lines:
                    merged.key_lines[key] = source.key_lines[key]
                else:
                    merged.key_lines.pop(key, None)
        return merged

    def judge(self, raw):
        if not isinstance(raw, LineDict):
            return raw
        self.unknown(raw, JUDGE_KEYS, "judge.")
        if raw.get("structured", True) is not True:
            self.add(
                "judge.structured",
                "must be true: the judge always answers in structured "
                "output; remove it or set true",
                raw,
                "structured",
            )
        router = raw.get("router")
        if router is None:
            self.add("judge.router", "is required: the router that serves the judge", raw)
        out = _map(raw.line)
        _put(out, "provider", router, raw.line_of("router"))
        _put(out, "model", raw.get("model"), raw.line_of("model"))
        self._local(router, raw.get("model"))
        self.renames["judge.provider"] = "judge.router"
        extra, unset = {}, []
        for key, ours in (("temperature", "temperature"), ("maxTokens", "max_tokens")):
            if raw.get(key) is not None:
                extra[ours] = raw[key]
                self.renames[f"judge.params.{ours}"] = f"judge.{key}"
            elif key in raw:
                unset.append(ours)  # `temperature: null`: left to the model, not the router's
        prefs = self.routing(raw, "routing", "judge", router, raw.get("provider"))
        if prefs:
            extra["provider"] = prefs
            self.renames["judge.params.provider"] = "judge.routing"
        params = self.params(router, raw.get("params"), extra, raw.line)
        for key in unset:
            params.pop(key, None)
        _put(out, "params", params, raw.line_of("params"))
        return out

    def models(self, models, doc):
        targets = []
        if models is None:
            return targets
        if not isinstance(models, list):
            self.add("models", "must be a list of {id, router, model}", doc, "models")
            return targets
        ids = set()
        for n, raw in enumerate(models):
            path = f"models[{n}]"
            if not isinstance(raw, LineDict):
                self.add(path, "must be a mapping {id, router, model, params?}", doc, "models")
                continue
            self.unknown(raw, MODEL_KEYS, f"{path}.")
            model_id = raw.get("id")
            if not isinstance(model_id, str) or not model_id.strip():
                self.add(
                    f"{path}.id",
                    "is required: a name for this model entry",
                    raw,
                    "id" if "id" in raw else None,
                )
            elif model_id in ids:
                self.add(f"{path}.id", f"{model_id!r} is used twice", raw, "id")
            else:
                ids.add(model_id)
            fmt = raw.get("promptFormat")
            if fmt is not None and fmt != "chat":
                self.add(
                    f"{path}.promptFormat",
                    'only "chat" is supported (chat messages)',
                    raw,
                    "promptFormat",
                )
            router = raw.get("router")
            target = _map(raw.line)
            _put(target, "provider", router, raw.line_of("router"))
            _put(target, "model", raw.get("model"), raw.line_of("model"))
            self._local(router, raw.get("model"))
            extra = {}
            prefs = self.routing(raw, "routing", path, router, raw.get("provider"))
            if prefs:
                extra["provider"] = prefs
            params = self.params(router, raw.get("params"), extra, raw.line)
            _put(target, "params", params, raw.line_of("params"))
            if isinstance(model_id, str) and model_id.strip():
                # An apocbench-style config names each model by its id: the target's label.
                _put(target, "label", model_id.strip(), raw.line_of("id"))
            ours = f"targets[{len(targets)}]"
            self.renames[ours] = path
            self.renames[f"{ours}.provider"] = f"{path}.router"
            self.renames[f"{ours}.params.provider"] = f"{path}.routing"
            self.renames[f"{ours}.label"] = f"{path}.id"
            targets.append(target)
        return targets


def _strip(url, kind):
    """Our adapters add /v1/... or /api/... themselves: drop it from an apocbench-style base URL."""
    trimmed = url.rstrip("/")
    suffix = formats.wire_format(kind).api_prefix
    return trimmed[: -len(suffix)] if suffix and trimmed.endswith(suffix) else trimmed


def _is_openrouter(url):
    """Whether a router's baseUrl is OpenRouter's own (its replies carry each call's cost)."""
    if not isinstance(url, str):
        return False
    try:
        host = (urlsplit(url.strip()).hostname or "").lower()
    except ValueError:
        return False
    return host == "openrouter.ai" or host.endswith(".openrouter.ai")


def convert(doc, problems):
    """(our document, renames {our path: the file's path}, providers that report their own
    cost) for an apocbench-style document."""
    seed = ApocbenchConfig(doc, problems)
    return seed.convert(), seed.renames, seed.reports_cost()
