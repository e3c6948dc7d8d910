"""System metrics figures: the CPU cost of sampling every 2 s and the bytes of a 10 h run.

1. CPU: time.process_time() (plus children's CPU from os.times(), i.e. nvidia-smi) over N calls
   to take_sample, as % of one core at one sample per 2 s. Goal <= 1 %. Measured with this
   machine's GPUs (if any) and with a fake nvidia-smi (a shell script printing two GPUs), which
   shows the cost of spawning the process; the real binary adds its own NVML start-up on top.
2. Bytes: 18 000 synthetic samples (10 h at 2 s; a GPU box, two models loaded, the model set
   changing every hour) encoded as compact JSON rows, raw and downsampled. Goal < 2 MB.
3. Stored as the engine stores them (sysmetrics/store.py, one SQLite chunk row per 150
   samples, each sample written when taken): CPU per store call, the JSON bytes kept and the
   database file's growth for the 10 h run.

    .venv/bin/python bench/bench_sysmetrics.py [--calls 200]
"""

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.db.connection import database  # noqa: E402
from app.db.migrations import open_db  # noqa: E402
from app.db.models import Run  # noqa: E402
from app.sysmetrics.sample import take_sample  # noqa: E402
from app.sysmetrics.series import downsample  # noqa: E402
from app.sysmetrics.series import encode_series  # noqa: E402
from app.sysmetrics.store import SampleStore  # noqa: E402
from app.sysmetrics.store import stored_bytes  # noqa: E402

INTERVAL = 2.0
SAMPLES_10H = 18_000
BUDGET_BYTES = 2_000_000


def cpu_seconds():
    """This process's CPU time plus that of its waited-for children (nvidia-smi)."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


def cost_per_sample(calls, loaded_models=None):
    """Mean CPU seconds of one take_sample (the first, which primes the CPU window, excluded)."""
    take_sample(loaded_models)
    start = cpu_seconds()
    for _ in range(calls):
        take_sample(loaded_models)
    return (cpu_seconds() - start) / calls


def print_cost(label, seconds):
    """One CPU line: ms per sample and % of one core at one sample per INTERVAL."""
    percent = seconds / INTERVAL * 100
    print(f"{label}: {seconds * 1000:.3f} ms CPU/sample, {percent:.3f} % of one core at 1/2 s")


def synthetic_series(count):
    """`count` plausible samples 2 s apart on a 32 GB / 24 GB-VRAM box running two models."""
    rng = random.Random(1)
    models = [
        [{"name": "llama3.1:8b-instruct-q4_K_M", "sizeGb": 5.61, "vramGb": 5.61}],
        [{"name": "qwen2.5:14b-instruct-q4_K_M", "sizeGb": 9.83, "vramGb": 9.83}],
    ]
    judge = {"name": "gemma2:27b", "sizeGb": 17.2, "vramGb": 12.4}
    samples = []
    for i in range(count):
        hour = i * INTERVAL // 3600
        samples.append(
            {
                "t": 1_732_380_000 + i * INTERVAL,
                "cpuPercent": rng.uniform(5, 95),
                "ramUsedGb": rng.uniform(10, 28),
                "rssMb": rng.uniform(150, 400),
                "gpuUtilPercent": rng.uniform(0, 100),
                "vramUsedGb": rng.uniform(6, 23),
                "ramTotalGb": 31.26,
                "vramTotalGb": 24.0,
                "gpuCount": 1,
                "loadedModels": [*models[int(hour) % 2], judge],
            }
        )
    return samples


def json_bytes(rows):
    """Size of the rows as one compact JSON array."""
    return len(json.dumps(rows, separators=(",", ":")).encode())


def stored(samples):
    """(CPU seconds per store call, JSON bytes kept, database growth in bytes) for `samples`
    written one by one through SampleStore into a fresh SQLite file."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        open_db(str(path))
        with database.connection_context():
            run = Run.create(run_id="bench", judge_provider_name="j", judge_model="j")
            database.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        before = path.stat().st_size
        store = SampleStore(run.id)
        start = cpu_seconds()
        for sample in samples:
            store(sample)
        per_call = (cpu_seconds() - start) / len(samples)
        with database.connection_context():
            kept = stored_bytes(run)
            database.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        grown = path.stat().st_size - before
        database.close()
    return per_call, kept, grown


def main():
    """Print the numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()

    print_cost("take_sample, this machine", cost_per_sample(args.calls))
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "nvidia-smi"
        script.write_text("#!/bin/sh\nprintf '45, 1024, 8192\\n15, 3072, 16384\\n'\n")
        script.chmod(0o755)
        old_path = os.environ.get("PATH", "")
        os.environ["PATH"] = f"{tmp}{os.pathsep}{old_path}"
        try:
            print_cost("take_sample, fake nvidia-smi", cost_per_sample(args.calls))
        finally:
            os.environ["PATH"] = old_path

    samples = synthetic_series(SAMPLES_10H)
    raw = json_bytes(encode_series(samples))
    no_gpu = [
        {**s, "gpuUtilPercent": None, "vramUsedGb": None, "vramTotalGb": None, "gpuCount": None}
        for s in samples
    ]
    kept = downsample(samples)
    print(f"10 h, 18000 samples, GPU + models: {raw} bytes ({raw / SAMPLES_10H:.1f} B/sample)")
    print(f"10 h, 18000 samples, no GPU: {json_bytes(encode_series(no_gpu))} bytes")
    print(f"10 h downsampled: {len(kept)} samples, {json_bytes(encode_series(kept))} bytes")
    print(f"budget: {BUDGET_BYTES} bytes")
    per_call, kept, grown = stored(samples)
    print_cost("store (SampleStore, one UPDATE per sample)", per_call)
    print(f"10 h stored: {kept} bytes of JSON in chunk rows; database file grew {grown} bytes")


if __name__ == "__main__":
    main()
