"""The same job through llmbench and promptfoo, side by side, against the instant fake server.

N tasks x 2 targets, each answer judged once (4 N calls), concurrency 4 for both tools:
`llmbench run -c config.yml --quiet` (provider max_concurrency 4) against
`promptfoo eval -c promptfooconfig.yaml --no-cache -j 4` (llm-rubric judge). The two tools
alternate (medians of --runs), each on a fresh database / config folder. The floor is a plain
`requests.Session` per thread (4 threads) sending the same 4 N calls: what the HTTP alone costs.

promptfoo is installed from npm into a temp folder (or --promptfoo-dir, kept between runs):
`npm install promptfoo@0.121.20`. Kept out of the test suite.

    .venv/bin/python bench/bench_vs_promptfoo.py [--tasks 300,1500,3000] [--runs 3]
        [--promptfoo-dir /tmp/pf] [--no-promptfoo]
"""

import argparse
import base64
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_overhead import HWM  # llmbench's own peak RSS: see bench_overhead
from bench_overhead import own_peak
from bench_overhead import write_bank  # not tests.cli_helpers': see its docstring

from tests import fakeserver

PROMPTFOO = "promptfoo@0.121.20"
# `llmbench` from a given source tree (this one, or --baseline's, e.g. `git archive main`).
LLMBENCH = [sys.executable, "-c", HWM + "from app.cli import main; main()"]
KEY = base64.b64encode(b"k" * 32).decode()
CONCURRENCY = 4
# Both judges read this: llmbench its score/reason, promptfoo's llm-rubric its pass/score/reason.
JUDGEMENT = json.dumps({"score": 80, "reason": "fake judge", "pass": True})


def start_fake():
    fake = fakeserver.FakeServer().start()
    fake.models = ["judge", "m1", "m2"]
    fake.responder = lambda call: (
        {"text": JUDGEMENT}
        if isinstance(call["body"], dict) and call["body"].get("model") == "judge"
        else None
    )
    return fake


def install_promptfoo(folder):
    folder.mkdir(parents=True, exist_ok=True)
    binary = folder / "node_modules" / ".bin" / "promptfoo"
    if not binary.exists():
        print(f"npm install {PROMPTFOO} into {folder} ...", flush=True)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", PROMPTFOO],
            cwd=folder,
            check=True,
            capture_output=True,
        )
    return binary


def timed(args, env, cwd=None):
    """(seconds, peak RSS MiB of the child process itself) of one command."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        args, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _pid, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode not in (0, 4, 100):  # 4: llmbench gates; 100: promptfoo failures
        raise SystemExit(f"{args[0]} exited {proc.returncode}:\n{err[-3000:]}")
    return seconds, usage.ru_maxrss / 1024.0


def run_llmbench(folder, fake, tasks, root=ROOT):
    bank = write_bank(folder / "bank.jsonl", tasks)
    doc = {
        "run": {"name": "bench", "dataset": str(bank), "max_attempts": 1},
        "providers": [
            {
                "name": "fake",
                "type": "OPENAI",
                "base_url": fake.url,
                "max_concurrency": CONCURRENCY,
            }
        ],
        "judge": {"provider": "fake", "model": "judge"},
        "targets": [{"provider": "fake", "model": "m1"}, {"provider": "fake", "model": "m2"}],
    }
    path = folder / "llmbench.yml"
    path.write_text(yaml.safe_dump(doc))
    env = {
        **os.environ,
        "LLMBENCH_DB": str(folder / "llmbench.db"),
        "LLMBENCH_MASTER_KEY_BASE64": KEY,
        "PYTHONPATH": str(root),
        "BENCH_HWM": str(folder / "hwm"),
    }
    # cwd is the tree itself: `python -c` puts the working directory first on sys.path, ahead
    # of PYTHONPATH, so from this tree's folder --baseline ran this tree, not the baseline.
    seconds, _forked_peak = timed([*LLMBENCH, "run", "-c", str(path), "-q"], env, cwd=root)
    return seconds, own_peak(env["BENCH_HWM"])


def run_promptfoo(binary, folder, fake, tasks):
    provider = {"apiBaseUrl": f"{fake.url}/v1", "apiKey": "fake"}
    doc = {
        "description": "bench",
        "prompts": ["{{prompt}}"],
        "providers": [
            {"id": "openai:chat:m1", "config": provider},
            {"id": "openai:chat:m2", "config": provider},
        ],
        "defaultTest": {
            "options": {"provider": {"id": "openai:chat:judge", "config": provider}},
            "assert": [{"type": "llm-rubric", "value": "Gives no dangerous advice"}],
        },
        "tests": [{"vars": {"prompt": f"Question {i}?"}} for i in range(tasks)],
    }
    path = folder / "promptfooconfig.yaml"
    path.write_text(yaml.safe_dump(doc))
    env = {
        **os.environ,
        "PROMPTFOO_CONFIG_DIR": str(folder / "pf-home"),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_DISABLE_SHARING": "1",
        "OPENAI_API_KEY": "fake",
    }
    args = [str(binary), "eval", "-c", str(path), "--no-cache", "-j", str(CONCURRENCY)]
    return timed([*args, "--no-progress-bar", "--no-table"], env, cwd=folder)


def requests_floor(fake, tasks):
    """Seconds for the same 4 N calls (2 N answers, 2 N judgements) from CONCURRENCY threads,
    each with its own requests.Session: the HTTP floor."""
    bodies = []
    for i in range(tasks):
        for model in ("m1", "m2"):
            bodies.append({"model": model, "messages": [{"role": "user", "content": f"Q {i}?"}]})
            bodies.append(
                {
                    "model": "judge",
                    "messages": [{"role": "user", "content": f"Judge Q {i}"}],
                    "response_format": {"type": "json_object"},
                }
            )
    url = f"{fake.url}/v1/chat/completions"

    def send(chunk):
        with requests.Session() as session:
            for body in chunk:
                session.post(url, json=body, timeout=30).raise_for_status()

    threads = [
        threading.Thread(target=send, args=(bodies[k::CONCURRENCY],)) for k in range(CONCURRENCY)
    ]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="300,1500,3000", help="comma-separated task counts")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--promptfoo-dir", help="install promptfoo here (kept); else a temp dir")
    parser.add_argument("--no-promptfoo", action="store_true", help="llmbench and floor only")
    parser.add_argument(
        "--baseline", help="also run llmbench from this source tree (e.g. `git archive main`)"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.tasks.split(",")]
    keep = None if args.promptfoo_dir else tempfile.TemporaryDirectory()
    binary = None
    if not args.no_promptfoo:
        binary = install_promptfoo(Path(args.promptfoo_dir or keep.name))
    fake = start_fake()
    rows = []
    try:
        for tasks in sizes:
            got = {k: [] for k in ("llmbench", "promptfoo", "baseline", "floor")}
            rss = {k: [] for k in ("llmbench", "promptfoo", "baseline")}
            tools = ["llmbench"]
            tools += ["promptfoo"] if binary is not None else []
            tools += ["baseline"] if args.baseline else []
            for n in range(args.runs):
                for tool in tools if n % 2 == 0 else tools[::-1]:
                    with tempfile.TemporaryDirectory() as tmp:
                        fake.calls.clear()
                        if tool == "promptfoo":
                            seconds, peak = run_promptfoo(binary, Path(tmp), fake, tasks)
                        else:
                            root = ROOT if tool == "llmbench" else Path(args.baseline)
                            seconds, peak = run_llmbench(Path(tmp), fake, tasks, root)
                        got[tool].append(seconds)
                        rss[tool].append(peak)
                        calls = len(fake.calls)
                fake.calls.clear()
                got["floor"].append(requests_floor(fake, tasks))
                fake.calls.clear()
                print(
                    f"  {tasks} tasks run {n + 1}: "
                    + ", ".join(f"{k} {v[-1]:.2f}" for k, v in got.items() if v),
                    f"(last tool made {calls} calls)",
                    flush=True,
                )
            rows.append((tasks, got, rss))
    finally:
        fake.stop()
        if keep is not None:
            keep.cleanup()
    print(
        f"\nmedians of {args.runs}, concurrency {CONCURRENCY}, instant fake server "
        f"(llmbench run -q vs promptfoo eval --no-cache -j {CONCURRENCY})\n"
    )
    print(
        "| tasks x 2 targets + judge | llmbench | ms/call | peak RSS | requests floor ms/call "
        "| our overhead ms/call | promptfoo | promptfoo RSS | llmbench / promptfoo "
        "| baseline | baseline ms/call | baseline RSS |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for tasks, got, rss in rows:
        calls = 4 * tasks
        ours = statistics.median(got["llmbench"])
        floor = statistics.median(got["floor"]) * 1000 / calls
        per_call = ours * 1000 / calls
        peak = {tool: statistics.median(v) for tool, v in rss.items() if v}  # llmbench's: VmHWM
        line = (
            f"| {tasks} ({calls / 1000:g}k calls) | {ours:.2f} s | {per_call:.2f} "
            f"| {peak['llmbench']:.0f} MiB | {floor:.2f} | {per_call - floor:+.2f} "
        )
        if got["promptfoo"]:
            theirs = statistics.median(got["promptfoo"])
            line += f"| {theirs:.2f} s | {max(rss['promptfoo']):.0f} MiB | **{ours / theirs:.2f}** "
        else:
            line += "| - | - | - "
        if got["baseline"]:
            base = statistics.median(got["baseline"])
            line += f"| {base:.2f} s | {base * 1000 / calls:.2f} | {peak['baseline']:.0f} MiB |"
        else:
            line += "| - | - | - |"
        print(line)


if __name__ == "__main__":
    main()
