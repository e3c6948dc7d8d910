"""Where the server's memory goes while it shows pages: every page of bench_full_pages' walk,
in-process through the Flask test client, with the Python heap's peak during each page
(tracemalloc), what it still holds after, and the process's RSS.

    .venv/bin/python bench/bench_page_memory.py --db /tmp/pagebench_100k.db --items 100000
    .venv/bin/python bench/bench_page_memory.py --db ... --items ... --top 3   # biggest sites

The database is one bench_full_pages.py seeded (--db, kept); --rounds walks it again (memory
that grows on every round is held, memory that does not is the allocator keeping its peak).
--no-trace leaves tracemalloc off (RSS as the server has it: tracemalloc's own records cost).
"""

import argparse
import ctypes
import gc
import os
import re
import sys
import time
import tracemalloc
from html import unescape
from pathlib import Path

ROOT = Path(os.environ.get("BENCH_SRC") or Path(__file__).resolve().parent.parent)
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(Path(__file__).resolve().parent))

from bench_full_pages import IMAGES  # noqa: E402
from bench_full_pages import NEXT  # noqa: E402
from bench_full_pages import bench_app  # noqa: E402
from bench_full_pages import pages_of  # noqa: E402
from bench_full_pages import seeded  # noqa: E402

LIBC = ctypes.CDLL("libc.so.6")
# The SQLite library _sqlite3 links (dlopen gives the loaded one): its own allocations, which
# tracemalloc does not see (page caches, sorters).
SQLITE = ctypes.CDLL("libsqlite3.so.0")
SQLITE.sqlite3_memory_used.restype = ctypes.c_int64


def rss_mib():
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", status)[1]) / 1024


def urls_of(client, pages):
    for label, url in pages:
        if not isinstance(url, tuple):
            yield label, url
            continue
        kind, source = url
        html = client.get(source).get_data(as_text=True)
        if kind == "next":
            yield label, unescape(NEXT.search(html)[1])
        else:
            for src in dict.fromkeys(IMAGES.findall(html)):
                yield f"img {src.split('/')[-1]}", unescape(src)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--items", type=int, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--top", type=int, default=0, help="allocation sites to show per page")
    parser.add_argument("--no-trace", action="store_true")
    parser.add_argument(
        "--trim", action="store_true", help="also RSS after malloc_trim (what glibc held freed)"
    )
    parser.add_argument("--only", default="", help="comma-separated words: only these pages")
    args = parser.parse_args()
    runs, targets, item = seeded(args.db, args.items, kept=False)
    app = bench_app(args.db)
    client = app.test_client()
    pages = pages_of("", runs, targets, item, args.items)
    only = [w for w in args.only.split(",") if w]
    if only:
        pages = [(label, url) for label, url in pages if any(w in label for w in only)]
    trace = not args.no_trace
    if trace:
        tracemalloc.start(12 if args.top else 1)
    print(f"source {ROOT}; RSS at start {rss_mib():.0f} MiB", flush=True)
    for round_ in range(1, args.rounds + 1):
        print(f"round {round_}")
        for label, url in urls_of(client, pages):
            if trace:
                tracemalloc.reset_peak()
                before = tracemalloc.take_snapshot() if args.top else None
            started = time.perf_counter()
            response = client.get(url)
            size = len(response.get_data())
            response.close()
            ms = (time.perf_counter() - started) * 1000
            gc.collect()
            line = f"  {label:32} {ms:8.0f} ms {size / 1024:7.0f} KiB"
            if trace:
                held, peak = tracemalloc.get_traced_memory()
                line += f"  heap peak {peak / 2**20:6.1f} MiB held {held / 2**20:6.1f} MiB"
            line += f"  sqlite {SQLITE.sqlite3_memory_used() / 2**20:5.1f} MiB"
            line += f"  RSS {rss_mib():5.0f} MiB"
            if args.trim:
                LIBC.malloc_trim(0)
                line += f" (trimmed {rss_mib():5.0f})"
            print(line, flush=True)
            if args.top and round_ == args.rounds:
                after = tracemalloc.take_snapshot()
                for stat in after.compare_to(before, "traceback")[: args.top]:
                    print(f"      +{stat.size_diff / 1024:.0f} KiB {stat.count_diff} blocks")
                    for frame in stat.traceback.format()[-8:]:
                        print(f"        {frame}")


if __name__ == "__main__":
    main()
