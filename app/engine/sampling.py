"""System metrics while the engine works on a run: one sampler thread per worked run.

The sampler (sysmetrics/sampler.py) is started by the tick that works on a run and kept in the
holder's memory (memory.py), so it lives across ticks and stops when the memory is closed: the
run finished, paused or stopped, or another run took its place.
"""

import logging

from ..catalog.providers import provider_config
from ..db.models import Provider
from ..db.models import RunTarget
from ..providers import get_adapter
from ..sysmetrics.sampler import Sampler
from ..sysmetrics.store import SampleStore

log = logging.getLogger(__name__)

# /api/ps must answer fast or be skipped: the sampler ticks every 2 s.
LOADED_MODELS_TIMEOUT = (1.0, 2.0)


def ensure_sampler(memory, run, config):
    """Start the run's sampler unless it runs (or sampling is off: SYSMETRICS_SECONDS <= 0)."""
    seconds = float(config.get("SYSMETRICS_SECONDS") or 0)
    if memory is None or seconds <= 0:
        return None
    if memory.sampler is None or not memory.sampler.running:
        sampler = Sampler(
            SampleStore(run.id),
            loaded_models=loaded_models_of(run),
            interval=seconds,
            name=f"sysmetrics-{run.run_id}",
        )
        sampler.start()
        memory.sampler = sampler
    return memory.sampler


def loaded_models_of(run):
    """A callable listing the models loaded on the run's Ollama servers (/api/ps), or None
    when no target or judge is on an Ollama provider (the field is then unknown: null)."""
    pks = {
        pk for (pk,) in RunTarget.select(RunTarget.provider).where(RunTarget.run == run).tuples()
    }
    pks.add(run.judge_provider_id)
    return ollama_loaded_models(Provider.select().where(Provider.id.in_([pk for pk in pks if pk])))


def ollama_loaded_models(providers):
    """A callable listing the models loaded on these providers' Ollama servers, or None when
    none of them is an Ollama provider."""
    adapters = []
    for provider in providers:
        if provider.type != "OLLAMA":
            continue
        try:
            # Its own adapters: the sampler thread must not share the workers' sessions.
            adapters.append(get_adapter(provider_config(provider)))
        except Exception as exc:  # a secret that cannot be decrypted: the run says so itself
            log.debug("no loaded-models adapter for %s: %r", provider.name, exc)

    def loaded_models():
        models = []
        for adapter in adapters:
            models += adapter.loaded_models(timeout=LOADED_MODELS_TIMEOUT)
        return models

    return loaded_models if adapters else None
