"""Asking a provider's server: the adapter for one of its calls (secret headers decrypted),
any unexpected failure as a ProviderError a person can read, and the models it lists (kept
briefly by the store, providers.py)."""

import logging
import time

from .. import crypto
from ..providers.interface import ProviderError
from ..providers.redaction import redact
from ..providers.registry import get_adapter
from .providers import get_provider
from .providers import keep_models
from .providers import kept_models
from .providers import provider_config

log = logging.getLogger(__name__)


def adapter_for(provider, timeout=None):
    """(its ProviderConfig, an adapter) for a call to the provider's server; `timeout`
    (seconds) caps the provider's own."""
    try:
        config = provider_config(provider)
    except crypto.KeyError_ as exc:
        raise ProviderError(
            f"{provider.name}: {exc.message}", transient=False, kind="client"
        ) from exc
    if timeout is not None:
        config.timeout = min(float(config.timeout or timeout), float(timeout))
    return config, get_adapter(config)


def call_adapter(provider, config, fn):
    """Run an adapter call; anything unexpected becomes a ProviderError a person can read."""
    try:
        return fn()
    except ProviderError:
        raise  # its message is already redacted (HttpAdapter.error)
    except Exception as exc:  # a bug or an answer nobody expected: still no 500 for the user
        log.warning("provider %s: unexpected %s", provider.name, type(exc).__name__)
        raise ProviderError(
            f"{provider.name}: the server's answer could not be understood "
            f"({type(exc).__name__}: {redact(str(exc), config.headers.values())[:200]})",
            transient=False,
            kind="malformed",
        ) from exc


def close_adapter(adapter):
    close = getattr(adapter, "close", None)
    if close is not None:
        close()


def _masked_model(adapter, model):
    """One model dict with every string in it masked (an adapter without a mask: as is)."""
    redact_data = getattr(adapter, "redact_data", None)
    return redact_data(model) if redact_data else model


def list_models(provider_id, refresh=False, timeout=None):
    """Model dicts ({"id", ...}) from the server; cached briefly. Raises ProviderError.

    `timeout` (seconds) caps the provider's own timeout for this call.
    """
    provider = get_provider(provider_id)
    now = time.monotonic()
    kept = None if refresh else kept_models(provider, now)
    if kept is not None:
        return kept
    config, adapter = adapter_for(provider, timeout)
    try:
        models = call_adapter(provider, config, adapter.list_models)
        # A server may echo the request's headers as model ids: masked before they are
        # cached, listed, offered in the model picker or checked against.
        models = [_masked_model(adapter, m) for m in models]
    finally:
        close_adapter(adapter)
    models = sorted((m for m in models if m.get("id")), key=lambda m: str(m["id"]).lower())
    keep_models(provider, now, models)
    return list(models)
