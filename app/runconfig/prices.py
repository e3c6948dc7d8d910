"""A run config's `prices:` (USD per 1M input and output tokens, saved to the price table when
the run starts) and the budget's rule: with `max_budget_usd`, every target and the judge need a
known price, or a server that reports each call's cost (OpenRouter), unless --allow-unpriced."""

from ..catalog.prices import clean_price
from ..catalog.prices import has_price
from ..datasets.lines import LineDict
from ..db.models import Provider
from ..errors import ValidationError

PRICE_KEYS = {"provider", "model", "input_per_1m", "output_per_1m"}
PRICE_ALIASES = {"inputPer1m": "input_per_1m", "outputPer1m": "output_per_1m"}
# The price table's field names -> the config's keys.
_KEYS = {
    "providerName": "provider",
    "inputPer1m": "input_per_1m",
    "outputPer1m": "output_per_1m",
    "model": "model",
}
OPENROUTER = "openrouter.ai"  # its chat replies carry usage.cost: the budget can count them


def check_prices(checker, doc):
    """`prices:` rows checked by the price table's rules: [(provider, model, in, out)]."""
    rows = []
    for n, raw in enumerate(checker.list_of(doc, "prices")):
        path = f"prices[{n}]"
        if not isinstance(raw, LineDict):
            checker.add(
                path,
                "must be a mapping {provider, model, input_per_1m, output_per_1m}",
                doc,
                "prices",
            )
            continue
        raw = checker.keys(raw, PRICE_KEYS, f"{path}.", PRICE_ALIASES)
        try:
            rows.append(
                clean_price(
                    raw.get("provider"),
                    raw.get("model"),
                    raw.get("input_per_1m"),
                    raw.get("output_per_1m"),
                )
            )
        except ValidationError as exc:
            for entry in exc.errors:
                key = _KEYS.get(entry["field"], entry["field"])
                checker.add(f"{path}.{key}", entry["message"], raw, key if key in raw else None)
    return rows


def _stored_url(provider):
    """The base URL of a provider already in the database ('' for a new one)."""
    if provider.pk is None:
        return ""
    stored = Provider.get_or_none(Provider.id == provider.pk)
    return stored.base_url if stored else ""


def check_unpriced(checker, plan, run):
    """Name every target and judge the budget could not count (error at run.max_budget_usd)."""
    priced = {(p, m) for p, m, _i, _o in plan.prices}
    reporting = set(checker.reports_cost) | {
        name
        for name, provider in plan.providers.items()
        if OPENROUTER in str((provider.data or {}).get("base_url") or _stored_url(provider))
    }
    wanted = [("judge", plan.judge)] + [("target", t) for t in plan.targets]
    missing = [
        f"{role} {spec['provider']}/{spec['model']}"
        for role, spec in wanted
        if spec
        and spec["provider"] not in reporting
        and (spec["provider"], spec["model"]) not in priced
        and not has_price(spec["provider"], spec["model"])
    ]
    if missing:
        checker.add(
            "run.max_budget_usd",
            "the budget cannot count what these cost, they have no price: "
            + ", ".join(missing)
            + "; add them under prices: (0 for a free local model), or pass "
            "--allow-unpriced when the server reports each call's cost (OpenRouter)",
            run,
            "max_budget_usd",
        )
