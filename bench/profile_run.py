"""Where `llmbench run` spends its CPU per call: py-spy over one run on the instant fake server.

Runs `llmbench run -c config.yml --quiet` (as bench_overhead.py does: N tasks x 2 targets,
each answer judged) in a child under `py-spy record --threads` (idle samples left out), then
prints the functions with the most self time and the most inclusive time, as % of the
non-idle samples. Needs py-spy (`.venv/bin/pip install py-spy`).

    .venv/bin/python bench/profile_run.py [--tasks 1500] [--rate 200] [--top 40]
        [--keep out.txt] [--filter app/] [--gil]
    .venv/bin/python bench/profile_run.py --cprofile [--threads llmbench-worker] [--tasks 3000]

--cprofile: cProfile in each thread whose name starts with --threads (the engine's workers by
default: the per-call path), timed by that thread's own CPU clock (time.thread_time), so a
thread waiting on a lock, a socket or the database costs nothing and SQLite's own work, done
without the GIL, is counted where it is called. Prints those threads' CPU per call and the
functions with the most own and inclusive CPU. cProfile's own cost is in the figures (it
roughly doubles them): read them as shares, and the call counts as they are.

Kept out of the test suite.
"""

import argparse
import collections
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import bench_overhead

ROOT = Path(__file__).resolve().parent.parent


def frames(stack):
    """(function, file:line) per frame of one collapsed stack, thread name first dropped."""
    parts = stack.split(";")
    out = []
    for part in parts[1:]:
        name, _, where = part.partition(" (")
        where = where.rstrip(")")
        file = where.rsplit(":", 1)[0]
        out.append((name, file))
    return out


def short(file):
    for marker in ("site-packages/", "/lib/python3", str(ROOT) + "/"):
        if marker in file:
            return file.split(marker, 1)[1]
    return file


def report(raw, top, only):
    """Print self and inclusive tables of a py-spy raw (collapsed) file."""
    self_time = collections.Counter()
    inclusive = collections.Counter()
    total = 0
    for line in Path(raw).read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        count = int(count)
        total += count
        stack_frames = frames(stack)
        if not stack_frames:
            continue
        name, file = stack_frames[-1]
        self_time[(name, short(file))] += count
        for key in {(n, short(f)) for n, f in stack_frames}:
            inclusive[key] += count
    print(f"{total} non-idle samples\n")
    for title, counter in (("self", self_time), ("inclusive", inclusive)):
        print(f"| {title} % | function | file |\n|---|---|---|")
        shown = 0
        for (name, file), count in counter.most_common():
            if only and only not in file:
                continue
            print(f"| {100.0 * count / total:.1f} | {name} | {file} |")
            shown += 1
            if shown >= top:
                break
        print()


# Every thread named with the prefix BENCH_PROFILE_THREADS runs under a cProfile of its own,
# timed by its own CPU clock; their stats are merged and dumped at exit (BENCH_PROFILE).
CPROFILE = """
import atexit, cProfile, os, threading, time
_profiles = []
_prefix = os.environ['BENCH_PROFILE_THREADS']
_thread_run = threading.Thread.run
def _profiled_run(self):
    if not self.name.startswith(_prefix):
        return _thread_run(self)
    profile = cProfile.Profile(time.thread_time)
    profile.enable()
    try:
        return _thread_run(self)
    finally:
        profile.disable()
        _profiles.append(profile)
threading.Thread.run = _profiled_run
def _dump_profiles():
    import pstats
    if _profiles:
        stats = pstats.Stats(_profiles[0])
        for profile in _profiles[1:]:
            stats.add(profile)
        stats.dump_stats(os.environ['BENCH_PROFILE'])
atexit.register(_dump_profiles)
"""


def cprofile_run(fake, tasks, threads, top):
    """One run with its `threads` under cProfile (CPROFILE); prints their CPU per call and
    the top functions by own and inclusive CPU."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = bench_overhead.write_config(folder, fake, tasks, 4)
        out = folder / "profile.pstats"
        env = {
            **os.environ,
            "LLMBENCH_DB": str(folder / "llmbench.db"),
            "LLMBENCH_MASTER_KEY_BASE64": bench_overhead.KEY,
            "PYTHONPATH": str(ROOT),
            "BENCH_HWM": str(folder / "status"),
            "BENCH_CPU": str(folder / "cpu"),
            "BENCH_PROFILE": str(out),
            "BENCH_PROFILE_THREADS": threads,
        }
        python, flag, code = bench_overhead.llmbench_command(True)
        command = [python, flag, CPROFILE + code, "run", "-c", str(config), "-q"]
        subprocess.run(command, env=env, cwd=ROOT, check=True, capture_output=True)
        stats = pstats.Stats(str(out))
    calls = len(fake.chat_calls())
    total = stats.total_tt
    print(
        f"threads {threads}*: {total:.2f} s CPU under cProfile for {calls} calls, "
        f"{total * 1000 / calls:.3f} ms per call\n"
    )
    rows = [
        (key, cc, nc, tt, ct)
        for key, (cc, nc, tt, ct, _callers) in stats.stats.items()  # type: ignore[attr-defined]
    ]
    for title, index in (("own", 3), ("inclusive", 4)):
        print(f"| {title} % | {title} ms/call | calls/call | function |\n|---|---|---|---|")
        for key, _cc, nc, tt, ct in sorted(rows, key=lambda r: -r[index])[:top]:
            spent = tt if index == 3 else ct
            file, line, name = key
            print(
                f"| {100 * spent / total:.1f} | {spent * 1000 / calls:.4f} | {nc / calls:.2f} "
                f"| {name} {short(file)}:{line} |"
            )
        print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1500)
    parser.add_argument("--rate", type=int, default=200)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--keep", help="also keep py-spy's raw output here")
    parser.add_argument("--filter", help="only functions whose file contains this")
    parser.add_argument("--gil", action="store_true", help="only samples holding the GIL")
    parser.add_argument("--cprofile", action="store_true", help="cProfile by thread CPU time")
    parser.add_argument("--threads", default="llmbench-worker", help="with --cprofile")
    args = parser.parse_args()
    if args.cprofile:
        fake = bench_overhead.start_fake()
        try:
            cprofile_run(fake, args.tasks, args.threads, args.top)
        finally:
            fake.stop()
        return
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    fake = bench_overhead.start_fake()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            config = bench_overhead.write_config(folder, fake, args.tasks, 4)
            raw = args.keep or str(folder / "raw.txt")
            env = {
                **os.environ,
                "LLMBENCH_DB": str(folder / "llmbench.db"),
                "LLMBENCH_MASTER_KEY_BASE64": bench_overhead.KEY,
                "PYTHONPATH": str(ROOT),
                "BENCH_HWM": str(folder / "status"),
                "BENCH_CPU": str(folder / "cpu"),
            }
            command = [
                spy,
                "record",
                "-r",
                str(args.rate),
                "-f",
                "raw",
                "--threads",
                "-o",
                raw,
                *(["--gil"] if args.gil else []),
                "--",
                *bench_overhead.llmbench_command(True),
                "run",
                "-c",
                str(config),
                "-q",
            ]
            subprocess.run(command, env=env, cwd=ROOT, check=False, capture_output=True)
            report(raw, args.top, args.filter)
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
