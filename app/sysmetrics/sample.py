"""One system-metrics reading: host CPU and RAM, this process's RSS, NVIDIA GPUs, loaded models.

"GB" in every name is GiB (2**30 bytes), the unit nvidia-smi (MiB) and system monitors show.
Nothing here raises for a missing GPU, a missing or hung nvidia-smi, or a failing model server:
the affected fields are None.
"""

import functools
import logging
import math
import os
import shutil
import subprocess
import threading
import time

import psutil

log = logging.getLogger(__name__)

GIB = 1024**3
MIB = 1024**2
NVIDIA_SMI_QUERY = (
    "--query-gpu=utilization.gpu,memory.used,memory.total",
    "--format=csv,noheader,nounits",
)
NVIDIA_SMI_TIMEOUT = 2.0
# After nvidia-smi fails (driver unloaded, GPU hung), skip it for a minute rather than pay a
# process spawn, and maybe the whole timeout, on every 2 s tick.
NVIDIA_SMI_RETRY_SECONDS = 60.0
# The first cpu_percent() in a thread has no earlier reading to compare with; measure a short
# window once instead of returning psutil's meaningless 0.0.
CPU_FIRST_WINDOW = 0.1
NO_GPU = {"gpuCount": None, "gpuUtilPercent": None, "vramUsedGb": None, "vramTotalGb": None}

_cpu_state = threading.local()
_gpu_failed_until = {}
_processes = {}


def take_sample(loaded_models=None):
    """One reading as a dict: cpuPercent, ramUsedGb, ramTotalGb, rssMb, gpuCount,
    gpuUtilPercent, vramUsedGb, vramTotalGb (None without a GPU) and loadedModels
    ([{name, sizeGb, vramGb}], None without a `loaded_models` callable or when it fails)."""
    mem = psutil.virtual_memory()
    sample = {
        "cpuPercent": cpu_percent(),
        # total - available, not psutil's `used`: `used` leaves out buffers and some caches
        # differently per OS, while `available` is what a new model load can actually get.
        "ramUsedGb": round((mem.total - mem.available) / GIB, 3),
        "ramTotalGb": round(mem.total / GIB, 3),
        "rssMb": round(_this_process().memory_info().rss / MIB, 1),
    }
    sample.update(gpu_usage())
    sample["loadedModels"] = loaded_model_list(loaded_models)
    return sample


def current_metrics(active_benchmarks, loaded_models=None, sample=None):
    """GET /api/system/metrics in the dashboard's shape; reuses `sample` (e.g. the sampler's
    latest) when given, else takes one now."""
    if sample is None:
        sample = take_sample(loaded_models)
    # ollamaModelsLoaded is a string[], never null, in the API: unknown reads as none loaded.
    models = sample.get("loadedModels") or []
    return {
        "cpuUsagePercent": round(sample["cpuPercent"], 1),
        "ramUsedGb": round(sample["ramUsedGb"], 2),
        "ramTotalGb": round(sample["ramTotalGb"], 2),
        "vramUsedGb": _round_or_none(sample.get("vramUsedGb"), 2),
        "vramTotalGb": _round_or_none(sample.get("vramTotalGb"), 2),
        "ollamaModelsLoaded": [m["name"] for m in models],
        "activeBenchmarks": int(active_benchmarks),
    }


def cpu_percent():
    """Host CPU % (100 = every core busy) since this thread's previous call."""
    # interval=None never blocks: psutil (>= 5.9.6 keeps one reading per thread) compares the
    # CPU times with this thread's previous call. A sampler ticking every 2 s thus gets the
    # average over each whole 2 s window, not a short snapshot, and stop() is never stuck
    # behind a blocking measurement.
    if not getattr(_cpu_state, "primed", False):
        _cpu_state.primed = True
        return psutil.cpu_percent(interval=CPU_FIRST_WINDOW)
    return psutil.cpu_percent(interval=None)


def gpu_usage(timeout=NVIDIA_SMI_TIMEOUT):
    """NVIDIA GPUs via nvidia-smi, aggregated as parse_nvidia_smi does; NO_GPU without one."""
    path = find_nvidia_smi(os.environ.get("PATH", os.defpath))
    if path is None or time.monotonic() < _gpu_failed_until.get(path, 0.0):
        return dict(NO_GPU)
    try:
        proc = subprocess.run(
            [path, *NVIDIA_SMI_QUERY],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _gpu_failed(path, str(exc))
    if proc.returncode != 0:
        return _gpu_failed(path, f"exit {proc.returncode}: {proc.stdout.strip()[:200]}")
    return parse_nvidia_smi(proc.stdout)


@functools.lru_cache(maxsize=8)
def find_nvidia_smi(path_env):
    """nvidia-smi's path on this PATH, or None; cached per PATH value."""
    # Cached so a machine without a GPU does not search PATH every tick; keyed by PATH so a
    # changed PATH (a driver installed, a test's fake binary) is looked up afresh.
    return shutil.which("nvidia-smi", path=path_env)


def parse_nvidia_smi(text):
    """{gpuCount, gpuUtilPercent, vramUsedGb, vramTotalGb} from nvidia-smi's CSV lines.

    Across GPUs memory is summed (what the host has), utilisation is the mean (100 = every GPU
    busy, like cpuPercent). A line that is not three fields with numeric memory is skipped; a
    utilisation of "[N/A]" (some datacenter/MIG setups) leaves that GPU out of the mean only.
    """
    utils = []
    used = total = 0.0
    count = 0
    for line in text.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 3:
            continue
        mem_used = _number(fields[1])
        mem_total = _number(fields[2])
        if mem_used is None or mem_total is None:
            continue
        count += 1
        used += mem_used
        total += mem_total
        util = _number(fields[0])
        if util is not None:
            utils.append(util)
    if count == 0:
        return dict(NO_GPU)
    return {
        "gpuCount": count,
        "gpuUtilPercent": round(sum(utils) / len(utils), 1) if utils else None,
        "vramUsedGb": round(used / 1024, 3),
        "vramTotalGb": round(total / 1024, 3),
    }


def loaded_model_list(loaded_models):
    """[{name, sizeGb, vramGb}] from `loaded_models()` (Ollama /api/ps dicts with name, size,
    size_vram); None when there is no callable or anything about the call fails."""
    if loaded_models is None:
        return None
    try:
        return [
            {
                "name": str(m.get("name") or m.get("model") or m.get("id")),
                "sizeGb": round((m.get("size") or 0) / GIB, 3),
                "vramGb": round((m.get("size_vram") or 0) / GIB, 3),
            }
            for m in loaded_models()
        ]
    except Exception:
        # Every 2 s while the server is down: debug, not warning, so the log is not flooded.
        log.debug("loaded models unavailable", exc_info=True)
        return None


def _gpu_failed(path, reason):
    """Note a failed nvidia-smi call, back off, and report no GPU values."""
    _gpu_failed_until[path] = time.monotonic() + NVIDIA_SMI_RETRY_SECONDS
    log.warning(
        "nvidia-smi failed (%s); GPU metrics off for %.0f s", reason, NVIDIA_SMI_RETRY_SECONDS
    )
    return dict(NO_GPU)


def _number(text):
    """float(text), or None for "[N/A]", "[Not Supported]", nan and other non-numbers."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _round_or_none(value, digits):
    """round(value, digits), keeping None."""
    return None if value is None else round(value, digits)


def _this_process():
    """psutil's handle on this process, created once per pid (a fork gets its own)."""
    pid = os.getpid()
    process = _processes.get(pid)
    if process is None:
        process = _processes[pid] = psutil.Process(pid)
    return process
