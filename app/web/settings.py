"""Web pages: settings index, price table, composite score, reset defaults; shared helpers."""

import json

from flask import Blueprint
from flask import current_app
from flask import flash
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for

from ..catalog import defaults
from ..catalog.price_choices import model_choices
from ..catalog.price_choices import provider_names
from ..catalog.prices import delete_price
from ..catalog.prices import list_prices
from ..catalog.prices import set_price
from ..errors import Conflict
from ..errors import ValidationError
from ..results.composite import CONFIG_KEYS
from ..results.composite import composite_rule
from ..results.composite import settings_from

bp = Blueprint("settings", __name__, url_prefix="/settings")


def errors_by_field(exc):
    """ValidationError → {field: message} for templates (first message per field)."""
    out = {}
    for entry in exc.errors:
        out.setdefault(entry.get("field"), entry["message"])
    return out


def form_errors(exc, conflict_field="name"):
    """(errors by field, status) for a form whose save failed: 400, or 409 on a taken name."""
    if isinstance(exc, Conflict):
        return {conflict_field: exc.message}, 409
    return errors_by_field(exc), 400


@bp.app_template_filter("provider_raw_json")
def provider_raw_json(value):
    """Indented JSON for <pre> blocks (Jinja escapes it; the template shows text as it is)."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)


@bp.get("/")
def index():
    """Settings start at the providers."""
    return redirect(url_for("providers.index"))


def _model_context(provider_name, errors=None, form=None):
    models, note = model_choices(provider_name) if provider_name else ([], None)
    return {
        "models": models,
        "models_note": note,
        "provider_name": provider_name,
        "errors": errors or {},
        "form": form or {},
    }


def _prices_page(errors=None, form=None, status=200):
    form = form or {}
    chosen = form.get("providerName") or ""
    return render_template(
        "settings/prices.html",
        prices=list_prices(),
        provider_names=provider_names(),
        subnav_active="prices",
        **_model_context(chosen, errors, form),
    ), status


@bp.get("/prices")
def prices():
    """The editable price table; ?providerName= lists that provider's models to pick from."""
    return _prices_page(form={"providerName": request.args.get("providerName", "")})


@bp.get("/prices/models")
def price_models():
    """Fragment #price-model: the chosen provider's models to pick from."""
    context = _model_context(request.args.get("providerName", ""))
    return render_template("settings/_price_model.html", **context)


@bp.post("/prices")
def prices_save():
    """Insert or update one price row."""
    form = request.form
    try:
        price = set_price(
            form.get("providerName"),
            form.get("model") or form.get("modelTyped"),
            form.get("inputPer1m"),
            form.get("outputPer1m"),
        )
    except ValidationError as exc:
        return _prices_page(errors_by_field(exc), form, 400)
    flash(f"Price for {price.provider_name} / {price.model} saved.", "success")
    return redirect(url_for("settings.prices"))


@bp.post("/prices/<int:price_id>/delete")
def prices_delete(price_id):
    """Remove one price row."""
    delete_price(price_id)
    flash("Price removed.", "success")
    return redirect(url_for("settings.prices"))


@bp.get("/composite")
def composite():
    """The composite score's weights and time curve as configured, and how to change them."""
    settings = settings_from(current_app.config)
    return render_template(
        "settings/composite.html",
        subnav_active="composite",
        settings=settings,
        rule=composite_rule(settings),
        config_keys=CONFIG_KEYS,
    )


@bp.get("/defaults", endpoint="defaults")
def defaults_page():
    """What reset defaults does, and the button."""
    return render_template(
        "settings/defaults.html", subnav_active="defaults", providers=defaults.DEFAULT_PROVIDERS
    )


@bp.post("/reset-defaults")
def reset_defaults():
    """Restore the default providers, built-in tasks and collections; user data is kept."""
    summary = defaults.reset_defaults()
    flash(summary[:1].upper() + summary[1:] + ".", "success")
    return redirect(url_for("settings.defaults"))
