"""Peak memory of one call whose answer is far past LLMBENCH_MAX_ANSWER_CHARS: a 10 MiB answer,
unstreamed (one JSON body) and streamed as one single event, OpenAI and Ollama wire formats.

The fake server runs in a child process, so only the adapter's own allocations are measured:
tracemalloc's peak during `chat()` (Python objects: bytes read, text decoded, the answer kept),
median over the runs. The answer comes back cut at the cap (1 MiB by default).

    .venv/bin/python bench/bench_big_answer_memory.py [--mib 10] [--runs 5] [--cap 1048576]

Measured (2026-11-27, 2 shared cores, median of 5, cap 1 MiB): a 10 MiB unstreamed answer
peaks at 11.0 MiB (OpenAI and Ollama; the 8 MiB + 64 KiB read cap, then the 1 MiB answer
decoded from it), one 10 MiB stream event at 6.5 MiB (the 4 MiB + 64 KiB line cap); both
answers come back cut at exactly 1 048 576 characters. Before, the same calls failed the item
("larger than 8256 KiB" / "stream line longer than 4160 KiB") at 9.0 and 8.2 MiB.
"""

import argparse
import statistics
import subprocess
import sys
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.providers.interface import ProviderConfig
from app.providers.interface import ProviderError
from app.providers.ollama import OllamaAdapter
from app.providers.openai import OpenAIAdapter

SERVER = """
import sys, threading
sys.path.insert(0, {root!r})
from tests.fakeserver import FakeServer
server = FakeServer().start()
text = "x" * {size}
server.responder = lambda call: {{"chunks": [text]}}
print(server.url, flush=True)
sys.stdin.read()  # until the parent closes it
server.stop()
"""
KINDS = {
    "OPENAI": (OpenAIAdapter, ("/v1/models", "/v1/chat/completions")),
    "OLLAMA": (OllamaAdapter, ("/api/tags", "/api/chat")),
}


def measure(url, kind, stream, cap):
    """(peak MiB during one chat call, what came back) for a fresh adapter."""
    cls, endpoints = KINDS[kind]
    adapter = cls(ProviderConfig("b", kind, url, *endpoints, timeout=60.0, max_answer_chars=cap))
    tracemalloc.start()
    try:
        result = adapter.chat("m", [{"role": "user", "content": "hi"}], stream=stream)
        outcome = f"answer {len(result.text)} chars cut={result.answer_cut}"
    except ProviderError as exc:  # what main did before big answers were cut
        outcome = f"FAILED: {exc.message[:60]}"
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    adapter.close()
    return peak / 2**20, outcome


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=10, help="answer size in MiB")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cap", type=int, default=1024 * 1024, help="max answer chars")
    args = parser.parse_args()
    child = subprocess.Popen(
        [sys.executable, "-c", SERVER.format(root=str(ROOT), size=args.mib * 2**20)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = child.stdout.readline().strip()
        print(f"answer {args.mib} MiB, cap {args.cap} chars, median of {args.runs} runs")
        for kind in KINDS:
            for stream in (False, True):
                runs = [measure(url, kind, stream, args.cap) for _ in range(args.runs)]
                peak = statistics.median(r[0] for r in runs)
                shape = "one stream event" if stream else "unstreamed body "
                print(f"{kind:6} {shape}: peak {peak:6.1f} MiB  {runs[-1][1]}")
    finally:
        child.stdin.close()
        child.wait(timeout=10)


if __name__ == "__main__":
    main()
