"""llmbench's speed figures beside a real load tester's, on the same paced server (issue 29).

The paced server (tests/pacedserver.py: OpenAI SSE, TTFT 150 ms, 64 tokens 20 ms apart, 8
slots, usage in the last event) is the truth: its own log says when each request came in and
when each token went out. For each concurrency (1 and 8) a fresh server answers, in turn:

  llmbench  a real run through the engine (a provider row pointing at the server, N tasks with
            a check so no judge is needed, the run's concurrency 1 or 8, run_foreground); the
            figures come from the items (ttft_ms, time_taken_ms, tokens_generated, answered_at,
            sent_ts and itl_hist when the engine stores them);
  peers     NVIDIA aiperf and/or guidellm at the same concurrency and request count, each on
            a fresh server, their own JSON figures.

and prints figure | truth | llmbench | then per peer: its figure, llmbench vs it (%), and the
truth of its own requests (different requests from ours: the server's log says what the peer's
load really was, so a peer's client overhead shows as peer minus its truth).

Install a peer in a throwaway venv OUTSIDE the repository (never a dependency of llmbench):

    python3 -m venv /tmp/peer-venv && /tmp/peer-venv/bin/pip install aiperf      # 0.13.0
    python3 -m venv /tmp/peer-venv-g && /tmp/peer-venv-g/bin/pip install guidellm  # 0.8.1; 6 GB
    .venv/bin/python bench/peer_speed.py --peer /tmp/peer-venv/bin/aiperf \
        [--peer /tmp/peer-venv-g/bin/guidellm] [--requests 16 48]

Both want a Hugging Face tokenizer (aiperf's "builtin" one downloads tiktoken's file); no such
host is reachable offline, so this script writes a whitespace word-level tokenizer into a
temporary folder with the peer venv's own `tokenizers`/`transformers` and passes it (aiperf
--tokenizer with --use-server-token-count; guidellm --tokenizer kind=hf_auto,model=PATH).
Output tokens are the server's usage (64 a request) for all three.

Where the engine does not yet store itl_hist / sent_ts (on a branch before that change), the
ITL comes from the very Completions the engine's adapter returned during the run (this script
wraps OpenAIAdapter.chat to keep their gaps_ms and sent_at), and the output says so.

Reading it: on a busy 2-core machine aiperf's own processes (a controller, workers, record
processors over ZMQ) can send requests late, so its "in flight" falls below the concurrency and
its tok/s and req/s with it; its truth column falls the same way, so that is a lighter load, not
a different measurement. A peer's TTFT above its truth is its client's own delay.
"""

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app import latency
from app.db import connection as db
from app.db import migrations
from app.db.models import COMPLETED
from app.db.models import Collection
from app.db.models import CollectionTask
from app.db.models import Item
from app.db.models import Provider
from app.db.models import Task
from app.engine.foreground import run_foreground
from app.providers.openai import OpenAIAdapter
from app.runs.lifecycle import create_run
from tests.pacedserver import PacedServer

TTFT_S, TOKENS, ITL_S, SLOTS = 0.15, 64, 0.02, 8
MAX_REQUESTS = 200  # bounded: a person's typo must not start a ten-minute run
CONFIG = {
    "LEASE_SECONDS": 15.0,
    "MAX_ATTEMPTS": 3,
    "BACKOFF_BASE_SECONDS": 2.0,
    "BACKOFF_MAX_SECONDS": 60.0,
    "MAX_RETRY_SECONDS": 900.0,
}
FIGURES = [
    ("TTFT p50 (ms)", "ttft_p50"),
    ("TTFT mean (ms)", "ttft_mean"),
    ("ITL mean (ms)", "itl_mean"),
    ("ITL p50 (ms)", "itl_p50"),
    ("latency p50 (ms)", "e2e_p50"),
    ("output tok/s", "tok_s"),
    ("requests/s", "req_s"),
    ("in flight (mean)", "in_flight"),
]

# ---- what the engine's adapter saw (only where the items do not keep it yet) ------------------
SEEN = []
_chat = OpenAIAdapter.chat


def _seen_chat(self, *args, **kwargs):
    completion = _chat(self, *args, **kwargs)
    if kwargs.get("stream", True):
        SEEN.append(completion)
    return completion


OpenAIAdapter.chat = _seen_chat


# ---- truth ------------------------------------------------------------------------------------
def truth(server, n):
    """The server's own figures for the last n streamed requests it finished."""
    deadline = time.monotonic() + 30  # the client may read the last byte before the log entry
    while True:
        log = [e for e in list(server.log) if "whole" not in e["channels"] and e["completed"]]
        if len(log) >= n or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    log = sorted(log, key=lambda e: e["received"])[-n:]
    ttfts = sorted((e["first_sent"] - e["received"]) * 1000 for e in log)
    gaps = sorted(g for e in log for g in latency.gaps(e["sent"]))
    e2e = sorted((e["last_sent"] - e["received"]) * 1000 for e in log)
    window = max(e["last_sent"] for e in log) - min(e["received"] for e in log)
    return {
        "ttft_p50": latency.percentile(ttfts, 0.5),
        "ttft_mean": statistics.fmean(ttfts),
        "itl_mean": statistics.fmean(gaps) if gaps else None,
        "itl_p50": latency.percentile(gaps, 0.5),
        "e2e_p50": latency.percentile(e2e, 0.5),
        "tok_s": sum(len(e["sent"]) for e in log) / window,
        "req_s": len(log) / window,
        "in_flight": sum(e["last_sent"] - e["received"] for e in log) / window,
        "in_service_max": max(e["in_service"] for e in log),
    }


# ---- llmbench ---------------------------------------------------------------------------------
def _run_db(folder, url, n, concurrency):
    migrations.open_db(str(Path(folder) / "peer.db"))
    db.database.connect(reuse_if_open=True)
    provider = Provider.create(
        name="paced",
        type="OPENAI",
        base_url=url,
        models_endpoint="/v1/models",
        inference_endpoint="/v1/chat/completions",
        timeout_seconds=60,
        max_concurrency=concurrency,
    )
    coll = Collection.create(name="speed")
    checks = [{"type": "icontains", "value": "t0"}]  # the paced answer is "t0 t1 ... t63"
    for i in range(n):
        task = Task.create(
            task_id=f"s{i}",
            category="speed",
            question=f"Question {i}?",
            excellent="e",
            good="g",
            pass_answer="p",
            incorrect_direction="x",
            checks=checks,
        )
        CollectionTask.create(collection=coll, task=task)
    return create_run(
        {
            "targets": [{"providerId": provider.id, "model": "paced"}],
            "collectionIds": [coll.id],
            "concurrency": concurrency,
        },
        source="cli",
    )


def llmbench(url, n, concurrency):
    """One real run through the engine; our figures from its items."""
    SEEN.clear()
    with tempfile.TemporaryDirectory() as folder:
        run = _run_db(folder, url, n, concurrency)
        state = run_foreground(run.run_id, CONFIG, holder="peer-speed")
        items = list(Item.select().where(Item.status == COMPLETED))
        db.database.close()
    if state != "finished" or len(items) != n:
        raise SystemExit(f"llmbench run {state}, {len(items)} of {n} items done")
    epoch = dt.datetime(1970, 1, 1)
    ends = [(i.answered_at - epoch).total_seconds() for i in items]
    stored_sent = all(i.sent_ts is not None for i in items)
    starts = [
        i.sent_ts if stored_sent else end - i.time_taken_ms / 1000
        for i, end in zip(items, ends, strict=True)
    ]
    stored_itl = any(i.itl_hist for i in items)
    if stored_itl:
        hist = latency.merge([latency.unpack(i.itl_hist) for i in items])
        itl = latency.histogram_summary(hist) or {}
        itl_source = "itl_hist"
    else:
        itl = latency.summary([g for c in SEEN for g in c.gaps_ms]) or {}
        itl_source = "adapter gaps_ms"
    ttfts = sorted(i.ttft_ms for i in items)
    window = max(ends) - min(starts)
    return {
        "ttft_p50": latency.percentile(ttfts, 0.5),
        "ttft_mean": statistics.fmean(ttfts),
        "itl_mean": itl.get("mean"),
        "itl_p50": itl.get("p50"),
        "e2e_p50": latency.percentile(sorted(i.time_taken_ms for i in items), 0.5),
        "tok_s": sum(i.tokens_generated or 0 for i in items) / window,
        "req_s": len(items) / window,
        "in_flight": sum(i.time_taken_ms for i in items) / 1000 / window,
        "sources": f"ITL from {itl_source}; window from "
        + ("sent_ts" if stored_sent else "answered_at - time_taken_ms"),
    }


# ---- the peer ---------------------------------------------------------------------------------
TOKENIZER = """
import sys
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast
vocab = {"[UNK]": 0, "[PAD]": 1}
for word in [f"{c}{i}" for c in "tr" for i in range(4096)]:
    vocab[word] = len(vocab)
tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
tok.pre_tokenizer = pre_tokenizers.Whitespace()
PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]").save_pretrained(
    sys.argv[1]
)
"""


def local_tokenizer(peer, folder):
    """A whitespace word-level tokenizer made with the peer venv's own libraries (no download)."""
    path = Path(folder) / f"tokenizer-{Path(peer).name}"
    python = Path(peer).parent / "python"
    subprocess.run([str(python), "-c", TOKENIZER, str(path)], check=True, capture_output=True)
    return path


def aiperf(peer, url, n, concurrency, folder, tokenizer):
    """aiperf profile at this concurrency and request count; its own figures from its JSON."""
    out = Path(folder) / f"aiperf-c{concurrency}"
    command = [
        str(peer),
        "profile",
        "--model",
        "paced",
        "--url",
        url,
        "--endpoint-type",
        "chat",
        "--streaming",
        "--concurrency",
        str(concurrency),
        "--request-count",
        str(n),
        "--warmup-request-count",
        "1",  # as llmbench's one warm-up call: a connection and a loaded model before timing
        "--isl",
        "12",
        "--tokenizer",
        str(tokenizer),
        "--use-server-token-count",
        "--api-key",
        "dummy",
        "--artifact-dir",
        str(out),
        "--ui-type",
        "none",
    ]
    env = {**os.environ, "NO_COLOR": "1"}  # not HF_HUB_OFFLINE: aiperf 0.13 then refuses a path
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    path = out / "profile_export_aiperf.json"
    if done.returncode or not path.exists():
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"aiperf failed (exit {done.returncode})")
    data = json.loads(path.read_text())
    # Its ITL per request is (latency - TTFT) / (tokens - 1); the gaps themselves are in the
    # per-request export as inter_chunk_latency, which gives a p50 over gaps like ours.
    gaps = []
    for line in (out / "profile_export.jsonl").read_text().splitlines():
        record = json.loads(line)
        chunks = record.get("metrics", {}).get("inter_chunk_latency", {}).get("value") or []
        gaps.extend(chunks)
    return {
        "ttft_p50": data["time_to_first_token"]["p50"],
        "ttft_mean": data["time_to_first_token"]["avg"],
        "itl_mean": data["inter_token_latency"]["avg"],
        "itl_p50": data["inter_token_latency"]["p50"],
        "e2e_p50": data["request_latency"]["p50"],
        "tok_s": data["output_token_throughput"]["avg"],
        "req_s": data["request_throughput"]["avg"],
        "in_flight": data.get("effective_concurrency", {}).get("avg"),
        "count": data["request_count"]["avg"],
        "chunk_gap_p50": latency.percentile(sorted(gaps), 0.5),
    }


def guidellm(peer, url, n, concurrency, folder, tokenizer):
    """guidellm run, concurrent profile at this concurrency, n requests; its own JSON figures."""
    out = Path(folder) / f"guidellm-c{concurrency}.json"
    command = [
        str(peer),
        "run",
        "--backend",
        f"kind=openai_http,target={url},model=paced,api_key=dummy",
        "--profile",
        f"kind=concurrent,streams={concurrency}",
        "--constraint",
        f"kind=max_requests,count={n}",
        "--tokenizer",
        f"kind=hf_auto,model={tokenizer}",
        "--data",
        f"kind=synthetic_text,prompt_tokens=12,output_tokens={TOKENS}",
        "--output",
        f"kind=json,path={out}",
        "--disable-console",
    ]
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    if done.returncode or not out.exists():
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"guidellm failed (exit {done.returncode})")
    metrics = json.loads(out.read_text())["benchmarks"][0]["metrics"]

    def ok(name):
        return metrics[name]["successful"]

    # Its tok/s and req/s "mean" are rates over the benchmark's time (what its table prints).
    return {
        "ttft_p50": ok("time_to_first_token_ms")["median"],
        "ttft_mean": ok("time_to_first_token_ms")["mean"],
        "itl_mean": ok("inter_token_latency_ms")["mean"],
        "itl_p50": ok("inter_token_latency_ms")["median"],
        "e2e_p50": ok("request_latency")["median"] * 1000,
        "tok_s": ok("output_tokens_per_second")["mean"],
        "req_s": ok("requests_per_second")["mean"],
        "in_flight": ok("request_concurrency")["mean"],
    }


PEERS = {"aiperf": aiperf, "guidellm": guidellm}


# ---- the table --------------------------------------------------------------------------------
def _cell(value):
    return f"{'-':>8}" if value is None else f"{value:8.2f}"


def table(concurrency, n, ours, ours_truth, peers):
    """figure | truth | llmbench | per peer: its figure, llmbench vs it, its requests' truth."""
    print(f"\nconcurrency {concurrency}, {n} requests  ({ours['sources']})")
    head = f"{'figure':18} | {'truth':>8} | {'llmbench':>8}"
    for name in peers:
        head += f" | {name:>8} | {'vs ' + name[:5]:>8} | {'its truth':>9}"
    print(head)
    print("-" * len(head))
    for label, key in FIGURES:
        a = ours.get(key)
        row = f"{label:18} | {_cell(ours_truth[key])} | {_cell(a)}"
        for figures, truths in peers.values():
            b = figures.get(key)
            diff = f"{(a - b) / b * 100:+7.1f}%" if a is not None and b else f"{'-':>8}"
            row += f" | {_cell(b)} | {diff} | {_cell(truths[key]):>9}"
        print(row)
    for name, (figures, _) in peers.items():
        if figures.get("chunk_gap_p50") is not None:  # gap-level, as ours and the truth's
            print(f"{name}: p50 of its raw chunk gaps {figures['chunk_gap_p50']:.2f} ms")
    most = [f"{ours_truth['in_service_max']} (llmbench)"]
    most += [f"{t['in_service_max']} ({name})" for name, (_, t) in peers.items()]
    print("server: most requests in service at once " + ", ".join(most))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--peer",
        action="append",
        default=[],
        help="path to an aiperf or guidellm executable; give it twice for both",
    )
    parser.add_argument(
        "--requests", type=int, nargs=2, default=[16, 48], metavar=("C1", "C8"),
        help="requests at concurrency 1 and at 8",
    )  # fmt: skip
    args = parser.parse_args()
    unknown = [p for p in args.peer if Path(p).name not in PEERS]
    if unknown:
        parser.error(f"--peer must be an aiperf or guidellm executable, not {unknown}")
    counts = [min(max(n, 2), MAX_REQUESTS) for n in args.requests]
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (start)")
    with tempfile.TemporaryDirectory() as folder:
        tokenizers = {peer: local_tokenizer(peer, folder) for peer in args.peer}
        for concurrency, n in zip((1, 8), counts, strict=True):
            with PacedServer(ttft=TTFT_S, tokens=TOKENS, itl=ITL_S, slots=SLOTS) as server:
                ours = llmbench(server.url, n, concurrency)
                ours_truth = truth(server, n)
            peers = {}
            for peer in args.peer:
                name = Path(peer).name
                with PacedServer(ttft=TTFT_S, tokens=TOKENS, itl=ITL_S, slots=SLOTS) as server:
                    started = time.perf_counter()
                    measure = PEERS[name]
                    figures = measure(peer, server.url, n, concurrency, folder, tokenizers[peer])
                    peers[name] = (figures, truth(server, n))
                    print(f"({name} at concurrency {concurrency} took "
                          f"{time.perf_counter() - started:.1f} s wall)")  # fmt: skip
            table(concurrency, n, ours, ours_truth, peers)
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (end)")


if __name__ == "__main__":
    main()
