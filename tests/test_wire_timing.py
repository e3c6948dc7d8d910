"""What the adapters measure per streamed answer, against the paced server over real HTTP:
first token on any channel, first answer token, last token, the gaps between token events, and
a decode rate over every generated token. The server's own log of the same request is the
truth; asserts compare structure and causality (a client cannot get a token before it is
sent), never how fast this machine is."""

import pytest

from app.providers.base import stream_rate
from app.providers.interface import ProviderConfig
from app.providers.ollama import OllamaAdapter
from app.providers.openai import OpenAIAdapter
from tests.pacedserver import PacedServer

HI = [{"role": "user", "content": "hi"}]
ADAPTERS = {"openai": OpenAIAdapter, "ollama": OllamaAdapter}
WIRES = ["openai", "ollama"]


def adapter_for(server, wire):
    config = ProviderConfig(
        name="paced",
        type=wire.upper(),
        base_url=server.url,
        models_endpoint="",
        inference_endpoint="",
        timeout=30.0,
    )
    return ADAPTERS[wire](config)


@pytest.fixture
def ask():
    """ask(wire, stream=True, **server settings) -> (Completion, the server's log entry)."""
    opened = []

    def ask(wire, stream=True, **settings):
        server = PacedServer(**{"ttft": 0.0, "itl": 0.002, **settings}).start()
        adapter = adapter_for(server, wire)
        opened.append((server, adapter))
        completion = adapter.chat("paced", HI, stream=stream)
        return completion, server.logged(1)[0]

    yield ask
    for server, adapter in opened:
        adapter.close()
        server.stop()


def served_ms(entry, at):
    """ms from the server receiving the request to `at` (a perf_counter instant in its log)."""
    return (at - entry["received"]) * 1000


@pytest.mark.parametrize("wire", WIRES)
def test_ttft_is_the_first_reasoning_token_and_the_answer_starts_after_it(ask, wire):
    completion, entry = ask(wire, reasoning_tokens=4, tokens=4, itl=0.005)
    first_answer_sent = entry["sent"][entry["channels"].index("answer")]
    # The first answer token is the fifth token event: four reasoning gaps after the first.
    assert completion.first_answer_ms == pytest.approx(
        completion.ttft_ms + sum(completion.gaps_ms[:4]), abs=1e-6
    )
    assert completion.ttft_ms <= completion.first_answer_ms <= completion.last_token_ms
    # A token cannot arrive before the server sent it.
    assert completion.ttft_ms >= served_ms(entry, entry["first_sent"])
    assert completion.first_answer_ms >= served_ms(entry, first_answer_sent)
    assert completion.last_token_ms >= served_ms(entry, entry["last_sent"])


@pytest.mark.parametrize("wire", WIRES)
def test_the_reasoning_is_kept_apart_from_the_answer(ask, wire):
    completion, _ = ask(wire, reasoning_tokens=3, tokens=2)
    assert completion.text == "t0 t1 "
    assert completion.reasoning_text == "r0 r1 r2 "
    assert completion.reasoning_tokens == 3
    assert completion.completion_tokens == 5


@pytest.mark.parametrize("wire", WIRES)
def test_the_stream_rate_counts_reasoning_and_answer_tokens_over_the_whole_window(ask, wire):
    completion, entry = ask(wire, reasoning_tokens=16, tokens=16, itl=0.02, timings=False)
    window_s = (completion.last_token_ms - completion.ttft_ms) / 1000
    assert completion.tps_source == "stream.timing"
    assert completion.tokens_per_second == pytest.approx(31 / window_s)
    # The server's own rate over the same tokens; only the answer's window would give twice it.
    served = 31 / (entry["last_sent"] - entry["first_sent"])
    assert served / 1.5 < completion.tokens_per_second < served * 1.5


@pytest.mark.parametrize(
    ("wire", "source"), [("openai", "llamacpp.timings"), ("ollama", "ollama.eval")]
)
def test_the_servers_own_decode_rate_is_kept_when_it_gives_one(ask, wire, source):
    completion, _ = ask(wire, reasoning_tokens=4, tokens=12, itl=0.005)
    assert completion.tps_source == source
    assert completion.chunks == 16  # the stream is timed all the same


@pytest.mark.parametrize("wire", WIRES)
def test_a_one_chunk_stream_has_no_inter_token_latency(ask, wire):
    completion, _ = ask(wire, tokens=20, one_chunk=True, ttft=0.01)
    assert completion.chunks == 1
    assert completion.gaps_ms == []
    assert completion.itl is None
    assert completion.ttft_ms == completion.first_answer_ms == completion.last_token_ms


@pytest.mark.parametrize("wire", WIRES)
def test_one_gap_between_each_two_token_events_and_none_for_the_role_or_usage(ask, wire):
    completion, entry = ask(wire, reasoning_tokens=2, tokens=10)
    assert completion.chunks == len(entry["sent"]) == 12
    assert len(completion.gaps_ms) == completion.chunks - 1
    assert set(completion.itl) == {"mean", "p50", "p90", "p99", "max"}


@pytest.mark.parametrize("wire", WIRES)
def test_the_mean_gap_matches_the_servers_log_of_the_same_request(ask, wire):
    completion, entry = ask(wire, tokens=21, itl=0.02)
    sent = entry["sent"]
    served_mean_ms = (sent[-1] - sent[0]) * 1000 / (len(sent) - 1)
    # The two means differ by the network delay of the last token minus the first's over 20
    # gaps: off by half a gap would take 200 ms of delay on the loopback.
    assert completion.itl["mean"] == pytest.approx(served_mean_ms, abs=10.0)


@pytest.mark.parametrize("wire", WIRES)
def test_the_wall_clock_send_time_comes_before_the_server_receives_it(ask, wire):
    completion, entry = ask(wire, tokens=2)
    assert completion.sent_at is not None
    assert completion.sent_at <= entry["received_wall"]


@pytest.mark.parametrize("wire", WIRES)
def test_an_unstreamed_answer_has_no_token_timing_but_keeps_its_reasoning(ask, wire):
    completion, _ = ask(wire, stream=False, reasoning_tokens=2, tokens=3)
    assert completion.text == "t0 t1 t2 "
    assert completion.reasoning_text == "r0 r1 "
    assert completion.ttft_ms is None and completion.first_answer_ms is None
    assert completion.gaps_ms == [] and completion.itl is None
    assert completion.sent_at is not None


@pytest.mark.parametrize("wire", WIRES)
def test_a_tool_call_is_the_answer_so_its_first_piece_is_the_first_answer_token(fake, wire):
    fake.enqueue(tool_calls=[{"name": "get_weather", "arguments": {"city": "Paris"}}])
    adapter = adapter_for(fake, wire)
    try:
        completion = adapter.chat("m", HI)
    finally:
        adapter.close()
    assert completion.tool_calls
    assert completion.first_answer_ms == completion.ttft_ms


def test_reasoning_counted_but_never_streamed_is_left_out_of_the_stream_rate(ask):
    completion, entry = ask(
        "openai", reasoning_tokens=16, tokens=16, itl=0.02, timings=False, show_reasoning=False
    )
    assert completion.reasoning_tokens == 16 and completion.reasoning_text is None
    assert completion.chunks == 16
    window_ms = completion.last_token_ms - completion.ttft_ms
    # The 16 streamed tokens over the window this client saw, not 32. On a busy machine the
    # client may read the whole stream at once (a window too short to measure: no rate).
    expected = stream_rate(16, window_ms)
    assert completion.tokens_per_second == (expected and pytest.approx(expected))
    if expected is not None:
        served = 15 / (entry["last_sent"] - entry["first_sent"])
        assert served / 1.5 < completion.tokens_per_second < served * 1.5
