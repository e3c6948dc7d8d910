"""The adapters of the wire formats llmbench speaks: one line per format maps a provider's type
to its adapter class (which subclasses the format's declarations in formats.py).

Everything that only asks what a format can do reads formats.py, which loads no HTTP client.
"""

from .ollama import OllamaAdapter
from .openai import OpenAIAdapter

ADAPTERS = {
    OpenAIAdapter.type: OpenAIAdapter,
    OllamaAdapter.type: OllamaAdapter,
}


def get_adapter(config):
    """The adapter for a ProviderConfig, by its type."""
    try:
        cls = ADAPTERS[config.type]
    except KeyError:
        raise ValueError(
            f"unknown provider type {config.type!r}; use {' or '.join(ADAPTERS)}"
        ) from None
    return cls(config)
