"""System metrics during runs: stored with the run, sampled while the engine works, stopped
when it stops, peaks kept, and the two endpoints."""

import threading
import time

import pytest

from app.db.models import SampleChunk
from app.engine import lease
from app.engine.memory import memory_for
from app.engine.orchestrator import tick
from app.runs.queries import get_run
from app.schedules.alerts import digest_of
from app.schedules.digest import digest_finished
from app.sysmetrics.store import SampleStore
from app.sysmetrics.store import latest_sample
from app.sysmetrics.store import run_samples
from app.sysmetrics.store import stored_bytes
from tests.engine_helpers import FakeClock
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run
from tests.factories import make_run

HOLDER = "test-holder"
MODELS = [{"name": "m1:latest", "sizeGb": 1.5, "vramGb": 1.0}]


def sample(t, cpu=10.0, models=MODELS):
    return {
        "t": t,
        "cpuPercent": cpu,
        "ramUsedGb": 4.0,
        "ramTotalGb": 16.0,
        "rssMb": 120.0,
        "gpuCount": None,
        "gpuUtilPercent": None,
        "vramUsedGb": None,
        "vramTotalGb": None,
        "loadedModels": models,
    }


def wait_until(condition, timeout=10.0):
    """Wait (bounded) for `condition()`; fail naming the timeout when it never holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(0.02)


def test_samples_are_stored_in_chunks_and_read_back_in_order(app):
    run, _ = make_run("r")
    store = SampleStore(run.id, chunk=3)
    for t in range(7):
        store(sample(1000 + 2 * t, cpu=t))
    assert SampleChunk.select().where(SampleChunk.run == run).count() == 3
    samples = run_samples(run)
    assert [s["t"] for s in samples] == [1000 + 2 * t for t in range(7)]
    assert [s["cpuPercent"] for s in samples] == list(range(7))
    assert all(s["loadedModels"] == MODELS for s in samples)  # slow fields carried forward
    assert stored_bytes(run) > 0


def test_each_chunk_decodes_on_its_own(app):
    run, _ = make_run("r")
    store = SampleStore(run.id, chunk=2)
    for t in range(5):
        store(sample(t))
    latest = latest_sample(run)
    assert latest["t"] == 4 and latest["ramTotalGb"] == 16.0 and latest["loadedModels"] == MODELS


def test_a_new_store_for_the_same_run_appends_a_new_chunk(app):
    run, _ = make_run("r")
    SampleStore(run.id)(sample(1))
    SampleStore(run.id)(sample(2))  # the next tick after a restart
    assert [s["t"] for s in run_samples(run)] == [1, 2]


def test_since_skips_older_samples(app):
    run, _ = make_run("r")
    store = SampleStore(run.id, chunk=2)
    for t in range(6):
        store(sample(t))
    assert [s["t"] for s in run_samples(run, since=3)] == [3, 4, 5]


@pytest.fixture
def ollama_run(app, fake):
    lease.acquire(HOLDER, 15.0)
    provider = make_provider(fake, type="OLLAMA")
    return start_run(provider, [(provider, "m1")], make_tasks(3))


def test_the_engine_samples_while_it_works_and_stops_when_the_run_ends(app, fake, ollama_run):
    fake.default_latency = 0.2
    config = dict(app.config, SYSMETRICS_SECONDS=0.05)
    clock = FakeClock()
    tick(config, holder=HOLDER, now=clock, slice_seconds=0.01)
    sampler = memory_for(HOLDER, ollama_run).sampler
    assert sampler is not None and sampler.running
    wait_until(lambda: len(run_samples(ollama_run)) >= 2)
    drive(config, clock, holder=HOLDER)
    assert not sampler.running
    samples = run_samples(ollama_run)
    assert samples[0]["cpuPercent"] is not None and samples[0]["ramTotalGb"] > 0
    # The run's Ollama server was asked which models it holds (/api/ps).
    assert any(s["loadedModels"] is not None for s in samples)
    count = len(samples)
    time.sleep(0.2)  # a stopped sampler writes nothing more
    assert len(run_samples(ollama_run)) == count


def test_a_paused_run_stops_its_sampler(app, client, fake, ollama_run):
    config = dict(app.config, SYSMETRICS_SECONDS=0.05)
    clock = FakeClock()
    tick(config, holder=HOLDER, now=clock, slice_seconds=0.01)
    sampler = memory_for(HOLDER, ollama_run).sampler
    client.post(f"/api/runs/{ollama_run.run_id}/pause")
    tick(config, holder=HOLDER, now=clock)
    assert not sampler.running


def test_sampling_is_off_at_zero_seconds(app, ollama_run):
    tick(dict(app.config, SYSMETRICS_SECONDS=0), holder=HOLDER, now=FakeClock(), slice_seconds=0.01)
    assert memory_for(HOLDER, ollama_run).sampler is None


def test_the_runs_samples_and_peaks_through_the_api(app, client):
    run, _ = make_run("r")
    store = SampleStore(run.id)
    for t, cpu in ((10, 20.0), (12, 75.0), (14, 30.0)):
        store(sample(t, cpu=cpu))
    data = client.get("/api/runs/r/system-metrics").get_json()
    assert data["count"] == 3 and data["peaks"]["cpuPercent"] == 75
    assert data["samples"][1]["cpuPercent"] == 75
    assert client.get("/api/runs/r/system-metrics?since=12").get_json()["count"] == 2
    assert client.get("/api/runs/r/system-metrics?since=soon").status_code == 400


def test_the_peaks_are_kept_in_the_runs_digest_and_summary(app, client):
    run, _ = make_run("r")
    store = SampleStore(run.id)
    for t, cpu in ((10, 20.0), (12, 75.0)):
        store(sample(t, cpu=cpu))
    digest_finished()
    assert digest_of(run).system_peaks["cpuPercent"] == 75
    summary = client.get("/runs/r/summary.json").get_json()
    assert summary["systemPeaks"]["cpuPercent"] == 75


def test_system_metrics_now_answers_the_seeds_shape(client):
    data = client.get("/api/system/metrics").get_json()
    assert set(data) == {
        "cpuUsagePercent",
        "ramUsedGb",
        "ramTotalGb",
        "vramUsedGb",
        "vramTotalGb",
        "ollamaModelsLoaded",
        "activeBenchmarks",
    }
    assert 0 <= data["cpuUsagePercent"] <= 100 and data["ramTotalGb"] > 0
    assert data["activeBenchmarks"] == 0
    assert isinstance(data["ollamaModelsLoaded"], list)


def test_system_metrics_now_lists_the_models_an_ollama_server_holds(app, client, fake):
    make_provider(fake, type="OLLAMA")
    fake.loaded = ["llama3:latest"]
    data = client.get("/api/system/metrics").get_json()
    assert data["ollamaModelsLoaded"] == ["llama3:latest"]


def test_system_metrics_now_counts_the_running_run(client, ollama_run):
    assert client.get("/api/system/metrics").get_json()["activeBenchmarks"] == 1


def test_many_readers_while_the_sampler_writes(app):
    run, _ = make_run("r")
    store = SampleStore(run.id, chunk=5)
    done = threading.Event()

    def write():
        for t in range(40):
            store(sample(t))
        done.set()

    writer = threading.Thread(target=write)
    writer.start()
    while not done.is_set():
        times = [s["t"] for s in run_samples(get_run("r"))]
        assert times == sorted(times)
    writer.join()
    assert len(run_samples(run)) == 40
