"""The environment's proxy settings hold for adapters (read once per adapter, not per call)."""

import pytest

from app.providers.interface import ProviderConfig
from app.providers.openai import OpenAIAdapter

HI = [{"role": "user", "content": "hi"}]


def make(base_url):
    return OpenAIAdapter(
        ProviderConfig(
            name="t",
            type="OPENAI",
            base_url=base_url,
            models_endpoint="/v1/models",
            inference_endpoint="/v1/chat/completions",
            headers={},
            timeout=5.0,
        )
    )


@pytest.fixture
def proxy_env(monkeypatch):
    """Sets HTTP_PROXY and NO_PROXY (both spellings), with nothing else from the machine."""
    for name in ("all_proxy", "https_proxy", "http_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)

    def set_env(proxy, no_proxy=None):
        for name in ("http_proxy", "HTTP_PROXY"):
            monkeypatch.setenv(name, proxy)
        if no_proxy is not None:
            for name in ("no_proxy", "NO_PROXY"):
                monkeypatch.setenv(name, no_proxy)

    return set_env


def test_calls_go_through_the_environments_http_proxy(fake, proxy_env):
    proxy_env(fake.url)  # the fake answers a proxied request line like any other
    adapter = make("http://llm.invalid:8000")
    try:
        fake.enqueue("via the proxy")
        assert adapter.chat("m", HI).text == "via the proxy"
    finally:
        adapter.close()
    assert fake.calls[-1]["headers"]["Host"] == "llm.invalid:8000"


def test_a_host_in_no_proxy_is_called_directly(fake, proxy_env):
    proxy_env("http://127.0.0.1:9", no_proxy="127.0.0.1,localhost")  # port 9: nothing listens
    adapter = make(fake.url)
    try:
        fake.enqueue("direct")
        assert adapter.chat("m", HI).text == "direct"
    finally:
        adapter.close()
