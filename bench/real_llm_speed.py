"""Speed on the real llama.cpp of ../shared/llm/serve-local-llm: a judge-free run of two targets
(the served model with two token limits) over two load steps (concurrency 1, then 3, on its one
slot), with an SLO; then our stream's decode rate against llama.cpp's own `timings`, and each
step's TTFT split into the server's prompt time and the queue before it.

    .venv/bin/python bench/real_llm_speed.py      # serve-local-llm must be running

It serves llmbench on 127.0.0.1:18141 with a throwaway database (printed at the end).
"""

import base64
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
BASE = "http://127.0.0.1:18141"
LLM = "http://127.0.0.1:18080/v1"
MODEL = "smollm2-135m-instruct"
SLO = {"ttftP90Ms": 1500, "e2eP95Ms": 8000, "minScore": 30}
COLUMNS = "step, ttft_ms, last_token_ms, chunks, prompt_ms, queue_ms, response_raw"


def serve(home):
    env = {
        **os.environ,
        "LLMBENCH_DB": f"{home}/db.sqlite",
        "LLMBENCH_MASTER_KEY_BASE64": base64.b64encode(os.urandom(32)).decode(),
        "LLMBENCH_PORT": "18141",
        "PYTHONPATH": str(ROOT),
    }
    log = open(f"{home}/serve.log", "w")  # noqa: SIM115 - the server writes it until the end
    server = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    for _ in range(200):
        try:
            requests.get(BASE + "/api/status", timeout=1)
            return server
        except requests.RequestException:
            time.sleep(0.3)
    raise SystemExit("llmbench serve did not start: see " + log.name)


def start_run():
    provider = requests.post(
        BASE + "/api/providers", json={"name": "llamacpp", "type": "OPENAI", "baseUrl": LLM}
    ).json()
    tasks = [t for t in requests.get(BASE + "/api/tasks").json() if t.get("checks")][:12]
    targets = [
        {
            "providerId": provider["id"],
            "model": MODEL,
            "params": {"temperature": 0, "max_tokens": tokens},
            "label": label,
        }
        for tokens, label in ((48, "smol short"), (160, "smol long"))
    ]
    spec = {
        "taskIds": [t["id"] for t in tasks],
        "targets": targets,
        "settings": {"load": {"mode": "concurrency", "steps": [1, 3]}, "slo": SLO},
    }
    response = requests.post(BASE + "/api/runs", json=spec)
    response.raise_for_status()
    return response.json()["runId"]


def wait(run_id, limit=900):
    start = time.time()
    state = None
    while time.time() - start < limit:
        state = requests.get(f"{BASE}/api/runs/{run_id}").json().get("state")
        if state == "finished":
            break
        time.sleep(3)
    print(f"run {run_id}: {state} in {time.time() - start:.0f} s")


def timings_of(raw):
    """llama.cpp's `timings` from a stored stream (its last event that has them)."""
    found = None
    for line in (raw or "").splitlines():
        if line.startswith("data:") and "timings" in line:
            try:
                found = json.loads(line[5:]).get("timings") or found
            except ValueError:
                continue
    return found


def against_timings(db):
    rows = (
        sqlite3.connect(db)
        .execute(f"SELECT {COLUMNS} FROM item WHERE status = 'COMPLETED'")
        .fetchall()
    )
    ratios, steps = [], {}
    for step, ttft, last, chunks, prompt_ms, queue_ms, raw in rows:
        timings = timings_of(raw)
        if timings and chunks and chunks > 2 and ttft and last and last > ttft:
            ours = (chunks - 1) / ((last - ttft) / 1000)
            ratios.append(ours / timings["predicted_per_second"])
        steps.setdefault(step, []).append((ttft, prompt_ms or 0.0, queue_ms or 0.0))
    print(
        f"our stream's decode rate / llama.cpp's predicted_per_second: median "
        f"{statistics.median(ratios):.3f} over {len(ratios)} answers "
        f"(min {min(ratios):.3f}, max {max(ratios):.3f})"
    )
    for step, values in sorted(steps.items()):
        ttft, prompt, queue = (statistics.median(v[i] for v in values) for i in range(3))
        print(
            f"step {step + 1}: TTFT median {ttft:.0f} ms = prompt {prompt:.0f} ms "
            f"+ queue {queue:.0f} ms ({len(values)} answers)"
        )


def per_step(run_id):
    speed = requests.get(f"{BASE}/api/runs/{run_id}/speed").json()
    for target in speed["targets"]:
        for s in target.get("steps", []):
            print(
                f"{target['label']}: concurrency {s['load']}: p90 TTFT {s['ttftMs']['p90']:.0f} ms,"
                f" output {s['window']['outputTokensPerSecond']:.1f} tok/s,"
                f" score {s.get('meanScore')}"
            )
    for target in (speed.get("slo") or {}).get("targets", []):
        print(target.get("sentence"))


def main():
    home = tempfile.mkdtemp(prefix="llmbench-real-speed-")
    server = serve(home)
    try:
        run_id = start_run()
        wait(run_id)
        against_timings(f"{home}/db.sqlite")
        per_step(run_id)
    finally:
        server.terminate()
    print(f"database: {home}/db.sqlite")


if __name__ == "__main__":
    main()
