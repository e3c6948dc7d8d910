"""The real llama.cpp server of ../shared/llm/serve-local-llm, for the `real_llm` tests.

Their fixture `llm_model` (tests/conftest.py) is the id of the model it serves, and skips the
test cleanly when the server is not up:

    def test_something(llm_model):
        client = real_llm.adapter()
        client.chat(llm_model, ...)
"""

import requests

from app.providers.interface import ProviderConfig
from app.providers.registry import get_adapter

BASE_URL = "http://127.0.0.1:18080"
SKIP_REASON = "no local LLM on 127.0.0.1:18080 (run ../shared/llm/serve-local-llm)"


def served_model():
    """The id of the model the server serves, or None when it is not up (asked within 1 s)."""
    try:
        with requests.get(BASE_URL + "/v1/models", timeout=1) as resp:
            return resp.json()["data"][0]["id"]
    except (requests.RequestException, ValueError, KeyError, IndexError, TypeError):
        return None


def adapter(**config):
    """The OpenAI-style adapter on the server (60 s timeout unless `config` says otherwise)."""
    config.setdefault("timeout", 60)
    return get_adapter(
        ProviderConfig(
            name="local",
            type="OPENAI",
            base_url=BASE_URL,
            models_endpoint="/v1/models",
            inference_endpoint="/v1/chat/completions",
            **config,
        )
    )
