"""Providers: storage with encrypted secret headers, DTOs, and the model lists read from their
servers kept briefly (asking a server is provider_models.py, which loads the HTTP adapters:
storing and reading providers, as every command does to mask its output, loads none)."""

import logging
import threading

from .. import crypto
from ..clock import isoformat
from ..clock import utcnow
from ..db.connection import database
from ..db.models import Provider
from ..db.models import ProviderHeader
from ..errors import Conflict
from ..errors import NotFound
from ..errors import ValidationError
from ..providers.interface import ProviderConfig
from ..providers.urls import mask_url
from ..providers.urls import origin
from .provider_fields import clean_provider
from .provider_presets import fix_v1_base_url

log = logging.getLogger(__name__)

MODELS_CACHE_SECONDS = 60.0

# {provider id: (expires at, the provider's updated_at, models)}: model lists a server gave
# (provider_models.list_models); a change to a provider forgets its own.
_models_cache = {}
_cache_lock = threading.Lock()


def _aad(provider_id, key):
    return f"provider:{provider_id}:header:{key}"


def _stored_value(provider_id, header):
    """The plain value a cleaned header row stands for (decrypting a kept secret)."""
    if header["value"] is not None:
        return header["value"]
    old = header["existing"]
    if not old.is_secret:
        return old.value
    try:
        return crypto.decrypt(old.value, _aad(provider_id, old.key))
    except crypto.KeyError_ as exc:
        raise ValidationError.field(
            "headers", f"{old.key}: the stored secret cannot be read; enter the value again"
        ) from exc


def _save_headers(provider, headers):
    plain = [(h["key"], _stored_value(provider.id, h), h["is_secret"]) for h in headers]
    ProviderHeader.delete().where(ProviderHeader.provider == provider.id).execute()
    for key, value, is_secret in plain:
        stored = crypto.encrypt(value, _aad(provider.id, key)) if is_secret else value
        ProviderHeader.create(provider=provider.id, key=key, value=stored, is_secret=is_secret)


def _check_name_free(name, exclude_id=None):
    query = Provider.select().where(Provider.name == name)
    if exclude_id is not None:
        query = query.where(Provider.id != exclude_id)
    if query.exists():
        raise Conflict(f"a provider named {name!r} already exists; choose another name")


def get_provider(provider_id):
    """The provider with this id, or NotFound."""
    provider = Provider.get_or_none(Provider.id == provider_id)
    if provider is None:
        raise NotFound(f"provider {provider_id} not found")
    return provider


def list_providers():
    """All providers, by name."""
    return list(Provider.select().order_by(Provider.name))


def create_provider(data, strict=False):
    """Validate and save a new provider with its headers (secrets encrypted); all or nothing.

    `strict` (JSON input) refuses values of the wrong type instead of converting them.
    """
    values = clean_provider(data, strict=strict)
    note = _fix_v1(values)
    headers = values.pop("headers")
    with database.atomic():
        _check_name_free(values["name"])
        provider = Provider.create(**values)
        _save_headers(provider, headers)
    log.info("provider %s created (%s)", provider.name, provider.type)
    provider.base_url_note = note
    return provider


def _fix_v1(values):
    """Take a doubled /v1 off the cleaned base URL; the note saying so, or None."""
    endpoints = (values.get("models_endpoint"), values.get("inference_endpoint"))
    values["base_url"], note = fix_v1_base_url(values.get("base_url"), endpoints)
    return note


def _clear_moved_secrets(provider, new_url, headers):
    """(headers to save, names cleared): a base URL that now points at another server drops the
    stored secret values that were not entered again, so they are never sent there."""
    if origin(provider.base_url) == origin(new_url):
        return headers, []
    if headers is None:  # not edited: every header stays as it is, unless it is a secret
        headers = [
            {"key": h.key, "value": None, "is_secret": h.is_secret, "existing": h}
            for h in provider.headers.order_by(ProviderHeader.id)
        ]
    kept, cleared = [], []
    for h in headers:
        if h["value"] is None and h["existing"] is not None and h["existing"].is_secret:
            cleared.append(h["key"])
        else:
            kept.append(h)
    return kept, cleared


def update_provider(provider_id, data, strict=False):
    """Validate and save changes; a secret header sent empty keeps its stored value, unless
    the base URL now points at another server (scheme, host or port): then the secret values
    not entered again are cleared (`provider.secrets_cleared` names them)."""
    with database.atomic():
        provider = get_provider(provider_id)
        values = clean_provider(data, current=provider, strict=strict)
        note = _fix_v1(values)
        headers, cleared = _clear_moved_secrets(
            provider, values.get("base_url", provider.base_url), values.pop("headers", None)
        )
        _check_name_free(values["name"], exclude_id=provider.id)
        for field, value in values.items():
            setattr(provider, field, value)
        provider.updated_at = utcnow()
        provider.save()
        if headers is not None:
            _save_headers(provider, headers)
    forget_models(provider.id)
    provider.secrets_cleared = cleared
    provider.base_url_note = note
    log.info("provider %s updated", provider.name)
    if cleared:
        log.info("provider %s moved to another server: secrets cleared", provider.name)
    return provider


def delete_provider(provider_id):
    """Delete a provider and its headers (runs keep its name)."""
    provider = get_provider(provider_id)
    with database.atomic():
        ProviderHeader.delete().where(ProviderHeader.provider == provider.id).execute()
        provider.delete_instance()
    forget_models(provider_id)
    log.info("provider %s deleted", provider.name)


def header_rows(provider):
    """Headers as display dicts: secrets masked, never decrypted into the result."""
    rows = []
    for h in provider.headers.order_by(ProviderHeader.id):
        if h.is_secret:
            try:
                masked = crypto.mask(crypto.decrypt(h.value, _aad(provider.id, h.key)))
                readable = True
            except crypto.KeyError_:
                masked, readable = "****", False
            rows.append(
                {
                    "id": h.id,
                    "key": h.key,
                    "valueMasked": masked,
                    "isSecret": True,
                    "readable": readable,
                }
            )
        else:
            rows.append(
                {
                    "id": h.id,
                    "key": h.key,
                    "valueMasked": h.value,
                    "value": h.value,
                    "isSecret": False,
                    "readable": True,
                }
            )
    return rows


def provider_secrets():
    """Every provider's secret header values, decrypted (for masking only; never show them).
    A value this master key cannot read is left out: it cannot be shown either."""
    secrets = []
    for h in ProviderHeader.select().where(ProviderHeader.is_secret == True):  # noqa: E712
        try:
            secrets.append(crypto.decrypt(h.value, _aad(h.provider_id, h.key)))
        except crypto.KeyError_:
            continue
    return secrets


def provider_to_dict(provider):
    """ProviderDto plus timeoutSeconds and maxConcurrency."""
    headers = header_rows(provider)
    for h in headers:
        h.pop("readable")
    return {
        "id": provider.id,
        "name": provider.name,
        "type": provider.type,
        "baseUrl": provider.base_url,
        # Masked: a row saved before endpoints were checked may carry a key (key=...).
        "modelsEndpoint": mask_url(provider.models_endpoint),
        "inferenceEndpoint": mask_url(provider.inference_endpoint),
        "headers": headers,
        "timeoutSeconds": provider.timeout_seconds,
        "maxConcurrency": provider.max_concurrency,
        "createdAt": isoformat(provider.created_at),
        "updatedAt": isoformat(provider.updated_at),
    }


def provider_config(provider):
    """The adapter's ProviderConfig, secret headers decrypted (never log it)."""
    headers = {}
    for h in provider.headers.order_by(ProviderHeader.id):
        secret = h.is_secret
        headers[h.key] = crypto.decrypt(h.value, _aad(provider.id, h.key)) if secret else h.value
    return ProviderConfig(
        name=provider.name,
        type=provider.type,
        base_url=provider.base_url,
        models_endpoint=provider.models_endpoint,
        inference_endpoint=provider.inference_endpoint,
        headers=headers,
        timeout=provider.timeout_seconds,
        max_concurrency=provider.max_concurrency,
        id=provider.id,
    )


def kept_models(provider, now):
    """The models the provider's server listed less than MODELS_CACHE_SECONDS before `now`
    (time.monotonic()) and since the provider last changed, else None."""
    with _cache_lock:
        hit = _models_cache.get(provider.id)
    if hit and hit[0] > now and hit[1] == provider.updated_at:
        return list(hit[2])
    return None


def keep_models(provider, now, models):
    """Keep the models the provider's server listed at `now` (time.monotonic())."""
    with _cache_lock:
        _models_cache[provider.id] = (now + MODELS_CACHE_SECONDS, provider.updated_at, models)


def forget_models(provider_id=None):
    """Drop kept model lists (one provider, or all)."""
    with _cache_lock:
        if provider_id is None:
            _models_cache.clear()
        else:
            _models_cache.pop(provider_id, None)
