"""JSON API: providers (seed 000 §3.1, §3.5) and the price table."""

from flask import jsonify
from flask import url_for

from .. import provider_store as store
from ..providers import ProviderError
from . import bp
from ._util import created
from ._util import json_body


@bp.get("/providers")
def provider_list():
    """All providers, secrets masked."""
    return jsonify([store.provider_to_dict(p) for p in store.list_providers()])


@bp.post("/providers")
def provider_create():
    """Create a provider."""
    provider = store.create_provider(json_body(), strict=True)
    location = url_for("api.provider_get", provider_id=provider.id)
    return created(store.provider_to_dict(provider), location)


@bp.get("/providers/<int:provider_id>")
def provider_get(provider_id):
    """One provider, secrets masked."""
    return jsonify(store.provider_to_dict(store.get_provider(provider_id)))


@bp.put("/providers/<int:provider_id>")
def provider_update(provider_id):
    """Edit a provider; a secret header sent without a value keeps its stored value."""
    provider = store.update_provider(provider_id, json_body(), strict=True)
    return jsonify(store.provider_to_dict(provider))


@bp.delete("/providers/<int:provider_id>")
def provider_delete(provider_id):
    """Delete a provider and its headers."""
    store.delete_provider(provider_id)
    return "", 204


@bp.post("/providers/<int:provider_id>/test-models")
def provider_test_models(provider_id):
    """Fetch the model list from the server now: {success, models, error}."""
    try:
        models = store.list_models(provider_id, refresh=True)
    except ProviderError as exc:
        return jsonify({"success": False, "models": [], "error": exc.message})
    return jsonify({"success": True, "models": models, "error": None})


@bp.get("/providers/<int:provider_id>/models")
def provider_models(provider_id):
    """The model list, cached briefly; 502 with the reason when the server fails."""
    try:
        return jsonify(store.list_models(provider_id))
    except ProviderError as exc:
        return jsonify({"error": exc.message}), 502


@bp.post("/providers/<int:provider_id>/test-inference")
def provider_test_inference(provider_id):
    """Send one prompt: {success, answer, wallMs, ttftMs, tokens, tokensPerSecond, raw, error}."""
    body = json_body()
    result = store.test_inference(provider_id, body.get("model"), body.get("prompt"))
    return jsonify(store.inference_to_dict(result))


@bp.get("/prices")
def price_list():
    """The price table (USD per 1M tokens)."""
    return jsonify([store.price_to_dict(p) for p in store.list_prices()])


@bp.put("/prices")
def price_put():
    """Insert or update one price row or a list of them (all or nothing); returns the table."""
    store.set_prices(json_body(expect=(dict, list)))
    return jsonify([store.price_to_dict(p) for p in store.list_prices()])


@bp.delete("/prices/<int:price_id>")
def price_delete(price_id):
    """Remove one price row."""
    store.delete_price(price_id)
    return "", 204
