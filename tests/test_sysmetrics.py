"""app.sysmetrics: a sample's shape, nvidia-smi parsing via a fake binary, the sampler, the series.

No test sleeps or asserts on wall-clock time: the sampler is driven through injected wait and
clock functions, and GPUs are a shell script put first on PATH.
"""

import itertools
import json
import logging
import os

import pytest

from app.sysmetrics import sample as sample_mod
from app.sysmetrics.sample import current_metrics
from app.sysmetrics.sample import find_nvidia_smi
from app.sysmetrics.sample import gpu_usage
from app.sysmetrics.sample import loaded_model_list
from app.sysmetrics.sample import take_sample
from app.sysmetrics.sampler import Sampler
from app.sysmetrics.series import decode_series
from app.sysmetrics.series import downsample
from app.sysmetrics.series import encode_series
from app.sysmetrics.series import peaks

GIB = 1024**3
SAMPLE_KEYS = {
    "cpuPercent",
    "ramUsedGb",
    "ramTotalGb",
    "rssMb",
    "gpuCount",
    "gpuUtilPercent",
    "vramUsedGb",
    "vramTotalGb",
    "loadedModels",
}


@pytest.fixture
def no_gpu(tmp_path, monkeypatch):
    """A PATH with no nvidia-smi on it, whatever the machine has."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


@pytest.fixture
def fake_nvidia_smi(tmp_path, monkeypatch):
    """Install a fake nvidia-smi (a /bin/sh body) first on PATH; returns its calls log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"

    def install(body):
        script = bin_dir / "nvidia-smi"
        script.write_text(f'#!/bin/sh\necho "$@" >> "{calls}"\n{body}\n')
        script.chmod(0o755)
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
        return calls

    return install


def _ollama_ps():
    return [
        {"name": "llama3.1:8b", "size": 6 * GIB, "size_vram": 6 * GIB},
        {"name": "qwen2.5:14b", "size": 10 * GIB, "size_vram": 4 * GIB},
    ]


def _failing():
    raise ConnectionError("ollama is not running")


def test_sample_on_this_machine_has_every_field_and_no_gpu_values(no_gpu):
    sample = take_sample()
    assert set(sample) == SAMPLE_KEYS
    assert 0.0 <= sample["cpuPercent"] <= 100.0
    assert 0 < sample["ramUsedGb"] <= sample["ramTotalGb"]
    assert sample["rssMb"] > 0
    for name in ("gpuCount", "gpuUtilPercent", "vramUsedGb", "vramTotalGb", "loadedModels"):
        assert sample[name] is None


def test_current_metrics_has_seed_002_shape(no_gpu):
    metrics = current_metrics(1, loaded_models=_ollama_ps)
    assert list(metrics) == [
        "cpuUsagePercent",
        "ramUsedGb",
        "ramTotalGb",
        "vramUsedGb",
        "vramTotalGb",
        "ollamaModelsLoaded",
        "activeBenchmarks",
    ]
    assert isinstance(metrics["cpuUsagePercent"], float)
    assert metrics["vramUsedGb"] is None and metrics["vramTotalGb"] is None
    assert metrics["ollamaModelsLoaded"] == ["llama3.1:8b", "qwen2.5:14b"]
    assert metrics["activeBenchmarks"] == 1


def test_current_metrics_reuses_a_given_sample_and_reads_unknown_models_as_none():
    sample = {
        "cpuPercent": 12.34,
        "ramUsedGb": 7.891,
        "ramTotalGb": 31.26,
        "vramUsedGb": 3.456,
        "vramTotalGb": 24.0,
        "loadedModels": None,
    }
    assert current_metrics(0, sample=sample) == {
        "cpuUsagePercent": 12.3,
        "ramUsedGb": 7.89,
        "ramTotalGb": 31.26,
        "vramUsedGb": 3.46,
        "vramTotalGb": 24.0,
        "ollamaModelsLoaded": [],
        "activeBenchmarks": 0,
    }


def test_one_gpu_is_parsed_from_nvidia_smi(fake_nvidia_smi):
    calls = fake_nvidia_smi("echo '45, 1024, 8192'")
    assert gpu_usage() == {
        "gpuCount": 1,
        "gpuUtilPercent": 45.0,
        "vramUsedGb": 1.0,
        "vramTotalGb": 8.0,
    }
    assert calls.read_text().split() == list(sample_mod.NVIDIA_SMI_QUERY)


def test_two_gpus_sum_memory_and_average_utilisation(fake_nvidia_smi):
    fake_nvidia_smi("printf '45, 1024, 8192\\n15, 3072, 16384\\n'")
    assert gpu_usage() == {
        "gpuCount": 2,
        "gpuUtilPercent": 30.0,
        "vramUsedGb": 4.0,
        "vramTotalGb": 24.0,
    }


def test_garbage_lines_are_skipped_and_na_utilisation_left_out_of_the_mean(fake_nvidia_smi):
    fake_nvidia_smi(
        "printf 'garbage\\n50, 2048, 8192\\nNo devices were found\\n[N/A], 1024, 4096\\n'"
    )
    assert gpu_usage() == {
        "gpuCount": 2,
        "gpuUtilPercent": 50.0,
        "vramUsedGb": 3.0,
        "vramTotalGb": 12.0,
    }


def test_only_garbage_means_no_gpu_values(fake_nvidia_smi):
    fake_nvidia_smi("echo 'this is not csv'; echo '1, two, 3'")
    assert gpu_usage() == sample_mod.NO_GPU


def test_a_failing_nvidia_smi_gives_none_and_is_not_called_again_soon(fake_nvidia_smi, caplog):
    calls = fake_nvidia_smi("echo 'NVIDIA-SMI has failed'; exit 9")
    with caplog.at_level(logging.WARNING, logger="app.sysmetrics.sample"):
        assert gpu_usage() == sample_mod.NO_GPU
        assert gpu_usage() == sample_mod.NO_GPU
    assert len(calls.read_text().splitlines()) == 1
    assert "exit 9" in caplog.text


def test_a_hung_nvidia_smi_is_cut_off_by_the_timeout(fake_nvidia_smi):
    # exec: the shell becomes sleep, so killing it on timeout closes the pipes at once.
    fake_nvidia_smi("exec sleep 30")
    assert gpu_usage(timeout=0.2) == sample_mod.NO_GPU


def test_nvidia_smi_lookup_is_cached_per_path(tmp_path):
    path_env = str(tmp_path)
    assert find_nvidia_smi(path_env) is None
    hits = find_nvidia_smi.cache_info().hits
    assert find_nvidia_smi(path_env) is None
    assert find_nvidia_smi.cache_info().hits == hits + 1


def test_loaded_models_are_listed_with_sizes_in_gb():
    assert loaded_model_list(_ollama_ps) == [
        {"name": "llama3.1:8b", "sizeGb": 6.0, "vramGb": 6.0},
        {"name": "qwen2.5:14b", "sizeGb": 10.0, "vramGb": 4.0},
    ]


@pytest.mark.parametrize("loaded_models", [_failing, lambda: None, lambda: [42]])
def test_a_failing_loaded_models_callable_gives_none_not_an_error(no_gpu, loaded_models):
    assert loaded_model_list(loaded_models) is None
    assert take_sample(loaded_models)["loadedModels"] is None


class FakeTake:
    """take_sample stand-in: deterministic readings; raises on the calls listed in `fail_on`."""

    def __init__(self, fail_on=()):
        self.calls = 0
        self.fail_on = set(fail_on)

    def __call__(self, loaded_models):
        self.calls += 1
        if self.calls in self.fail_on:
            raise RuntimeError("psutil hiccup")
        return {"cpuPercent": 10.0 * self.calls, "ramUsedGb": 4.0, "rssMb": 100.0 + self.calls}


def _stop_after(waits):
    """A wait(seconds) that lets the loop go round `waits` times, then ends it."""
    seen = []

    def wait(seconds):
        seen.append(seconds)
        return len(seen) >= waits

    return wait, seen


def test_sampler_stores_n_samples_and_survives_a_failing_tick(caplog):
    stored = []
    wait, waits = _stop_after(5)
    sampler = Sampler(
        stored.append,
        take=FakeTake(fail_on={3}),
        clock=itertools.count(1000, 2).__next__,
        wait=wait,
        interval=2.0,
    )
    with caplog.at_level(logging.ERROR, logger="app.sysmetrics.sampler"):
        sampler.run()
    assert [s["t"] for s in stored] == [1000, 1002, 1006, 1008]
    assert [s["cpuPercent"] for s in stored] == [10.0, 20.0, 40.0, 50.0]
    assert waits == [2.0] * 5
    assert (sampler.samples, sampler.errors) == (4, 1)
    assert "psutil hiccup" in caplog.text
    assert sampler.latest == stored[-1]
    assert sampler.peaks["cpuPercent"] == 50.0 and sampler.peaks["rssMb"] == 105.0


def test_a_failing_store_is_counted_too():
    def store(sample):
        raise OSError("disk full")

    sampler = Sampler(store, take=FakeTake(), clock=lambda: 0)
    assert sampler.sample_once() is None
    assert (sampler.samples, sampler.errors) == (0, 1)


def test_sampler_thread_runs_its_ticks_and_stop_joins_it():
    stored = []
    wait, _ = _stop_after(3)
    sampler = Sampler(stored.append, take=FakeTake(), clock=lambda: 0, wait=wait)
    assert sampler.start() is True
    assert sampler.stop() is True
    assert not sampler.running
    assert len(stored) == 3


def test_stop_wakes_the_waiting_thread_and_start_twice_is_refused():
    sampler = Sampler([].append, take=FakeTake(), interval=3600)
    assert sampler.start() is True
    assert sampler.start() is False
    assert sampler.stop() is True
    assert sampler.stop() is True
    assert Sampler([].append).stop() is True


def _series(count, start=1_700_000_000, models_change_at=None):
    """`count` samples 2 s apart at storage precision (so encoding is lossless)."""
    models = [{"name": "llama3.1:8b-instruct-q4_K_M", "sizeGb": 5.6, "vramGb": 5.6}]
    other = [{"name": "qwen2.5:14b", "sizeGb": 9.8, "vramGb": 9.8}, *models]
    samples = []
    for i in range(count):
        samples.append(
            {
                "t": start + 2 * i,
                "cpuPercent": (i * 37) % 101,
                "ramUsedGb": round(10 + (i % 50) / 10, 2),
                "rssMb": 150 + i % 40,
                "gpuUtilPercent": (i * 13) % 100,
                "vramUsedGb": round(6 + (i % 30) / 100, 2),
                "ramTotalGb": 31.26,
                "vramTotalGb": 24.0,
                "gpuCount": 1,
                "loadedModels": other if models_change_at and i >= models_change_at else models,
            }
        )
    return samples


def test_compact_encoding_round_trips():
    samples = _series(10, models_change_at=6)
    samples[3]["gpuUtilPercent"] = None
    samples[8]["loadedModels"] = None
    assert decode_series(encode_series(samples)) == samples


def test_compact_encoding_writes_slow_fields_only_when_they_change():
    rows = encode_series(_series(8, models_change_at=6))
    assert {"R", "V", "n", "m"} <= set(rows[0])
    assert set(rows[1]) == {"t", "c", "r", "p", "g", "v"}
    assert set(rows[6]) == {"t", "c", "r", "p", "g", "v", "m"}


def test_compact_encoding_rounds_to_storage_precision():
    sample = {"t": 12.4, "cpuPercent": 37.6, "ramUsedGb": 7.8912, "rssMb": 182.4}
    row = encode_series([sample])[0]
    assert {k: row[k] for k in ("t", "c", "r", "p")} == {"t": 12, "c": 38, "r": 7.89, "p": 182}


def test_ten_hours_downsample_within_the_bound_and_budget():
    samples = _series(18_000, models_change_at=9_000)
    kept = downsample(samples)
    now = samples[-1]["t"]
    # The last hour both ends included, plus the 30 s buckets the older 9 h touch (a partial
    # one at each end, as buckets align to whole multiples of 30 s).
    assert len(kept) <= (1_800 + 1) + (9 * 3600 // 30 + 2)
    assert [s for s in kept if s["t"] >= now - 3600] == [s for s in samples if s["t"] >= now - 3600]
    assert peaks(kept) == peaks(samples)
    assert downsample(kept, now=now) == kept
    size = len(json.dumps(encode_series(kept), separators=(",", ":")))
    assert size < 2_000_000 / 10


def test_ten_hours_fit_the_budget_even_without_downsampling():
    rows = encode_series(_series(18_000, models_change_at=9_000))
    assert len(json.dumps(rows, separators=(",", ":"))) < 2_000_000


def test_downsample_keeps_a_short_series_whole():
    samples = _series(100)
    assert downsample(samples) == samples
    assert downsample([]) == []


def test_peaks_take_the_maximum_and_skip_unknown_values():
    samples = [
        {"cpuPercent": 10, "ramUsedGb": 5.0, "rssMb": 100, "gpuUtilPercent": None},
        {"cpuPercent": 90, "ramUsedGb": 4.0, "rssMb": 120, "gpuUtilPercent": None},
    ]
    assert peaks(samples) == {
        "cpuPercent": 90,
        "ramUsedGb": 5.0,
        "rssMb": 120,
        "gpuUtilPercent": None,
        "vramUsedGb": None,
    }
    assert peaks([]) == dict.fromkeys(peaks([]))
