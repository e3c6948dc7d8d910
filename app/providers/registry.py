"""The wire formats llmbench speaks: one line per format maps a provider's type to its adapter.

Everything else asks the adapter class (its WireFormat capabilities) rather than the type.
"""

from .interface import WireFormat
from .ollama import OllamaAdapter
from .openai import OpenAIAdapter

OPENAI = OpenAIAdapter.type
OLLAMA = OllamaAdapter.type

ADAPTERS = {
    OPENAI: OpenAIAdapter,
    OLLAMA: OllamaAdapter,
}
TYPES = tuple(ADAPTERS)


def wire_format(provider_type):
    """The adapter class for a provider type; WireFormat itself (which can do nothing) for a
    type llmbench does not speak."""
    return ADAPTERS.get(provider_type, WireFormat)


def get_adapter(config):
    """The adapter for a ProviderConfig, by its type."""
    try:
        cls = ADAPTERS[config.type]
    except KeyError:
        raise ValueError(
            f"unknown provider type {config.type!r}; use {' or '.join(TYPES)}"
        ) from None
    return cls(config)
