"""The models in memory on providers' servers now (Ollama's /api/ps), for system metrics."""

import logging

from ..providers import formats
from ..providers import registry
from .providers import provider_config

log = logging.getLogger(__name__)

# The server must answer fast or be skipped: the sampler ticks every 2 s.
LOADED_MODELS_TIMEOUT = (1.0, 2.0)


def loaded_models_reader(providers):
    """A callable listing the models loaded on these providers' servers, or None when none of
    them can say (the field is then unknown: null)."""
    adapters = []
    for provider in providers:
        if not formats.wire_format(provider.type).reports_loaded_models:
            continue
        try:
            # Its own adapters: the sampler thread must not share the workers' sessions.
            adapters.append(registry.get_adapter(provider_config(provider)))
        except Exception as exc:  # a secret that cannot be decrypted: the run says so itself
            log.debug("no loaded-models adapter for %s: %r", provider.name, exc)

    def loaded_models():
        models = []
        for adapter in adapters:
            models += adapter.loaded_models(timeout=LOADED_MODELS_TIMEOUT)
        return models

    return loaded_models if adapters else None
