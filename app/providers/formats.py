"""The wire formats llmbench speaks, as declarations only: each format's paths, defaults and
capabilities (interface.WireFormat), with no HTTP. The catalog, the forms and run configs read
these without loading an HTTP client (`llmbench validate` never calls a model server); each
adapter (openai.py, ollama.py) subclasses its format, and registry.py maps a type to it."""

from .interface import WireFormat


class OpenAIFormat(WireFormat):
    """OpenAI-compatible servers: OpenAI, OpenRouter, llama.cpp, vLLM, LM Studio, Ollama /v1."""

    type = "OPENAI"
    label = "OpenAI-compatible"
    server_name = None  # llama.cpp, vLLM, LM Studio, a cloud API: "the server"
    default_base_url = "http://localhost:8080"
    models_path = "/v1/models"
    chat_path = "/v1/chat/completions"
    api_prefix = "/v1"
    streams = True  # SSE
    # Token counts when the server sends usage, llama.cpp's timings when it sends them; else
    # the speed is estimated from the stream.
    server_timings = False
    keeps_models_loaded = False  # no keep_alive or unload in the OpenAI API
    reports_loaded_models = False
    takes_routing = True  # OpenRouter speaks this format
    implicit_tag = None


class OllamaFormat(WireFormat):
    """Ollama's native API."""

    type = "OLLAMA"
    label = "Ollama native API"
    server_name = "Ollama"
    default_base_url = "http://localhost:11434"
    models_path = "/api/tags"
    chat_path = "/api/chat"
    api_prefix = "/api"
    streams = True  # NDJSON
    server_timings = True  # the done line's eval counters
    keeps_models_loaded = True
    reports_loaded_models = True  # /api/ps
    takes_routing = False
    implicit_tag = "latest"


OPENAI = OpenAIFormat.type
OLLAMA = OllamaFormat.type

FORMATS = {
    OPENAI: OpenAIFormat,
    OLLAMA: OllamaFormat,
}
TYPES = tuple(FORMATS)


def wire_format(provider_type):
    """The format class for a provider type; WireFormat itself (which can do nothing) for a
    type llmbench does not speak."""
    return FORMATS.get(provider_type, WireFormat)
