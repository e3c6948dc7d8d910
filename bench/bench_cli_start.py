"""What a command costs before it does anything: `llmbench --version`, `--help`, `validate`
of a 10-task file, a 10-task `run`, `runs` and `show` of a finished run, wall and CPU time
(medians of --runs subprocesses; CPU time holds up on a busy machine), the sum of `python -X
importtime`'s self times (the imports' own share, median; importtime's own overhead included)
and the heavy modules each one imported (numpy, psycopg, Flask, pygal, gunicorn, requests,
Jinja, peewee).

    .venv/bin/python bench/bench_cli_start.py [--runs 5]
    BENCH_SRC=/tmp/main .venv/bin/python bench/bench_cli_start.py     # another source tree
    .venv/bin/python bench/bench_cli_start.py --against /tmp/main      # both, run by run

The source tree is compiled first (compileall): where PYTHONDONTWRITEBYTECODE is set no command
writes its bytecode, and each one compiled every module again (most of a run's CPU time), which
an installed llmbench never does. The table also counts the modules each command imported.

`validate` runs twice: with no database yet (it checks against a throwaway one, migrated and
given the built-in tasks) and with one (made first by `reset-defaults`, as a second command
finds it); a 10-task `run` (one target, judged) on the fake server in this process, answering
at once, uses that database too, as do `runs` (the runs made by then) and `show` of a run made
before the first timing (from a copy of the database per source: the first show of each works
its figures out and keeps them, the median one reads them back).
"""

import argparse
import base64
import compileall
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent.parent
ROOT = Path(os.environ.get("BENCH_SRC") or HERE)
sys.path.insert(0, str(HERE))

from tests import fakeserver

HEAVY = ("numpy", "psycopg", "flask", "pygal", "gunicorn", "requests", "jinja2", "peewee")


def tasks_file(folder):
    lines = [
        json.dumps(
            {
                "id": f"t{n:02d}",
                "category": "math",
                "difficulty": "Easy",
                "scenario": [],
                "prompt": f"What is {n} + {n}?",
                "rubric": [],
                "auto_fail": [],
            }
        )
        for n in range(10)
    ]
    path = folder / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def run_config(folder, tasks, url):
    doc = {
        "run": {"name": "start", "dataset": str(tasks), "max_attempts": 1},
        "providers": [{"name": "fake", "type": "OPENAI", "base_url": url}],
        "judge": {"provider": "fake", "model": "judge"},
        "targets": [{"provider": "fake", "model": "m1"}],
    }
    path = folder / "llmbench.yml"
    path.write_text(yaml.safe_dump(doc))
    return path


def finished_run(config, env):
    """The id of a 10-task run made (and finished) first, for `show`."""
    subprocess.run(
        [sys.executable, "-m", "app.cli", "run", "-c", str(config), "-q"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "runs", "--json", "--limit", "1"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout)["runId"]


def copied(path, to):
    """`to`, a copy of the SQLite database `path` (through SQLite's backup: its WAL too)."""
    with sqlite3.connect(path) as source, sqlite3.connect(to) as target:
        source.backup(target)
    return str(to)


def imported(args, env, src):
    """(how many modules the command imported, the heavy ones among them)."""
    code = (
        "import json, sys\nfrom app.cli import main\n"
        f"try:\n    main({args!r}, prog_name='llmbench')\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=src, env=env, capture_output=True, text=True
    )
    modules = json.loads(done.stderr.strip().splitlines()[-1])
    return len(modules), sorted({m.split(".")[0] for m in modules} & set(HEAVY))


def import_seconds(args, env, src):
    """The sum of the self times `python -X importtime` reports for one command (s)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "app.cli", *args],
        cwd=src,
        env={**env, "PYTHONPATH": str(src)},
        capture_output=True,
        text=True,
    )
    micros = 0
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            micros += int(line[len("import time:") :].split("|")[0])
    return micros / 1e6


def timed(args, env, src, label):
    """(wall s, CPU s) of one command in a child process, run from the source tree src."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=src,
        env={**env, "PYTHONPATH": str(src)},
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"{label} ({src}) exited {done.returncode}:\n{done.stderr[-2000:]}")
    wall = time.perf_counter() - started
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--against",
        type=Path,
        help="another source tree (e.g. an export of main), timed in turn with this one, run "
        "by run: a busy machine's load drifts, and both see the same drift",
    )
    options = parser.parse_args()
    sources = [ROOT, *([options.against.resolve()] if options.against else [])]
    for src in sources:
        compileall.compile_dir(src / "app", quiet=1)
    tmp = Path(tempfile.mkdtemp(prefix="llmbench-cli-start-"))
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "LLMBENCH_DB": str(tmp / "cli.db"),
        "LLMBENCH_MASTER_KEY_BASE64": base64.b64encode(b"b" * 32).decode(),
    }
    fake = fakeserver.FakeServer().start()
    fake.models = ["judge", "m1"]
    fake.responder = lambda call: (
        {"text": '{"score": 80, "reason": "fake"}', "latency": 0}
        if isinstance(call["body"], dict) and call["body"].get("model") == "judge"
        else None
    )
    tasks = tasks_file(tmp)
    kept = {**env, "LLMBENCH_DB": str(tmp / "kept.db")}
    subprocess.run(
        [sys.executable, "-m", "app.cli", "reset-defaults"], cwd=ROOT, env=kept, check=True
    )
    config = run_config(tmp, tasks, fake.url)
    shown = finished_run(config, kept)
    # Each source shows the run from its own copy of the database: the figures one keeps are
    # under its code's stamp, and the other's would work them out again every time.
    showing = {
        src: {**kept, "LLMBENCH_DB": copied(tmp / "kept.db", tmp / f"show-{n}.db")}
        for n, src in enumerate(sources)
    }
    commands = {
        "--version": (["--version"], env),
        "--help": (["--help"], env),
        "validate (10 tasks, no database yet)": (["validate", str(tasks)], env),
        "validate (10 tasks)": (["validate", str(tasks)], kept),
        "run (10 tasks, instant fake)": (["run", "-c", str(config), "-q"], kept),
        "runs": (["runs"], kept),
        "show (a finished 10-task run)": (["show", shown], showing),
    }
    print(f"sources: {', '.join(map(str, sources))}\nload average at start: {os.getloadavg()}")
    subprocess.run([sys.executable, "-m", "app.cli", "--version"], cwd=ROOT, env=env, check=True)
    print(
        "| command | source | wall s (median) | CPU s (median) | importtime s (median) | modules "
        "| heavy modules imported |\n|---|---|---|---|---|---|---|"
    )
    for label, (args, env) in commands.items():
        times = {src: [] for src in sources}
        imports = {src: [] for src in sources}
        envs = {src: env.get(src, env) for src in sources}  # (per source, or one for all)
        for _ in range(options.runs):
            for src in sources:
                times[src].append(timed(args, envs[src], src, label))
                imports[src].append(import_seconds(args, envs[src], src))
        for src in sources:
            env = envs[src]
            wall = statistics.median(t for t, _ in times[src])
            cpu = statistics.median(c for _, c in times[src])
            count, heavy = imported(args, {**env, "PYTHONPATH": str(src)}, src)
            own = statistics.median(imports[src])
            print(
                f"| {label} | {src.name} | {wall:.3f} | {cpu:.3f} | {own:.3f} | {count} "
                f"| {', '.join(heavy) or 'none'} |",
                flush=True,
            )
    fake.stop()
    print(f"load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
