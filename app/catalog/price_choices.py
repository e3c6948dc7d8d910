"""What the prices page offers to pick from: the provider names people use, and each one's
models (asked from its server, plus those used in runs or already priced)."""

from ..db.models import Price
from ..db.models import Provider
from ..db.models import RunTarget
from ..providers.interface import ProviderError
from .provider_models import list_models

MODEL_LIST_SECONDS = 5.0


def provider_names():
    """Provider names to price: today's providers, then names only runs or prices still use."""
    current = [p.name for p in Provider.select(Provider.name).order_by(Provider.name)]
    used = {t.provider_name for t in RunTarget.select(RunTarget.provider_name).distinct()}
    used |= {p.provider_name for p in Price.select(Price.provider_name).distinct()}
    return current + sorted(used - set(current))


def model_choices(provider_name):
    """(model ids, note): the server's list when the provider answers, with the models used in
    runs or priced under that name; the note says why the server's list is missing."""
    names = {t.model for t in RunTarget.select().where(RunTarget.provider_name == provider_name)}
    names |= {p.model for p in Price.select().where(Price.provider_name == provider_name)}
    note = None
    provider = Provider.get_or_none(Provider.name == provider_name)
    if provider is None:
        note = f"{provider_name} is not a provider any more: only models from runs and prices."
    else:
        try:
            names |= {str(m["id"]) for m in list_models(provider.id, timeout=MODEL_LIST_SECONDS)}
        except ProviderError as exc:
            note = f"Could not list {provider_name}'s models ({exc.message}); type the model."
    return sorted(names, key=str.lower), note
