"""Per-answer timing from the wire adapters next to the paced server's own log of the same
requests: TTFT (first token on any channel), first answer token, ITL mean/p50/p99 and decode
tok/s, the median over `--requests` requests one after another (concurrency 1), both wire
formats (OpenAI SSE, Ollama NDJSON), two scenarios:

  plain       TTFT 150 ms, then 64 answer tokens 20 ms apart
  reasoning   TTFT 150 ms, then 32 reasoning tokens and 32 answer tokens, 20 ms apart

The server sends no timings of its own here, so tok/s is the adapter's own stream measurement
(stream.timing) over every generated token. "server" is the server's log: received -> first
token sent, the gaps between its sends, (n - 1) / (last sent - first sent).

    .venv/bin/python bench/bench_wire_timing.py [--requests 20]
"""

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.latency import gaps
from app.latency import summary
from app.providers.interface import ProviderConfig
from app.providers.ollama import OllamaAdapter
from app.providers.openai import OpenAIAdapter
from tests.pacedserver import PacedServer

SCENARIOS = {
    "plain": {"ttft": 0.15, "tokens": 64, "itl": 0.02},
    "reasoning": {"ttft": 0.15, "tokens": 32, "reasoning_tokens": 32, "itl": 0.02},
}
ADAPTERS = {"openai": OpenAIAdapter, "ollama": OllamaAdapter}
HI = [{"role": "user", "content": "hi"}]
FIGURES = ("TTFT ms", "first answer ms", "ITL mean ms", "ITL p50 ms", "ITL p99 ms", "tok/s")


def ours(completion):
    itl = completion.itl or {}
    return {
        "TTFT ms": completion.ttft_ms,
        "first answer ms": completion.first_answer_ms,
        "ITL mean ms": itl.get("mean"),
        "ITL p50 ms": itl.get("p50"),
        "ITL p99 ms": itl.get("p99"),
        "tok/s": completion.tokens_per_second,
    }


def served(entry):
    sent = entry["sent"]
    itl = summary(gaps(sent)) or {}
    first_answer = sent[entry["channels"].index("answer")]
    return {
        "TTFT ms": (sent[0] - entry["received"]) * 1000,
        "first answer ms": (first_answer - entry["received"]) * 1000,
        "ITL mean ms": itl.get("mean"),
        "ITL p50 ms": itl.get("p50"),
        "ITL p99 ms": itl.get("p99"),
        "tok/s": (len(sent) - 1) / (sent[-1] - sent[0]),
    }


def median(rows, figure):
    values = [row[figure] for row in rows if row[figure] is not None]
    return statistics.median(values) if values else None


def run(wire, settings, requests):
    server = PacedServer(**settings, timings=False).start()
    config = ProviderConfig(
        name="paced",
        type=wire.upper(),
        base_url=server.url,
        models_endpoint="",
        inference_endpoint="",
        timeout=60.0,
    )
    adapter = ADAPTERS[wire](config)
    try:
        adapter.chat("paced", HI)  # warm: the connection is open before the measured ones
        completions = [adapter.chat("paced", HI) for _ in range(requests)]
        log = server.logged(requests + 1)[1:]
    finally:
        adapter.close()
        server.stop()
    sources = {c.tps_source for c in completions}
    return [ours(c) for c in completions], [served(e) for e in log], sources


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()
    print(f"median of {args.requests} requests, concurrency 1")
    for name, settings in SCENARIOS.items():
        for wire in ADAPTERS:
            mine, theirs, sources = run(wire, settings, args.requests)
            print(f"\n{name} / {wire}  (tok/s source: {', '.join(sorted(map(str, sources)))})")
            print(f"  {'':18}{'llmbench':>10}{'server':>10}{'diff':>10}")
            for figure in FIGURES:
                a, b = median(mine, figure), median(theirs, figure)
                diff = f"{a - b:+10.2f}" if a is not None and b is not None else f"{'':>10}"
                a = f"{a:10.2f}" if a is not None else f"{'-':>10}"
                b = f"{b:10.2f}" if b is not None else f"{'-':>10}"
                print(f"  {figure:18}{a}{b}{diff}")


if __name__ == "__main__":
    main()
