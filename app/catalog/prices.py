"""The price table: USD per 1M input/output tokens for a provider+model."""

import difflib

from ..clock import isoformat
from ..clock import utcnow
from ..db.connection import database
from ..db.models import Price
from ..errors import NotFound
from ..errors import ValidationError
from .provider_fields import as_number
from .provider_fields import as_text


def list_prices():
    """The price table, by provider name then model."""
    return list(Price.select().order_by(Price.provider_name, Price.model))


def price_to_dict(price):
    """One price row in the API's camelCase."""
    return {
        "id": price.id,
        "providerName": price.provider_name,
        "model": price.model,
        "inputPer1m": price.input_per_1m,
        "outputPer1m": price.output_per_1m,
        "updatedAt": isoformat(price.updated_at),
    }


def clean_price(provider_name, model, input_per_1m, output_per_1m):
    """(provider name, model, input, output) checked, or ValidationError naming each field."""
    errors = []
    provider_name = as_text(provider_name)
    model = as_text(model)
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
        number = as_number(value, float) if value not in (None, "") else 0.0
        if number is None or number < 0 or number != number or number > 1e6:
            errors.append({"field": field, "message": "a price in USD from 0 to 1000000"})
        else:
            prices[field] = float(number)
    if errors:
        raise ValidationError(errors)
    return provider_name, model, prices["inputPer1m"], prices["outputPer1m"]


def has_price(provider_name, model):
    """True when the price table holds a row for provider+model."""
    return (
        Price.select()
        .where((Price.provider_name == provider_name) & (Price.model == model))
        .exists()
    )


def set_price(provider_name, model, input_per_1m, output_per_1m):
    """Insert or update the USD price per 1M input/output tokens for a provider+model."""
    provider_name, model, input_price, output_price = clean_price(
        provider_name, model, input_per_1m, output_per_1m
    )
    with database.atomic():
        price = Price.get_or_none((Price.provider_name == provider_name) & (Price.model == model))
        if price is None:
            price = Price(provider_name=provider_name, model=model)
        price.input_per_1m = input_price
        price.output_per_1m = output_price
        price.updated_at = utcnow()
        price.save()
    return price


PRICE_KEYS = ("providerName", "model", "inputPer1m", "outputPer1m")
READ_ONLY_KEYS = ("id", "updatedAt")  # as GET /api/prices gives them: accepted, not changed


def _unknown_key(key):
    close = difflib.get_close_matches(str(key), PRICE_KEYS, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]}?" if close else ""
    return f"unknown key; use {', '.join(PRICE_KEYS)}{hint}"


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
            unknown = [key for key in row if key not in PRICE_KEYS + READ_ONLY_KEYS]
            errors.extend(
                {"field": prefix + str(key), "message": _unknown_key(key)} for key in unknown
            )
            if unknown:
                continue
            try:
                set_price(
                    row.get("providerName"),
                    row.get("model"),
                    row.get("inputPer1m"),
                    row.get("outputPer1m"),
                )
            except ValidationError as exc:
                errors.extend({**e, "field": prefix + e["field"]} for e in exc.errors)
        if errors:
            raise ValidationError(errors)


def delete_price(price_id):
    """Remove one row from the price table."""
    deleted = Price.delete().where(Price.id == price_id).execute()
    if not deleted:
        raise NotFound(f"price {price_id} not found")
