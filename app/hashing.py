"""Canonical JSON and the hashes a run records: dataset, judge prompt, and each item's context."""

import hashlib
import json

CONTEXT_HASH_VERSION = 1


def _canonical(value):
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def canonical_params(params):
    """Generation params without unset values, keys sorted (what the hash and the request use)."""
    return {k: params[k] for k in sorted(params or {}) if params[k] not in (None, "", [])}


def context_hash(provider_name, base_url, model, params, messages, template_version, tools=None):
    """sha256 over provider, base URL, model, sorted params (a target's response_format and
    tool_choice among them), messages, template version and the tools offered."""
    payload = {
        "v": CONTEXT_HASH_VERSION,
        "provider": provider_name,
        "base_url": (base_url or "").rstrip("/"),
        "model": model,
        "params": canonical_params(params),
        "messages": messages,
        "template_version": template_version,
    }
    if tools:
        # Only when set: an item without tools keeps the hash it had before tasks had tools
        # (its earlier answers stay reusable); a changed tool set is another context.
        payload["tools"] = tools
    return hashlib.sha256(_canonical(payload).encode("utf-8")).hexdigest()


def sha256_json(value):
    """sha256 of a JSON value in canonical form (dataset hash, prompt hash)."""
    return hashlib.sha256(_canonical(value).encode("utf-8")).hexdigest()


def sha256_json_list(values):
    """sha256_json(list(values)) without holding the list: canonical JSON of a list is its
    values' canonical JSON joined by "," inside "[...]" (a run's dataset hash, task by task)."""
    digest = hashlib.sha256(b"[")
    for n, value in enumerate(values):
        digest.update((b"," if n else b"") + _canonical(value).encode("utf-8"))
    digest.update(b"]")
    return digest.hexdigest()
