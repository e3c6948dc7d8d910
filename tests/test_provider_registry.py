"""The wire-format registry: every adapter declares every capability, every table the app
builds covers every registered type, and no module outside app/providers compares type strings.
So adding a wire format is one module in app/providers and one line in registry.py."""

import re
from pathlib import Path
from types import SimpleNamespace as NS

import pytest
from bs4 import BeautifulSoup

from app.catalog.provider_fields import DEFAULT_ENDPOINTS
from app.catalog.provider_fields import clean_provider
from app.catalog.provider_loaded import loaded_models_reader
from app.catalog.provider_presets import DEFAULT_BASE_URLS
from app.catalog.provider_presets import TYPE_CHOICES
from app.catalog.provider_presets import new_provider_form
from app.errors import ValidationError
from app.providers import registry
from app.providers.interface import CAPABILITIES
from app.providers.interface import ProviderConfig
from app.providers.interface import WireFormat

APP = Path(__file__).resolve().parent.parent / "app"
METHODS = ("list_models", "chat", "unload", "loaded_models")
ADAPTERS = sorted(registry.ADAPTERS.items())
# A registered type written as a string literal, in either quotes.
QUOTED_TYPE = re.compile("[\"']({})[\"']".format("|".join(map(re.escape, registry.TYPES))))


def config(ptype):
    return ProviderConfig(
        name="p",
        type=ptype,
        base_url="http://127.0.0.1:9",
        models_endpoint="",
        inference_endpoint="",
    )


@pytest.mark.parametrize(("ptype", "adapter"), ADAPTERS)
def test_every_adapter_declares_every_capability_itself(ptype, adapter):
    # In its own class body: a capability inherited from WireFormat would be "can't" by accident.
    missing = [name for name in CAPABILITIES if name not in vars(adapter)]
    assert missing == []
    assert adapter.type == ptype
    assert adapter.label and adapter.default_base_url.startswith("http")
    assert adapter.models_path.startswith(adapter.api_prefix + "/")
    assert adapter.chat_path.startswith(adapter.api_prefix + "/")
    for name in ("streams", "server_timings", "keeps_models_loaded", "reports_loaded_models"):
        assert isinstance(getattr(adapter, name), bool), name
    assert all(callable(getattr(adapter, method)) for method in METHODS)


@pytest.mark.parametrize(("ptype", "adapter"), ADAPTERS)
def test_the_registry_builds_each_types_adapter(ptype, adapter):
    built = registry.get_adapter(config(ptype))
    try:
        assert type(built) is adapter
        assert registry.wire_format(ptype) is adapter
        # An empty endpoint falls back to the adapter's declared path.
        assert built.models_endpoint == adapter.models_path
        assert built.inference_endpoint == adapter.chat_path
    finally:
        built.close()


def test_a_type_llmbench_does_not_speak_can_do_nothing():
    unknown = registry.wire_format("GOPHER")
    assert unknown is WireFormat
    assert not any(getattr(unknown, name) for name in CAPABILITIES)
    with pytest.raises(ValueError, match="use " + " or ".join(registry.TYPES)):
        registry.get_adapter(config("GOPHER"))


def test_the_named_constants_are_registered_types():
    assert registry.OPENAI in registry.TYPES
    assert registry.OLLAMA in registry.TYPES
    assert registry.TYPES == tuple(registry.ADAPTERS)


def test_every_table_built_from_the_registry_covers_every_type():
    assert set(DEFAULT_ENDPOINTS) == set(registry.TYPES)
    assert set(DEFAULT_BASE_URLS) == set(registry.TYPES)
    assert [ptype for ptype, _label in sorted(TYPE_CHOICES)] == sorted(registry.TYPES)
    # The form lists first the type a new provider's form starts with.
    assert TYPE_CHOICES[0][0] == new_provider_form()["type"]
    for ptype, adapter in registry.ADAPTERS.items():
        assert DEFAULT_ENDPOINTS[ptype] == (adapter.models_path, adapter.chat_path)
        assert DEFAULT_BASE_URLS[ptype] == adapter.default_base_url


@pytest.mark.parametrize(("ptype", "adapter"), ADAPTERS)
def test_a_provider_of_each_type_is_valid_with_its_adapters_endpoints(ptype, adapter):
    cleaned = clean_provider({"name": "p", "type": ptype.lower(), "base_url": "http://h:1"})
    assert cleaned["type"] == ptype
    assert cleaned["models_endpoint"] == adapter.models_path
    assert cleaned["inference_endpoint"] == adapter.chat_path


def test_an_unknown_type_is_refused_naming_every_registered_type():
    with pytest.raises(ValidationError) as caught:
        clean_provider({"name": "p", "type": "GOPHER", "base_url": "http://h:1"})
    (message,) = [e["message"] for e in caught.value.errors if e["field"] == "type"]
    assert all(ptype in message for ptype in registry.TYPES)


def test_the_provider_form_offers_the_registered_types(client):
    html = client.get("/settings/providers/new").get_data(as_text=True)
    page = BeautifulSoup(html, "html.parser")
    options = [o["value"] for o in page.select("select[name=type] option")]
    assert options == [ptype for ptype, _label in TYPE_CHOICES]


def test_servers_that_cannot_say_what_is_loaded_give_no_reader():
    # Built from the type alone: no adapter is made (no secret read) for such a server.
    cannot = [t for t, a in registry.ADAPTERS.items() if not a.reports_loaded_models]
    providers = [NS(type=ptype, name=ptype) for ptype in cannot + ["GOPHER"]]
    assert loaded_models_reader(providers) is None


def _sources():
    for path in sorted(APP.rglob("*.py")):
        relative = path.relative_to(APP).as_posix()
        # The adapters name their own types; old migrations wrote the rows as they were.
        if relative.startswith("providers/") or relative.startswith("db/migrations"):
            continue
        yield relative, path.read_text(encoding="utf-8")


def test_no_module_outside_the_providers_names_a_type_as_a_string():
    found = [
        f"app/{relative}:{number}: {line.strip()}"
        for relative, text in _sources()
        for number, line in enumerate(text.splitlines(), start=1)
        if QUOTED_TYPE.search(line)
    ]
    assert found == [], "ask the adapter (providers.registry.wire_format) instead:\n" + "\n".join(
        found
    )


def test_the_source_check_would_see_a_type_compare():
    assert QUOTED_TYPE.search('    if provider.type == "OLLAMA":')
    assert QUOTED_TYPE.search("kind != 'OPENAI'")
    assert not QUOTED_TYPE.search("type=registry.OLLAMA")
    assert sum(1 for _ in _sources()) > 50
