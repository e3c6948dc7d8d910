"""Providers: validation, storage with encrypted secret headers, model lists, test inference."""

import logging
import re
import threading
import time
from urllib.parse import urlsplit

from . import crypto
from .clock import isoformat
from .clock import utcnow
from .db import database
from .errors import Conflict
from .errors import NotFound
from .errors import ValidationError
from .models import PROVIDER_TYPES
from .models import Price
from .models import Provider
from .models import ProviderHeader
from .providers import ProviderConfig
from .providers import ProviderError
from .providers import get_adapter

log = logging.getLogger(__name__)

DEFAULT_ENDPOINTS = {
    "OPENAI": ("/v1/models", "/v1/chat/completions"),
    "OLLAMA": ("/api/tags", "/api/chat"),
}
# RFC 7230 token: the characters a header field name may use.
HEADER_NAME_RE = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
MODELS_CACHE_SECONDS = 60.0
TEST_MAX_TOKENS = 512

# API (camelCase) spellings accepted beside the model field names.
_ALIASES = {
    "baseUrl": "base_url",
    "modelsEndpoint": "models_endpoint",
    "inferenceEndpoint": "inference_endpoint",
    "timeoutSeconds": "timeout_seconds",
    "timeout": "timeout_seconds",
    "maxConcurrency": "max_concurrency",
}
_SPELLING = {
    "base_url": "baseUrl",
    "models_endpoint": "modelsEndpoint",
    "inference_endpoint": "inferenceEndpoint",
    "timeout_seconds": "timeoutSeconds",
    "max_concurrency": "maxConcurrency",
}

_models_cache = {}
_cache_lock = threading.Lock()


def _aad(provider_id, key):
    return f"provider:{provider_id}:header:{key}"


def _text(value):
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value if isinstance(value, str) else None


def _number(value, kind):
    """Parse an int/float (numeric strings from forms allowed); None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = value.strip()
        try:
            value = float(value) if kind is float else int(value)
        except ValueError:
            return None
    if kind is int and isinstance(value, float) and value.is_integer():
        value = int(value)
    if kind is int and not isinstance(value, int):
        return None
    if kind is float and not isinstance(value, (int, float)):
        return None
    return value


def _flag(value):
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "on", "yes")
    return bool(value)


def check_base_url(url):
    """The message for a bad base URL, or None when it is fine."""
    if not url:
        return "enter the server's base URL, e.g. http://localhost:11434"
    if len(url) > 500:
        return "at most 500 characters"
    if any(ch.isspace() for ch in url):
        return "a URL cannot contain spaces"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return "must start with http:// or https://"
    if not parts.hostname:
        return "must name a host, e.g. http://localhost:11434"
    if parts.username or parts.password:
        return "put credentials in a secret header, not in the URL"
    if parts.query or parts.fragment:
        return "no query string or fragment; put paths in the endpoints"
    try:
        parts.port
    except ValueError:
        return "the port must be a number from 1 to 65535"
    return None


def _check_endpoint(value):
    if not value.startswith("/"):
        return "must start with /"
    if len(value) > 200:
        return "at most 200 characters"
    if any(ch.isspace() for ch in value):
        return "cannot contain spaces"
    return None


def _normalise(data):
    """Accept model field names or the API's camelCase; remember how each was spelled."""
    out = {}
    for key, value in (data or {}).items():
        out[_ALIASES.get(key, key)] = value
    return out


def clean_provider(data, current=None):
    """Validate provider fields; returns cleaned values or raises ValidationError (every field).

    `current` is the Provider being edited: fields missing from `data` keep its values.
    """
    data = _normalise(data)
    errors = []

    def err(field, message):
        errors.append({"field": _SPELLING.get(field, field), "message": message})

    def get(field, default=None):
        if field in data:
            return data[field]
        return getattr(current, field) if current is not None else default

    out = {}
    name = _text(get("name"))
    if name is None or not name.strip():
        err("name", "enter a name")
    elif len(name.strip()) > 100:
        err("name", "at most 100 characters")
    else:
        out["name"] = name.strip()

    ptype = _text(get("type"))
    ptype = (ptype or "").strip().upper()
    if ptype not in PROVIDER_TYPES:
        err("type", "choose OPENAI (OpenAI-compatible) or OLLAMA (native)")
    else:
        out["type"] = ptype

    base_url = _text(get("base_url"))
    base_url = None if base_url is None else base_url.strip().rstrip("/")
    problem = check_base_url(base_url) if base_url is not None else "must be text"
    if problem:
        err("base_url", problem)
    else:
        out["base_url"] = base_url

    defaults = DEFAULT_ENDPOINTS.get(ptype, ("", ""))
    old_defaults = DEFAULT_ENDPOINTS.get(getattr(current, "type", None), ())
    for field, default in zip(("models_endpoint", "inference_endpoint"), defaults, strict=True):
        value = _text(get(field))
        if field not in data and value in old_defaults:
            value = default  # the type changed: the old type's default endpoints do not apply
        if value is None:
            err(field, "must be text")
            continue
        value = value.strip() or default
        problem = _check_endpoint(value) if value else None
        if problem:
            err(field, problem)
        else:
            out[field] = value

    timeout = _number(get("timeout_seconds", 120.0), float)
    if timeout is None or not 1 <= timeout <= 3600:
        err("timeout_seconds", "a number of seconds from 1 to 3600")
    else:
        out["timeout_seconds"] = float(timeout)

    concurrency = _number(get("max_concurrency", 1), int)
    if concurrency is None or not 1 <= concurrency <= 64:
        err("max_concurrency", "a whole number from 1 to 64")
    else:
        out["max_concurrency"] = concurrency

    if "headers" in data or current is None:
        out["headers"] = _clean_headers(data.get("headers") or [], current, err)
    if errors:
        raise ValidationError(errors)
    return out


def _clean_headers(rows, current, err):
    """Header rows → [{key, value|None (keep), is_secret, existing}]; blank rows are skipped."""
    if not isinstance(rows, list):
        err("headers", "must be a list of {key, value, isSecret}")
        return []
    existing = {}
    if current is not None:
        for h in current.headers:
            existing[("id", h.id)] = h
            existing[("key", h.key.lower())] = h
    seen = set()
    out = []
    for i, row in enumerate(rows):
        where = f"headers[{i}]"
        if not isinstance(row, dict):
            err(where, "must be an object with key, value and isSecret")
            continue
        key = _text(row.get("key"))
        value = _text(row.get("value"))
        is_secret = _flag(row.get("isSecret", row.get("is_secret", False)))
        if key is None or value is None:
            err(where, "key and value must be text")
            continue
        key = key.strip()
        if not key and not value:
            continue  # an empty form row
        if not key:
            err(f"{where}.key", "enter the header name")
            continue
        if len(key) > 100:
            err(f"{where}.key", "at most 100 characters")
            continue
        if not HEADER_NAME_RE.match(key):
            err(f"{where}.key", "letters, digits and !#$%&'*+-.^_`|~ only (no spaces or colons)")
            continue
        if key.lower() in seen:
            err(f"{where}.key", f"the header {key} is given twice")
            continue
        seen.add(key.lower())
        if len(value) > 4096:
            err(f"{where}.value", "at most 4096 characters")
            continue
        if any(ch in value for ch in "\r\n\x00"):
            err(f"{where}.value", "cannot contain line breaks")
            continue
        old = None
        row_id = _number(row.get("id"), int) if row.get("id") not in (None, "") else None
        if row_id is not None:
            old = existing.get(("id", row_id))
        if old is None:
            old = existing.get(("key", key.lower()))
        if not value:
            if old is None:
                err(f"{where}.value", "enter a value")
                continue
            if old.is_secret and not is_secret:
                err(f"{where}.value", "enter the value again to store it unencrypted")
                continue
            out.append({"key": key, "value": None, "is_secret": is_secret, "existing": old})
        else:
            out.append({"key": key, "value": value, "is_secret": is_secret, "existing": None})
    return out


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


def create_provider(data):
    """Validate and save a new provider with its headers (secrets encrypted); all or nothing."""
    values = clean_provider(data)
    headers = values.pop("headers")
    with database.atomic():
        _check_name_free(values["name"])
        provider = Provider.create(**values)
        _save_headers(provider, headers)
    log.info("provider %s created (%s)", provider.name, provider.type)
    return provider


def update_provider(provider_id, data):
    """Validate and save changes; a secret header sent empty keeps its stored value."""
    with database.atomic():
        provider = get_provider(provider_id)
        values = clean_provider(data, current=provider)
        headers = values.pop("headers", None)
        _check_name_free(values["name"], exclude_id=provider.id)
        for field, value in values.items():
            setattr(provider, field, value)
        provider.updated_at = utcnow()
        provider.save()
        if headers is not None:
            _save_headers(provider, headers)
    forget_models(provider.id)
    log.info("provider %s updated", provider.name)
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
            rows.append({"id": h.id, "key": h.key, "valueMasked": masked, "isSecret": True,
                         "readable": readable})
        else:
            rows.append({"id": h.id, "key": h.key, "valueMasked": h.value, "value": h.value,
                         "isSecret": False, "readable": True})
    return rows


def provider_to_dict(provider):
    """ProviderDto (seed 000 §7.1) plus timeoutSeconds and maxConcurrency."""
    headers = header_rows(provider)
    for h in headers:
        h.pop("readable")
    return {
        "id": provider.id,
        "name": provider.name,
        "type": provider.type,
        "baseUrl": provider.base_url,
        "modelsEndpoint": provider.models_endpoint,
        "inferenceEndpoint": provider.inference_endpoint,
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
        headers[h.key] = crypto.decrypt(h.value, _aad(provider.id, h.key)) if h.is_secret else h.value
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


def _scrub(text, config):
    """Replace any secret header value that slipped into a message with its mask."""
    if not text or config is None:
        return text
    for value in config.headers.values():
        if value and len(value) >= 4 and value in text:
            text = text.replace(value, crypto.mask(value))
    return text


def _adapter_for(provider):
    try:
        config = provider_config(provider)
    except crypto.KeyError_ as exc:
        raise ProviderError(f"{provider.name}: {exc.message}", transient=False,
                            kind="client") from exc
    return config, get_adapter(config)


def _call(provider, config, fn):
    """Run an adapter call; anything unexpected becomes a ProviderError a person can read."""
    try:
        return fn()
    except ProviderError as exc:
        exc.message = _scrub(exc.message, config)
        exc.args = (exc.message,)
        raise
    except Exception as exc:  # a bug or an answer nobody expected: still no 500 for the user
        log.warning("provider %s: unexpected %s", provider.name, type(exc).__name__)
        raise ProviderError(
            f"{provider.name}: the server's answer could not be understood "
            f"({type(exc).__name__}: {_scrub(str(exc), config)[:200]})",
            transient=False, kind="malformed") from exc


def forget_models(provider_id=None):
    """Drop cached model lists (one provider, or all)."""
    with _cache_lock:
        if provider_id is None:
            _models_cache.clear()
        else:
            _models_cache.pop(provider_id, None)


def list_models(provider_id, refresh=False):
    """Model dicts ({"id", ...}) from the server; cached briefly. Raises ProviderError."""
    provider = get_provider(provider_id)
    stamp = provider.updated_at
    now = time.monotonic()
    with _cache_lock:
        hit = _models_cache.get(provider.id)
    if hit and not refresh and hit[0] > now and hit[1] == stamp:
        return list(hit[2])
    config, adapter = _adapter_for(provider)
    models = _call(provider, config, adapter.list_models)
    models = sorted((m for m in models if m.get("id")), key=lambda m: str(m["id"]).lower())
    with _cache_lock:
        _models_cache[provider.id] = (now + MODELS_CACHE_SECONDS, stamp, models)
    return list(models)


def test_inference(provider_id, model, prompt):
    """Send one prompt; returns answer, timings, tokens and raw JSON, or a clear error."""
    provider = get_provider(provider_id)
    model = (model or "").strip() if isinstance(model, str) else model
    prompt = prompt.strip() if isinstance(prompt, str) else prompt
    errors = []
    if not model or not isinstance(model, str):
        errors.append({"field": "model", "message": "choose or type a model"})
    if not prompt or not isinstance(prompt, str):
        errors.append({"field": "prompt", "message": "enter a prompt"})
    if errors:
        raise ValidationError(errors)
    result = {"success": False, "provider": provider.name, "model": model, "answer": None,
              "wall_ms": None, "ttft_ms": None, "tokens": None, "prompt_tokens": None,
              "tokens_per_second": None, "tps_source": None, "tokens_estimated": False,
              "raw": None, "error": None}
    config = None
    try:
        config, adapter = _adapter_for(provider)
        completion = _call(provider, config, lambda: adapter.chat(
            model, [{"role": "user", "content": prompt}],
            {"max_tokens": TEST_MAX_TOKENS}, stream=True))
    except ProviderError as exc:
        result["error"] = _scrub(exc.message, config)
        result["raw"] = _scrub(exc.raw, config) if isinstance(exc.raw, str) else None
        return result
    result.update(
        success=True,
        answer=completion.text,
        model=completion.model or model,
        wall_ms=completion.wall_ms,
        ttft_ms=completion.ttft_ms,
        tokens=completion.completion_tokens,
        prompt_tokens=completion.prompt_tokens,
        tokens_per_second=completion.tokens_per_second,
        tps_source=completion.tps_source,
        tokens_estimated=completion.tokens_estimated,
        raw=completion.raw_json if completion.raw_json is not None else completion.raw,
    )
    return result


def inference_to_dict(result):
    """test_inference() result in the API's camelCase."""
    return {
        "success": result["success"],
        "provider": result["provider"],
        "model": result["model"],
        "answer": result["answer"],
        "wallMs": result["wall_ms"],
        "ttftMs": result["ttft_ms"],
        "tokens": result["tokens"],
        "promptTokens": result["prompt_tokens"],
        "tokensPerSecond": result["tokens_per_second"],
        "tpsSource": result["tps_source"],
        "tokensEstimated": result["tokens_estimated"],
        "raw": result["raw"],
        "error": result["error"],
    }


# -- price table ---------------------------------------------------------------------------


def list_prices():
    """The price table, by provider name then model."""
    return list(Price.select().order_by(Price.provider_name, Price.model))


def price_to_dict(price):
    """One price row in the API's camelCase."""
    return {"id": price.id, "providerName": price.provider_name, "model": price.model,
            "inputPer1m": price.input_per_1m, "outputPer1m": price.output_per_1m,
            "updatedAt": isoformat(price.updated_at)}


def set_price(provider_name, model, input_per_1m, output_per_1m):
    """Insert or update the USD price per 1M input/output tokens for a provider+model."""
    errors = []
    provider_name = _text(provider_name)
    model = _text(model)
    provider_name = provider_name.strip() if provider_name else ""
    model = model.strip() if model else ""
    if not provider_name:
        errors.append({"field": "providerName", "message": "enter the provider name"})
    elif len(provider_name) > 100:
        errors.append({"field": "providerName", "message": "at most 100 characters"})
    if not model:
        errors.append({"field": "model", "message": "enter the model"})
    elif len(model) > 300:
        errors.append({"field": "model", "message": "at most 300 characters"})
    prices = {}
    for field, value in (("inputPer1m", input_per_1m), ("outputPer1m", output_per_1m)):
        number = _number(value, float) if value not in (None, "") else 0.0
        if number is None or number < 0 or number != number or number > 1e6:
            errors.append({"field": field, "message": "a price in USD from 0 to 1000000"})
        else:
            prices[field] = float(number)
    if errors:
        raise ValidationError(errors)
    with database.atomic():
        price = Price.get_or_none((Price.provider_name == provider_name) & (Price.model == model))
        if price is None:
            price = Price(provider_name=provider_name, model=model)
        price.input_per_1m = prices["inputPer1m"]
        price.output_per_1m = prices["outputPer1m"]
        price.updated_at = utcnow()
        price.save()
    return price


def set_prices(rows):
    """Upsert one API price dict or a list of them, all or nothing; errors name every row."""
    single = isinstance(rows, dict)
    errors = []
    with database.atomic():
        for i, row in enumerate([rows] if single else rows):
            prefix = "" if single else f"[{i}]."
            if not isinstance(row, dict):
                errors.append({"field": f"[{i}]", "message": "each price must be an object"})
                continue
            try:
                set_price(row.get("providerName"), row.get("model"), row.get("inputPer1m"),
                          row.get("outputPer1m"))
            except ValidationError as exc:
                errors.extend({**e, "field": prefix + e["field"]} for e in exc.errors)
        if errors:
            raise ValidationError(errors)


def delete_price(price_id):
    """Remove one row from the price table."""
    deleted = Price.delete().where(Price.id == price_id).execute()
    if not deleted:
        raise NotFound(f"price {price_id} not found")
