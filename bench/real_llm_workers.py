"""The built-in `quick` collection against ../shared/llm/serve-local-llm, twice: `llmbench serve`
on PostgreSQL plus two `llmbench worker` processes, then `llmbench serve` alone on SQLite;
temperature 0 on the target and the judge; then results.csv and the averages side by side.

    .venv/bin/python bench/real_llm_workers.py [--llm http://127.0.0.1:18080/v1]
                                               [--model smollm2-135m-instruct] [--keep DIR]

Starts a throwaway PostgreSQL (tests/pg_server.py: initdb in a temp dir, pg_ctl on a free
loopback port) and each `llmbench` as a subprocess on a free loopback port, as a user would;
everything goes through the JSON API. Prints the commands, who answered what, and the comparison.
"""

import argparse
import base64
import csv
import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import pg_databases
from tests import pg_server

LLMBENCH = str(Path(sys.executable).parent / "llmbench")
KEY = base64.b64encode(b"w" * 32).decode()
TIMEOUT = 1800  # a whole run on a small CPU model


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn(args, env, log):
    print("  $", " ".join(args), flush=True)
    out = open(log, "w")
    return subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)


def wait_http(url, proc, log, timeout=120):
    deadline = time.monotonic() + timeout
    while True:
        try:
            if requests.get(url, timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"{url} never answered:\n{Path(log).read_text()[-3000:]}")
        time.sleep(0.2)


def one_run(label, db, work, llm, model, workers):
    """Serve on `db` (plus `workers` worker processes), run `quick`, return its files."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLMBENCH_")}
    env.update(LLMBENCH_DB=db, LLMBENCH_MASTER_KEY_BASE64=KEY, LLMBENCH_SYSMETRICS_SECONDS="0")
    procs = []
    print(f"{label}:", flush=True)
    try:
        serve = spawn([LLMBENCH, "serve", "--port", str(port)], env, work / f"{label}-serve.log")
        procs.append(serve)
        wait_http(f"{base}/api/runs", serve, work / f"{label}-serve.log")
        # The orchestrator's first lease on a new database stops the runs it finds running
        # (lease.recover_interrupted): create the run once it holds the lease.
        deadline = time.monotonic() + 60
        while not requests.get(f"{base}/api/status", timeout=5).json().get("orchestrator"):
            if time.monotonic() > deadline:
                sys.exit("the orchestrator never took its lease")
            time.sleep(0.2)
        for n in range(workers):
            procs.append(
                spawn(
                    [LLMBENCH, "worker", "--db", db, "--concurrency", "2"],
                    env,
                    work / f"{label}-worker{n + 1}.log",
                )
            )
        api = requests.Session()
        providers = api.get(f"{base}/api/providers").json()
        provider = next(p for p in providers if llm.rstrip("/").split("/v1")[0] in p["baseUrl"])
        quick = next(c for c in api.get(f"{base}/api/collections").json() if c["name"] == "quick")
        body = {
            "name": f"quick on {label}",
            "judgeProviderId": provider["id"],
            "judgeModel": model,
            "judgeParams": {"temperature": 0, "max_tokens": 512},
            "targets": [
                {
                    "providerId": provider["id"],
                    "model": model,
                    "params": {"temperature": 0, "max_tokens": 256},
                }
            ],
            "collectionIds": [quick["id"]],
        }
        created = api.post(f"{base}/api/runs", json=body)
        assert created.status_code in (200, 201), created.text
        run_id = created.json()["runId"]
        started = time.monotonic()
        while True:
            summary = api.get(f"{base}/api/runs/{run_id}").json()
            if summary["state"] != "running" or time.monotonic() - started > TIMEOUT:
                break
            time.sleep(1)
        seconds = time.monotonic() - started
        csv_text = api.post(
            f"{base}/api/runs/{run_id}/export", json={"format": "CSV", "includeDetailed": True}
        ).text
        results = api.get(f"{base}/api/runs/{run_id}/results").json()
        items = api.get(f"{base}/api/runs/{run_id}/items", params={"perPage": 500}).json()
        return {
            "state": summary["state"],
            "seconds": seconds,
            "csv": csv_text,
            "results": results,
            "items": items,
            "run_id": run_id,
        }
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def rows_of(csv_text):
    return list(csv.DictReader(io.StringIO(csv_text)))


def worker_counts(work, label, workers):
    counts = []
    for n in range(workers):
        text = (work / f"{label}-worker{n + 1}.log").read_text()
        answers = sum(1 for line in text.splitlines() if " ms, " in line and "tokens" in line)
        judged = sum(1 for line in text.splitlines() if ": score " in line)
        counts.append((answers, judged))
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--llm", default="http://127.0.0.1:18080/v1")
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--keep", default=None, help="keep the logs in this folder")
    args = parser.parse_args()
    status = pg_server.available()
    if not status:
        sys.exit(status.reason)
    work = Path(args.keep or tempfile.mkdtemp(prefix="llmbench-real-workers-"))
    work.mkdir(parents=True, exist_ok=True)
    with pg_server.running_postgres() as server_url:
        pg_url = pg_databases.create_database(server_url, "real_workers")
        pg = one_run("postgres", pg_url, work, args.llm, args.model, workers=2)
    lite = one_run("sqlite", str(work / "llmbench.db"), work, args.llm, args.model, workers=0)
    print()
    for label, got in (("postgres + 2 workers", pg), ("sqlite, serve alone", lite)):
        print(f"{label}: run {got['run_id']} {got['state']} in {got['seconds']:.0f} s")
    counts = worker_counts(work, "postgres", 2)
    total = len(pg["items"]["items"]) if "items" in pg["items"] else "?"
    print(f"answers/judgements written by worker 1, 2: {counts} (of {total} items)")
    pg_rows, lite_rows = rows_of(pg["csv"]), rows_of(lite["csv"])
    pg_cols = list(pg_rows[0]) if pg_rows else []
    lite_cols = list(lite_rows[0]) if lite_rows else []
    print(f"results.csv columns the same: {pg_cols == lite_cols} ({len(pg_cols)} columns)")
    key = next((c for c in ("taskId", "task_id", "task") if c in pg_cols), pg_cols[0])
    answer = next((c for c in pg_cols if "response" in c.lower() or c == "answer"), None)
    score = next((c for c in pg_cols if c.lower() in ("score", "evaluationscore")), None)
    lite_by_task = {r[key]: r for r in lite_rows}
    same_answer = [
        r for r in pg_rows if answer and lite_by_task.get(r[key], {}).get(answer) == r[answer]
    ]
    same_score = [r for r in same_answer if lite_by_task[r[key]].get(score) == r.get(score)]
    print(
        f"same answer text on both: {len(same_answer)} of {len(pg_rows)} tasks; of those, "
        f"the same score: {len(same_score)} (columns {key!r}, {answer!r}, {score!r})"
    )
    for label, got in (("postgres", pg), ("sqlite", lite)):
        for m in got["results"].get("models", []):
            shown = {
                k: v for k, v in m.items() if "ms" not in k.lower() and "ttft" not in k.lower()
            }
            print(f"  {label}: {shown}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"logs in {work}")


if __name__ == "__main__":
    main()
