"""What a big run costs before its first model call: time from `llmbench run` starting to the
first request the model server gets, and the run's peak RSS.

N tasks x 2 targets, each answer judged once (4 N calls: 12k calls are 3 000 tasks), on the
instant fake server in this process (real HTTP on 127.0.0.1), which records when each request
arrived. The run is a child process of its own on a fresh SQLite database; its start is taken
just before it is spawned (Python's own start-up is in the figure, as a person waits for it).
Peak RSS is the child's own VmHWM, written when it exits (ru_maxrss from wait4 would count the
pages the child was forked with). The child's CPU time when the first request arrives (its
/proc stat, read as the request is seen) holds up on a busy machine where wall time does not.
Medians of --runs, with the machine's load noted. --first-only stops each run (as Ctrl-C does)
once its first model call arrives: the peak RSS is then the peak up to that point, and a busy
machine gives the figures before the first call in minutes instead of the whole runs' hours.
The source tree is compiled first (compileall), as an installed tool's is.

    .venv/bin/python bench/bench_first_call.py [--calls 12000,60000] [--runs 3] [--first-only]
    BENCH_SRC=/tmp/main .venv/bin/python bench/bench_first_call.py     # another source tree

Kept out of the test suite.
"""

import argparse
import base64
import compileall
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent.parent
ROOT = Path(os.environ.get("BENCH_SRC") or HERE)
sys.path.insert(0, str(HERE))

from tests import fakeserver

KEY = base64.b64encode(b"k" * 32).decode()
JUDGEMENT = '{"score": 80, "reason": "fake judge"}'
# The child writes its /proc/self/status when it exits: VmHWM is its own peak RSS.
HWM = (
    "import atexit, os; atexit.register(lambda: open(os.environ['BENCH_HWM'], 'w').write("
    "open('/proc/self/status').read())); "
)


def write_config(folder, url, tasks):
    bank = folder / "bank.jsonl"
    with bank.open("w") as out:
        for i in range(tasks):
            task = {
                "id": f"q{i:05d}",
                "category": ("Water", "Fire")[i % 2],
                "difficulty": "Easy",
                "scenario": [],
                "prompt": f"Question {i}?",
                "rubric": [],
                "auto_fail": ["Gives dangerous advice"],
            }
            out.write(json.dumps(task) + "\n")
    doc = {
        "run": {"name": "bench", "dataset": str(bank), "max_attempts": 1},
        "providers": [{"name": "fake", "type": "OPENAI", "base_url": url, "max_concurrency": 4}],
        "judge": {"provider": "fake", "model": "judge"},
        "targets": [{"provider": "fake", "model": "m1"}, {"provider": "fake", "model": "m2"}],
    }
    path = folder / "llmbench.yml"
    path.write_text(yaml.safe_dump(doc))
    return path


def peak_mib(status):
    for line in status.read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0
    raise SystemExit(f"no VmHWM in {status}")


def one_run(fake, tasks, first_only=False):
    """(s to the first request, s to the first model call, peak RSS MiB, wall s) of one run."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = write_config(folder, fake.url, tasks)
        env = {
            **os.environ,
            "LLMBENCH_DB": str(folder / "llmbench.db"),
            "LLMBENCH_MASTER_KEY_BASE64": KEY,
            "PYTHONPATH": str(ROOT),
            "BENCH_HWM": str(folder / "status"),
        }
        fake.calls.clear()
        started = time.time()
        child = subprocess.Popen(
            [sys.executable, "-c", HWM + "from app.cli import main; main()"]
            + ["run", "-c", str(config), "-q"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        cpu = {}
        watcher = threading.Thread(target=cpu_at_first_request, args=(fake, child, cpu, first_only))
        watcher.start()
        _out, err = child.communicate()
        wall = time.time() - started
        watcher.join()
        if child.returncode not in (0, 4) and not first_only:
            raise SystemExit(f"llmbench run exited {child.returncode}:\n{err[-3000:]}")
        calls = list(fake.calls)
        first = min(c["wall"] for c in calls) - started
        first_chat = min(c["wall"] for c in calls if c["method"] == "POST") - started
        answered = sum(1 for c in calls if c["method"] == "POST")
        if answered < 4 * tasks and not first_only:  # and a few more: the warm-up calls
            raise SystemExit(f"expected {4 * tasks} model calls, the server got {answered}")
        nan = float("nan")
        rss = peak_mib(folder / "status")
        return first, cpu.get("s", nan), first_chat, cpu.get("chat", nan), rss, wall


def cpu_at_first_request(fake, child, out, first_only=False):
    """The child's CPU seconds (user + system) as the fake sees its first request, and its
    first model call (polled every 2 ms); with `first_only`, then stops the run (SIGINT)."""
    for key, seen in (("s", lambda: fake.calls), ("chat", lambda: _posted(fake))):
        while not seen() and child.poll() is None:
            time.sleep(0.002)
        try:
            fields = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return
        out[key] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    if first_only and child.poll() is None:
        child.send_signal(signal.SIGINT)


def _posted(fake):
    return any(c["method"] == "POST" for c in list(fake.calls))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", default="12000,60000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--first-only", action="store_true", help="stop each run at its first call")
    options = parser.parse_args()
    # As an installed tool has them (pip compiles a wheel's modules): where
    # PYTHONDONTWRITEBYTECODE is set, every run would compile the source tree again.
    compileall.compile_dir(ROOT / "app", quiet=1)
    fake = fakeserver.FakeServer().start()
    fake.models = ["judge", "m1", "m2"]
    fake.responder = lambda call: (
        {"text": JUDGEMENT, "latency": fake.default_latency}
        if isinstance(call["body"], dict) and call["body"].get("model") == "judge"
        else None
    )
    print(f"source: {ROOT}\nload average at start: {os.getloadavg()}")
    print(
        "| calls | first request s | CPU s by then | first model call s | CPU s by then |"
        " peak RSS MiB | run wall s |\n|---|---|---|---|---|---|---|"
    )
    try:
        for calls in (int(c) for c in options.calls.split(",")):
            got = [one_run(fake, calls // 4, options.first_only) for _ in range(options.runs)]
            first, cpu, chat, chat_cpu, rss, wall = (
                statistics.median(column) for column in zip(*got, strict=True)
            )
            print(
                f"| {calls} | {first:.2f} | {cpu:.2f} | {chat:.2f} | {chat_cpu:.2f} | {rss:.0f} "
                f"| {wall:.1f} |"
                f"   (load {os.getloadavg()[0]:.1f})",
                flush=True,
            )
    finally:
        fake.stop()
    print(f"load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
