"""Every call is bounded, against the real llama.cpp server from ../shared/llm/serve-local-llm
(skipped when it is down): the answer cap cuts and flags a real stream, the total deadline ends
a real generation that would go on, and the real server's own rate is the one recorded."""

import pytest

from app.providers.interface import ProviderError
from tests import real_llm

pytestmark = [pytest.mark.real_llm, pytest.mark.slow]
COUNT = [{"role": "user", "content": "Count from 1 to 300, one number after another."}]


def test_a_real_answer_past_the_cap_is_cut_and_flagged(llm_model):
    client = real_llm.adapter(max_answer_chars=40)
    try:
        result = client.chat(llm_model, COUNT, params={"max_tokens": 200, "ignore_eos": True})
    finally:
        client.close()
    assert result.answer_cut and len(result.text) == 40


def test_a_real_generation_past_the_calls_deadline_ends_there(llm_model):
    client = real_llm.adapter()
    try:
        with pytest.raises(ProviderError) as info:
            # ignore_eos: the model cannot stop early; 1000 tokens take far longer than 0.5 s.
            client.chat(
                llm_model,
                COUNT,
                params={"max_tokens": 1000, "ignore_eos": True, "max_seconds": 0.5},
            )
    finally:
        client.close()
    assert info.value.kind == "deadline" and not info.value.transient


def test_the_real_servers_own_rate_is_recorded(llm_model):
    client = real_llm.adapter()
    try:
        result = client.chat(llm_model, COUNT, params={"max_tokens": 48, "ignore_eos": True})
    finally:
        client.close()
    assert result.tps_source == "llamacpp.timings" and result.tokens_per_second > 0
