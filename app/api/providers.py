"""JSON API: providers and the price table."""

from flask import Blueprint
from flask import jsonify
from flask import url_for

from ..catalog.prices import delete_price
from ..catalog.prices import list_prices
from ..catalog.prices import price_to_dict
from ..catalog.prices import set_prices
from ..catalog.provider_models import list_models
from ..catalog.provider_trial import inference_to_dict
from ..catalog.provider_trial import run_test_inference
from ..catalog.providers import create_provider
from ..catalog.providers import delete_provider
from ..catalog.providers import get_provider
from ..catalog.providers import list_providers
from ..catalog.providers import provider_to_dict
from ..catalog.providers import update_provider
from ..providers.interface import ProviderError
from .replies import created
from .replies import json_body

bp = Blueprint("providers", __name__)


@bp.get("/providers")
def provider_list():
    """All providers, secrets masked."""
    return jsonify([provider_to_dict(p) for p in list_providers()])


@bp.post("/providers")
def provider_create():
    """Create a provider (baseUrlNote says when a doubled /v1 was taken off the base URL)."""
    provider = create_provider(json_body(), strict=True)
    location = url_for("api.providers.provider_get", provider_id=provider.id)
    return created({**provider_to_dict(provider), **_note(provider)}, location)


def _note(provider):
    return {"baseUrlNote": provider.base_url_note} if provider.base_url_note else {}


@bp.get("/providers/<int:provider_id>")
def provider_get(provider_id):
    """One provider, secrets masked."""
    return jsonify(provider_to_dict(get_provider(provider_id)))


@bp.put("/providers/<int:provider_id>")
def provider_update(provider_id):
    """Edit a provider; a secret header sent without a value keeps its stored value (unless
    the base URL moved to another server: then it is cleared, see secretsCleared)."""
    provider = update_provider(provider_id, json_body(), strict=True)
    # Secret values not entered again when the base URL moved to another server.
    return jsonify(
        {
            **provider_to_dict(provider),
            "secretsCleared": provider.secrets_cleared,
            **_note(provider),
        }
    )


@bp.delete("/providers/<int:provider_id>")
def provider_delete(provider_id):
    """Delete a provider and its headers."""
    delete_provider(provider_id)
    return "", 204


@bp.post("/providers/<int:provider_id>/test-models")
def provider_test_models(provider_id):
    """Fetch the model list from the server now: {success, models, error}."""
    try:
        models = list_models(provider_id, refresh=True)
    except ProviderError as exc:
        return jsonify({"success": False, "models": [], "error": exc.message})
    return jsonify({"success": True, "models": models, "error": None})


@bp.get("/providers/<int:provider_id>/models")
def provider_models(provider_id):
    """The model list, cached briefly; 502 with the reason when the server fails."""
    try:
        return jsonify(list_models(provider_id))
    except ProviderError as exc:
        return jsonify({"error": exc.message}), 502


@bp.post("/providers/<int:provider_id>/test-inference")
def provider_test_inference(provider_id):
    """Send one prompt: {success, answer, wallMs, ttftMs, tokens, tokensPerSecond, raw, error}."""
    body = json_body()
    result = run_test_inference(provider_id, body.get("model"), body.get("prompt"))
    return jsonify(inference_to_dict(result))


@bp.get("/prices")
def price_list():
    """The price table (USD per 1M tokens)."""
    return jsonify([price_to_dict(p) for p in list_prices()])


@bp.put("/prices")
def price_put():
    """Insert or update one price row or a list of them (all or nothing); returns the table."""
    set_prices(json_body(expect=(dict, list)))
    return jsonify([price_to_dict(p) for p in list_prices()])


@bp.delete("/prices/<int:price_id>")
def price_delete(price_id):
    """Remove one price row."""
    delete_price(price_id)
    return "", 204
