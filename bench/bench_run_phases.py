"""Where a big run's peak RSS comes from: `llmbench run` at N calls (bench_first_call.py's run on
the instant fake) with the child's RSS sampled every 10 ms beside the phase its main and run
threads are in (read from their Python stacks: the dataset's check, the run's creation, the
calls, the digest, the warm), so each phase's peak and what it starts from are printed. A
spike shorter than 10 ms is seen only in the whole run's peak (VmHWM).

    .venv/bin/python bench/bench_run_phases.py [--calls 60000] [--runs 1] [--keep DIR]
    BENCH_SRC=/tmp/main .venv/bin/python bench/bench_run_phases.py     # another source tree

--keep DIR keeps the finished run's database (DIR/llmbench.db). The sampler is a thread of the
child: its own cost is a few microseconds per sample. Kept out of the test suite.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
ROOT = Path(os.environ.get("BENCH_SRC") or HERE)
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE / "bench"))

from bench_first_call import KEY  # noqa: E402
from bench_first_call import write_config  # noqa: E402
from bench_overhead import start_fake  # noqa: E402

# Phases by the functions on a thread's stack, the first found from the top of this list.
PHASES = (
    ("warm", "warm_run"),
    ("digest", "digest_run"),
    ("after-digest", "conclude"),
    ("calls", "run_foreground"),
    ("create", "create_run"),
    ("check", "read_plan"),
)
SAMPLER = """
import array, atexit, os, sys, threading, time
_phases = %r
_names_of = [phase for phase, _name in _phases] + ["other"]
# Kept compact (arrays of numbers, not a list of tuples): the log of a long run must not add to
# the peak it measures. Each phase's peak and start are folded in as sampled, nothing else kept.
_peak = array.array("d", [0.0] * len(_names_of))
_start = array.array("d", [-1.0] * len(_names_of))
def _names(frame):
    while frame is not None:
        yield frame.f_code.co_name
        frame = frame.f_back
def _phase():
    seen = set()
    for frame in list(sys._current_frames().values()):
        seen.update(_names(frame))
    for n, (phase, name) in enumerate(_phases):
        if name in seen:
            return n
    return len(_phases)
def _sample():
    status = open('/proc/self/statm')
    page = os.sysconf('SC_PAGE_SIZE') / 1048576
    while True:
        status.seek(0)
        rss = int(status.read().split()[1]) * page
        n = _phase()
        if _start[n] < 0:
            _start[n] = rss
        if rss > _peak[n]:
            _peak[n] = rss
        time.sleep(0.01)
threading.Thread(target=_sample, daemon=True, name='bench-rss').start()
def _write():
    hwm = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]
    with open(os.environ['BENCH_PHASES'], 'w') as out:
        for n, name in enumerate(_names_of):
            if _start[n] >= 0:
                out.write(f'{name} {_start[n]!r} {_peak[n]!r}\\n')
        out.write('hwm ' + hwm + '\\n')
atexit.register(_write)
""" % (PHASES,)  # noqa: UP031


def one_run(fake, tasks, keep=None):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "llmbench.db").unlink(missing_ok=True)
        config = write_config(folder, fake.url, tasks)
        env = {
            **os.environ,
            "LLMBENCH_DB": str(folder / "llmbench.db"),
            "LLMBENCH_MASTER_KEY_BASE64": KEY,
            "PYTHONPATH": str(ROOT),
            "BENCH_PHASES": str(folder / "phases"),
        }
        fake.calls.clear()
        started = time.time()
        done = subprocess.run(
            [sys.executable, "-c", SAMPLER + "from app.cli import main; main()"]
            + ["run", "-c", str(config), "-q"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if done.returncode not in (0, 4):
            raise SystemExit(f"llmbench run exited {done.returncode}:\n{done.stderr[-3000:]}")
        lines = (folder / "phases").read_text().splitlines()
        hwm = int(lines[-1].split()[1]) / 1024
        peaks, starts = {}, {}
        for line in lines[:-1]:
            phase, start, peak = line.split()
            starts[phase], peaks[phase] = float(start), float(peak)
        return hwm, peaks, starts, time.time() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=60000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--keep", help="keep the last run's database in this folder")
    options = parser.parse_args()
    fake = start_fake()
    print(f"source: {ROOT}\nload average at start: {os.getloadavg()}")
    try:
        got = [one_run(fake, options.calls // 4, options.keep) for _ in range(options.runs)]
    finally:
        fake.stop()
    print(f"| phase | RSS at its start MiB | its peak MiB |  ({options.calls} calls)")
    print("|---|---|---|")
    for phase, _name in reversed(PHASES):
        peaks = [p.get(phase) for _h, p, _s, _w in got if phase in p]
        starts = [s.get(phase) for _h, _p, s, _w in got if phase in s]
        if peaks:
            print(f"| {phase} | {statistics.median(starts):.1f} | {statistics.median(peaks):.1f} |")
    hwm = statistics.median(h for h, _p, _s, _w in got)
    wall = statistics.median(w for _h, _p, _s, w in got)
    print(f"peak RSS (VmHWM) {hwm:.1f} MiB, run wall {wall:.1f} s")
    print(f"load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
