"""Provider presets: the servers people run, with the type, base URL and endpoints each needs,
and the one rule for a base URL that already ends in /v1."""

from urllib.parse import urlsplit
from urllib.parse import urlunsplit

from ..providers import formats
from .provider_fields import DEFAULT_ENDPOINTS
from .provider_fields import DEFAULT_TIMEOUT_SECONDS

# The base URL a new provider of each type starts with.
DEFAULT_BASE_URLS = {ptype: wire.default_base_url for ptype, wire in formats.FORMATS.items()}

PRESETS = [
    {
        "key": "ollama",
        "label": "Ollama",
        "name": "ollama",
        "type": formats.OLLAMA,
        "baseUrl": "http://localhost:11434",
        "note": "Ollama's native API on port 11434.",
    },
    {
        "key": "llamacpp",
        "label": "llama.cpp",
        "name": "llama-cpp",
        "type": formats.OPENAI,
        "baseUrl": "http://localhost:8080",
        "note": "llama-server (llama.cpp) on port 8080.",
    },
    {
        "key": "vllm",
        "label": "vLLM",
        "name": "vllm",
        "type": formats.OPENAI,
        "baseUrl": "http://localhost:8000",
        "note": "vLLM's OpenAI-compatible server on port 8000.",
    },
    {
        "key": "lmstudio",
        "label": "LM Studio",
        "name": "lm-studio",
        "type": formats.OPENAI,
        "baseUrl": "http://localhost:1234",
        "note": "LM Studio's local server on port 1234.",
    },
    {
        "key": "openai",
        "label": "OpenAI",
        "name": "openai",
        "type": formats.OPENAI,
        "baseUrl": "https://api.openai.com",
        "note": "Add a secret header Authorization: Bearer sk-… below.",
        "header": "Authorization",
        "concurrency": 4,
    },
    {
        "key": "openrouter",
        "label": "OpenRouter",
        "name": "openrouter",
        "type": formats.OPENAI,
        "baseUrl": "https://openrouter.ai/api",
        "note": "Add a secret header Authorization: Bearer sk-or-… below.",
        "header": "Authorization",
        "concurrency": 4,
    },
]
for _preset in PRESETS:
    _preset["modelsEndpoint"], _preset["inferenceEndpoint"] = DEFAULT_ENDPOINTS[_preset["type"]]


# Where every wire format's paths start (/v1/, Ollama's /api/).
API_PREFIXES = tuple(f"{wire.api_prefix}/" for wire in formats.FORMATS.values())
NEW_FORM_PRESET = "ollama"  # what a new provider's form starts as


def preset(key):
    """The preset with this key, or None."""
    return next((p for p in PRESETS if p["key"] == key), None)


# The form's type choices, the type a new provider's form starts with first.
TYPE_CHOICES = sorted(
    ((ptype, f"{ptype} — {wire.label}") for ptype, wire in formats.FORMATS.items()),
    key=lambda choice: choice[0] != preset(NEW_FORM_PRESET)["type"],
)


def new_provider_form(key=None):
    """The values a new provider's form starts with: a preset's, or Ollama's."""
    chosen = preset(key) or preset(NEW_FORM_PRESET)
    form = {
        "name": chosen["name"] if key else "",
        "type": chosen["type"],
        "baseUrl": chosen["baseUrl"],
        "modelsEndpoint": chosen["modelsEndpoint"],
        "inferenceEndpoint": chosen["inferenceEndpoint"],
        "timeoutSeconds": f"{DEFAULT_TIMEOUT_SECONDS:g}",
        "maxConcurrency": str(chosen.get("concurrency", 1)),
        "headers": [],
    }
    if key and chosen.get("header"):
        form["headers"] = [{"key": chosen["header"], "value": "", "isSecret": True}]
    return form


def apply_preset(form, key):
    """An edit form with a preset's type, base URL and endpoints (name and headers kept)."""
    chosen = preset(key)
    if chosen is not None:
        for field in ("type", "baseUrl", "modelsEndpoint", "inferenceEndpoint"):
            form[field] = chosen[field]
    return form


def fix_v1_base_url(base_url, endpoints):
    """(base URL, note): a base URL ending in /v1 whose endpoints start with a wire format's
    prefix (/v1, Ollama's /api) would call …/v1/v1/models; the /v1 is taken off the base URL
    and the note says so. Anything else comes back as it was, with note None."""
    try:
        parts = urlsplit(base_url or "")
    except ValueError:
        return base_url, None
    path = parts.path.rstrip("/")
    if not path.lower().endswith("/v1"):
        return base_url, None
    if not all(e and e.startswith(API_PREFIXES) for e in endpoints):
        return base_url, None
    fixed = urlunsplit((parts.scheme, parts.netloc, path[: -len("/v1")], "", "")).rstrip("/")
    prefix = "/" + endpoints[0].split("/")[1]
    note = (
        f"The base URL ended in /v1 and the endpoints already start with {prefix}, "
        f"so it was saved as {fixed} (requests go to {fixed}{endpoints[0]}, "
        f"not …/v1{endpoints[0]})."
    )
    return fixed, note
