"""Provider adapters: one module per wire format behind one small interface (interface.py)."""

from .ollama import OllamaAdapter
from .openai import OpenAIAdapter

ADAPTERS = {"OPENAI": OpenAIAdapter, "OLLAMA": OllamaAdapter}


def get_adapter(config):
    """The adapter for a ProviderConfig, by its type."""
    try:
        cls = ADAPTERS[config.type]
    except KeyError:
        raise ValueError(f"unknown provider type {config.type!r}; use OPENAI or OLLAMA") from None
    return cls(config)
