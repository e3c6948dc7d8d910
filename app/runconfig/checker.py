"""The run config's schema: the keys each section allows, and the checker that turns a parsed
config into a RunPlan, collecting every problem with its key path and line (see reader.py)."""

import re
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

from ..catalog.providers import clean_provider
from ..datasets import importer
from ..datasets.common import folder_problem
from ..datasets.lines import LineDict
from ..db.models import Collection
from ..db.models import Provider
from ..db.models import Run
from ..db.models import Task
from ..errors import ValidationError
from ..runs.spec import SETTINGS
from ..runs.spec import clean_load
from ..runs.spec import clean_params
from ..runs.spec import clean_slo
from ..runs.spec import setting
from .filters import TaskFilters
from .prices import check_prices
from .prices import check_unpriced
from .run_plan import ProviderPlan
from .run_plan import RunPlan
from .run_plan import is_no_judge
from .run_plan import select_tasks

TOP_KEYS = {"run", "providers", "judge", "targets", "prices"}
RUN_KEYS = {
    "concurrency",
    "judge_concurrency",
    "resume",
    "name",
    "id",
    "dataset",
    "dataset_format",
    "dataset_collection",
    "on_duplicate",
    "collections",
    "question_limit",
    "categories",
    "max_attempts",
    "max_budget_usd",
    "repeats",
    "judge_repeats",
    "latency_target_ms",
    "slo",
    "out_dir",
    "judge_check",
    "load",
}
# apocbench spellings accepted beside ours
RUN_ALIASES = {
    "datasetPath": "dataset",
    "questionLimit": "question_limit",
    "maxBudgetUsd": "max_budget_usd",
    "maxAttempts": "max_attempts",
    "judgeRepeats": "judge_repeats",
    "outDir": "out_dir",
    "onDuplicate": "on_duplicate",
    "judgeConcurrency": "judge_concurrency",
    "judgeCheck": "judge_check",
    "latencyTargetMs": "latency_target_ms",
}
# run.slo's keys as a config spells them -> the run spec's (runs/spec.py SLO_KEYS)
SLO_NAMES = {
    "ttft_p90_ms": "ttftP90Ms",
    "itl_p90_ms": "itlP90Ms",
    "e2e_p95_ms": "e2eP95Ms",
    "min_score": "minScore",
}
SLO_ALIASES = {camel: snake for snake, camel in SLO_NAMES.items()}  # the run spec's spellings
# run section number keys -> the run setting they set (runs/spec.py SETTINGS)
RUN_SETTINGS = (
    ("question_limit", "questionLimit"),
    ("max_attempts", "maxAttempts"),
    ("max_budget_usd", "maxBudgetUsd"),
    ("concurrency", "concurrency"),
    ("judge_concurrency", "judgeConcurrency"),
    ("repeats", "repeats"),
    ("judge_repeats", "judgeRepeats"),
    ("latency_target_ms", "latencyTargetMs"),
)
# run.load's snake_case spellings beside the spec's
LOAD_ALIASES = {"requests_per_step": "requestsPerStep", "judge_steps": "judgeSteps"}
PROVIDER_KEYS = {
    "name",
    "type",
    "base_url",
    "models_endpoint",
    "inference_endpoint",
    "headers",
    "timeout_seconds",
    "max_concurrency",
}
MODEL_KEYS = {"provider", "model", "params"}
TARGET_KEYS = MODEL_KEYS | {"label"}  # a target may be named (the same model twice, other params)
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SECRET_HINT = re.compile(r"auth|key|token|secret|password|cookie", re.I)
_STORE_NAMES = {
    "baseUrl": "base_url",
    "modelsEndpoint": "models_endpoint",
    "inferenceEndpoint": "inference_endpoint",
    "timeoutSeconds": "timeout_seconds",
    "maxConcurrency": "max_concurrency",
}


class ConfigChecker:
    """Validates one parsed config section by section; `plan()` returns the RunPlan."""

    def __init__(
        self,
        doc,
        problems,
        base_dir,
        environ,
        allow_unpriced=False,
        reports_cost=frozenset(),
        skip_unsupported=False,
        filters=None,
        store_dataset=False,
    ):
        self.doc, self.problems, self.base_dir, self.environ = doc, problems, base_dir, environ
        self.filters = filters or TaskFilters()  # the command line's --filter-*, --sample
        self.allow_unpriced = allow_unpriced
        self.skip_unsupported = skip_unsupported  # --skip-unsupported: leave out, listed
        # `llmbench run`: the dataset is imported as it is checked, in the caller's transaction
        # (read once; importer.survey), not checked here and read again by run_plan.apply.
        self.store_dataset = store_dataset
        self.reports_cost = set(reports_cost)  # provider names whose server reports the cost
        self.providers = {}
        self.attempted = set()  # provider names defined in the config, valid or not
        self.renames = {}  # our key path -> the file's spelling (run.questionLimit)

    def add(self, path, message, mapping=None, key=None):
        line = None
        if isinstance(mapping, LineDict):
            line = mapping.line_of(key) if key is not None else mapping.line
        self.problems.add(path, message, line)

    def keys(self, mapping, allowed, prefix, aliases=None):
        """Unknown keys are errors; returns the mapping with aliases renamed."""
        aliases = aliases or {}
        for key, line in mapping.duplicates:
            self.problems.add(f"{prefix}{key}", "is given twice", line)
        out = LineDict()
        out.line = mapping.line
        for key, value in mapping.items():
            name = aliases.get(key, key)
            if name not in allowed:
                self.add(
                    f"{prefix}{key}",
                    "unknown key; allowed: " + ", ".join(sorted(allowed)),
                    mapping,
                    key,
                )
                continue
            out[name] = value
            out.key_lines[name] = mapping.line_of(key)
            if name != key:
                self.renames[f"{prefix}{name}"] = f"{prefix}{key}"
        return out

    def plan(self):
        doc = self.keys(self.doc, TOP_KEYS, "")
        run = doc.get("run")
        if not isinstance(run, LineDict):
            self.add("run", "is required: a mapping with at least name", doc, "run")
            run = LineDict()
        run = self.keys(run, RUN_KEYS, "run.", RUN_ALIASES)
        for n, raw in enumerate(self.list_of(doc, "providers")):
            self.provider(raw, f"providers[{n}]")
        judge = None
        if not is_no_judge(doc.get("judge")):
            judge = self.model(doc.get("judge"), "judge", doc)
        targets = []
        seen = set()
        raw_targets = self.list_of(doc, "targets")
        if not raw_targets:
            self.add("targets", "give at least one target {provider, model}", doc, "targets")
        for n, raw in enumerate(raw_targets):
            target = self.model(raw, f"targets[{n}]", doc, TARGET_KEYS)
            # The same model may come again with other params (parameter profiles).
            profile = target and (target["provider"], target["model"], repr(target["params"]))
            if target and profile in seen:
                self.add(
                    f"targets[{n}]",
                    f"{target['provider']}/{target['model']} is listed twice with the same params",
                    raw,
                )
            elif target:
                seen.add(profile)
                targets.append(target)
        plan = RunPlan(
            name="",
            run_id=None,
            providers=self.providers,
            judge=judge or {},
            targets=targets,
            collections=[],
        )
        plan.prices = check_prices(self, doc)
        self.run_section(run, plan)
        if "maxBudgetUsd" in plan.settings and not self.allow_unpriced:
            check_unpriced(self, plan, run)
        return plan

    def list_of(self, doc, key):
        value = doc.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.add(key, "must be a list", doc, key)
            return []
        return value

    def text(self, mapping, key, path, required=False):
        value = mapping.get(key)
        if value is None:
            if required:
                self.add(path, "is required", mapping)
            return None
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str) or (required and not value.strip()):
            self.add(
                path, "must be text" if not isinstance(value, str) else "is required", mapping, key
            )
            return None
        return value.strip()

    def expand(self, value, path, mapping, key):
        """${ENV} -> its value; a missing variable is an error (its value is never shown)."""
        names = _ENV.findall(value)
        for name in names:
            if not self.environ.get(name):
                self.add(path, f"environment variable {name} is not set", mapping, key)
                return None
        return _ENV.sub(lambda m: self.environ[m.group(1)], value)

    def provider(self, raw, path, inline_name=None):
        """Validate a provider definition; returns its name (registered in self.providers)."""
        if not isinstance(raw, LineDict):
            self.add(path, "must be a mapping {name, type, base_url, ...}", None)
            return None
        raw = self.keys(raw, PROVIDER_KEYS, f"{path}.")
        name = self.text(raw, "name", f"{path}.name") or inline_name
        if name is None:
            base = self.text(raw, "base_url", f"{path}.base_url") or ""
            kind = (self.text(raw, "type", f"{path}.type") or "openai").lower()
            name = f"{kind}-{urlsplit(base).netloc or 'local'}"
        self.attempted.add(name)
        existing = Provider.get_or_none(Provider.name == name)
        data = {}
        for key in PROVIDER_KEYS - {"headers", "name"}:
            if key in raw:
                value = raw[key]
                if key == "base_url" and isinstance(value, str):
                    value = self.expand(value, f"{path}.{key}", raw, key)
                    if value is None:
                        return None  # the missing variable is the problem; nothing to echo
                data[key] = value
        secret_keys = []
        if "headers" in raw:
            data["headers"], secret_keys = self.headers(raw, path)
        if existing is None and not {"type", "base_url"} <= set(data):
            self.add(
                path, f"no provider named {name!r} exists: give type and base_url to create it", raw
            )
            return None
        if name in self.providers and self.providers[name].data:
            self.add(f"{path}.name", f"provider {name!r} is defined twice", raw, "name")
            return None
        try:
            clean_provider({**data, "name": name}, current=existing)
        except ValidationError as exc:
            for entry in exc.errors:
                key = _STORE_NAMES.get(entry.get("field"), entry.get("field")) or ""
                base = key.split("[")[0].split(".")[0]
                self.add(f"{path}.{key}", entry["message"], raw, base if base in raw else None)
            return None
        self.providers[name] = ProviderPlan(
            name, existing.id if existing else None, data or None, secret_keys
        )
        return name

    def headers(self, raw, path):
        value = raw["headers"]
        rows, secret_keys = [], []
        if not isinstance(value, dict):
            self.add(f"{path}.headers", "must map a header name to its value", raw, "headers")
            return [], []
        for key, spec in value.items():
            where = f"{path}.headers.{key}"
            secret = None
            if isinstance(spec, dict):
                secret = spec.get("secret")
                spec = spec.get("value")
            if not isinstance(spec, str):
                self.add(where, "must be text (or {value, secret})", value, key)
                continue
            has_env = bool(_ENV.search(spec))
            expanded = self.expand(spec, where, value, key)
            if expanded is None:
                continue
            if secret is None:
                secret = has_env or bool(_SECRET_HINT.search(str(key)))
            rows.append({"key": str(key), "value": expanded, "isSecret": bool(secret)})
            if secret:
                secret_keys.append(str(key))
        return rows, secret_keys

    def model(self, raw, path, doc, keys=MODEL_KEYS):
        if not isinstance(raw, LineDict):
            self.add(path, "must be a mapping {provider, model, params?}", doc)
            return None
        raw = self.keys(raw, keys, f"{path}.")
        provider = raw.get("provider")
        name = None
        if isinstance(provider, LineDict):
            name = self.provider(provider, f"{path}.provider")
        elif isinstance(provider, str) and provider.strip():
            name = provider.strip()
            if name in self.attempted and name not in self.providers:
                name = None  # its definition's own problems are reported already
            elif name not in self.providers:
                existing = Provider.get_or_none(Provider.name == name)
                if existing is None:
                    known = ", ".join(sorted(p.name for p in Provider.select())) or "none yet"
                    self.add(
                        f"{path}.provider",
                        f"no provider named {name!r} (known: {known}); define it under providers:",
                        raw,
                        "provider",
                    )
                    name = None
                else:
                    self.providers[name] = ProviderPlan(name, existing.id)
        else:
            self.add(f"{path}.provider", "is required: a provider name or a mapping", raw)
        model = self.text(raw, "model", f"{path}.model", required=True)
        errors = []
        given = raw.get("params")
        params = clean_params(given, (f"{path}.params",), errors)
        for entry in errors:
            # The line of the bad param itself when the file gives it, else of `params:`.
            key = entry["path"][-1] if len(entry.get("path") or ()) > 1 else None
            if isinstance(given, LineDict) and key in given.key_lines:
                self.add(entry["field"], entry["message"], given, key)
            else:
                self.add(entry["field"], entry["message"], raw, "params")
        if name is None or model is None or errors:
            return None
        out = {"provider": name, "model": model, "params": params}
        if "label" in keys:
            out["label"] = self.text(raw, "label", f"{path}.label")
        return out

    def run_section(self, run, plan):
        plan.name = self.text(run, "name", "run.name", required=True) or "run"
        plan.run_id = self.text(run, "id", "run.id")
        plan.out_dir = self.text(run, "out_dir", "run.out_dir")
        if plan.out_dir:
            plan.out_dir = str(self.base_dir / plan.out_dir)
            unwritable = folder_problem(plan.out_dir)
            if unwritable:
                self.add(
                    "run.out_dir",
                    f"reports cannot be written to {plan.out_dir}: {unwritable}",
                    run,
                    "out_dir",
                )
        on_dup = self.text(run, "on_duplicate", "run.on_duplicate") or "update"
        if on_dup not in importer.ON_DUPLICATE:
            self.add("run.on_duplicate", "must be reject, skip or update", run, "on_duplicate")
        plan.on_duplicate = on_dup
        self.collections(run, plan)
        self.dataset(run, plan)
        if "collections" not in run and "dataset" not in run:
            self.add("run", "give run.dataset (a file or folder) and/or run.collections", run)
        resume = run.get("resume", False)
        if not isinstance(resume, bool):
            self.add("run.resume", "must be true or false", run, "resume")
        plan.resume = resume is True
        settings = {}
        for key, name in RUN_SETTINGS:
            value = run.get(key)
            if value is None:
                continue
            try:
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise ValueError(SETTINGS[name][3])
                settings[name] = setting(name, value)
            except ValueError as exc:
                self.add(f"run.{key}", str(exc), run, key)
        slo = self.slo(run)
        if slo:
            settings["slo"] = slo
        categories = run.get("categories")
        if categories is not None:
            if isinstance(categories, str):
                categories = [categories]
            if not isinstance(categories, list) or not all(isinstance(c, str) for c in categories):
                self.add("run.categories", "must be a list of category names", run, "categories")
            else:
                settings["categories"] = [c.strip() for c in categories if c.strip()]
        if run.get("load") is not None:
            # The spec's own rules (runs/spec.py clean_load), named as the file names them.
            found, raw = [], run["load"]
            if isinstance(raw, dict):
                raw = {LOAD_ALIASES.get(k, k): v for k, v in raw.items()}
            load = clean_load(raw, found, ("run", "load"))
            for problem in found:
                self.add(problem["field"], problem["message"], run, "load")
            if load and not found:
                settings["load"] = load
        plan.settings = settings
        judge_check = run.get("judge_check", False)
        if not isinstance(judge_check, bool):
            self.add("run.judge_check", "must be true or false", run, "judge_check")
        plan.judge_check = judge_check is True
        plan.filters = self.filters
        if not self.problems:
            plan.task_ids = select_tasks(plan)
            if not plan.task_ids:
                self.no_tasks(run, plan)
        if (
            plan.run_id
            and not plan.resume
            and Run.select().where(Run.run_id == plan.run_id).exists()
        ):
            # What `run` would refuse when it creates the run, said here (validate = run).
            self.add(
                "run.id",
                f"a run named {plan.run_id!r} exists; pick another id or leave run.id out",
                run,
                "id",
            )

    def no_tasks(self, run, plan):
        """The run would hold no task: say which choice left none, as the file (or the option)
        names it, with the categories there are."""
        categories = plan.settings.get("categories")
        if categories:
            unfiltered = select_tasks(replace(plan, settings={**plan.settings, "categories": None}))
            there = sorted(_categories(plan, unfiltered))
            self.add(
                "run.categories",
                f"no chosen task is in {', '.join(categories)}; their categories: "
                f"{', '.join(there) or 'none'}",
                run,
                "categories",
            )
        elif plan.filters:
            self.problems.add(
                None,
                "no chosen task is left by the filters (--filter-pattern, --filter-failing)",
                None,
                "--filter-pattern" if plan.filters.pattern is not None else "--filter-failing",
            )
        else:
            self.add("run", "the chosen collections and dataset hold no task", run)

    def slo(self, run):
        """run.slo: the service level the answers should meet, checked by the run spec's
        rules (runs/spec.py clean_slo), each problem at its key's line."""
        raw = run.get("slo")
        if raw is None:
            return {}
        if not isinstance(raw, LineDict):
            self.add(
                "run.slo", "must be a mapping like {ttft_p90_ms: 500, min_score: 70}", run, "slo"
            )
            return {}
        mapping = self.keys(raw, set(SLO_NAMES), "run.slo.", SLO_ALIASES)
        errors = []
        slo = clean_slo({SLO_NAMES[key]: value for key, value in mapping.items()}, ("slo",), errors)
        for error in errors:
            key = SLO_ALIASES[error["path"][-1]]
            self.add(f"run.slo.{key}", error["message"], mapping, key)
        return slo

    def collections(self, run, plan):
        names = run.get("collections")
        if names is None:
            return
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            self.add("run.collections", "must be a list of collection names", run, "collections")
            return
        known = {c.name for c in Collection.select(Collection.name)}
        for name in names:
            if name not in known:
                listed = (
                    ", ".join(sorted(known))
                    # A database `llmbench serve` never started on has no built-in tasks yet.
                    or "none yet; `llmbench reset-defaults` adds the built-in tasks and "
                    "collections (quick, ...)"
                )
                self.add(
                    "run.collections",
                    f"no collection named {name!r} (known: {listed})",
                    run,
                    "collections",
                )
            else:
                plan.collections.append(name)

    def dataset(self, run, plan):
        value = self.text(run, "dataset", "run.dataset")
        if value is None:
            return
        path = self.base_dir / value
        plan.dataset_path = str(path)
        plan.dataset_format = self.text(run, "dataset_format", "run.dataset_format")
        plan.dataset_collection = (
            self.text(run, "dataset_collection", "run.dataset_collection")
            or Path(value).stem.split(".")[0]
            or "dataset"
        )
        try:
            plan.dataset = importer.survey(
                str(path),
                plan.dataset_format,
                on_duplicate=plan.on_duplicate,
                skip_unsupported=self.skip_unsupported,
                pattern=self.filters.regex(),
                collection=plan.dataset_collection if self.store_dataset else None,
            )
            plan.skip_unsupported = self.skip_unsupported
        except ValidationError as exc:
            # The dataset's own file and line numbers are kept; the field says which file it was.
            for entry in exc.errors:
                self.problems.entries.append({**entry, "file": entry.get("file") or str(path)})


def _categories(plan, task_ids):
    """The categories of these tasks (a dataset's as its file gives them)."""
    ids = set(task_ids)
    from_file = dict(plan.dataset.tasks) if plan.dataset is not None else {}
    found = {c for t, c in from_file.items() if t in ids}
    stored = [t for t in ids if t not in from_file]
    for start in range(0, len(stored), 500):
        query = Task.select(Task.category).where(Task.task_id.in_(stored[start : start + 500]))
        found.update(c for (c,) in query.tuples())
    return found
