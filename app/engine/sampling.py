"""System metrics while the engine works on a run: one sampler thread per worked run.

The sampler (sysmetrics/sampler.py) is started by the tick that works on a run and kept in the
holder's memory (memory.py), so it lives across ticks and stops when the memory is closed: the
run finished, paused or stopped, or another run took its place.
"""

from ..catalog.provider_loaded import loaded_models_reader
from ..db.models import Provider
from ..db.models import RunTarget
from ..sysmetrics.sampler import Sampler
from ..sysmetrics.store import SampleStore


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
    """A callable listing the models loaded on the run's servers (Ollama's /api/ps), or None
    when no target's or judge's server can say (the field is then unknown: null)."""
    pks = {
        pk for (pk,) in RunTarget.select(RunTarget.provider).where(RunTarget.run == run).tuples()
    }
    pks.add(run.judge_provider_id)
    return loaded_models_reader(Provider.select().where(Provider.id.in_([pk for pk in pks if pk])))
