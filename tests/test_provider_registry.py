"""The wire formats and their adapters: every format declares every capability, each adapter is
its format's, every table the app builds covers every type, and no module outside app/providers
compares type strings. So adding a wire format is its declarations in formats.py, one adapter
module in app/providers and one line in registry.py."""

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
from app.providers import formats
from app.providers import registry
from app.providers.interface import CAPABILITIES
from app.providers.interface import ProviderConfig
from app.providers.interface import WireFormat

APP = Path(__file__).resolve().parent.parent / "app"
METHODS = ("list_models", "chat", "unload", "loaded_models")
FORMATS = sorted(formats.FORMATS.items())
ADAPTERS = sorted(registry.ADAPTERS.items())
# A registered type written as a string literal, in either quotes.
QUOTED_TYPE = re.compile("[\"']({})[\"']".format("|".join(map(re.escape, formats.TYPES))))


def config(ptype):
    return ProviderConfig(
        name="p",
        type=ptype,
        base_url="http://127.0.0.1:9",
        models_endpoint="",
        inference_endpoint="",
    )


@pytest.mark.parametrize(("ptype", "wire"), FORMATS)
def test_every_format_declares_every_capability_itself(ptype, wire):
    # In its own class body: a capability inherited from WireFormat would be "can't" by accident.
    missing = [name for name in CAPABILITIES if name not in vars(wire)]
    assert missing == []
    assert wire.type == ptype
    assert wire.label and wire.default_base_url.startswith("http")
    assert wire.models_path.startswith(wire.api_prefix + "/")
    assert wire.chat_path.startswith(wire.api_prefix + "/")
    for name in ("streams", "server_timings", "keeps_models_loaded", "reports_loaded_models"):
        assert isinstance(getattr(wire, name), bool), name


def test_every_format_has_an_adapter_and_every_adapter_a_format():
    assert tuple(registry.ADAPTERS) == formats.TYPES


@pytest.mark.parametrize(("ptype", "adapter"), ADAPTERS)
def test_every_adapter_is_its_formats_and_changes_none_of_its_capabilities(ptype, adapter):
    wire = formats.wire_format(ptype)
    assert issubclass(adapter, wire)
    # What a format can do is read without its adapter: an adapter saying otherwise would
    # make the forms and the engine disagree.
    assert not [name for name in CAPABILITIES if name in vars(adapter)]
    assert all(callable(getattr(adapter, method)) for method in METHODS)


@pytest.mark.parametrize(("ptype", "adapter"), ADAPTERS)
def test_the_registry_builds_each_types_adapter(ptype, adapter):
    built = registry.get_adapter(config(ptype))
    try:
        assert type(built) is adapter
        # An empty endpoint falls back to the adapter's declared path.
        assert built.models_endpoint == adapter.models_path
        assert built.inference_endpoint == adapter.chat_path
    finally:
        built.close()


def test_a_type_llmbench_does_not_speak_can_do_nothing():
    unknown = formats.wire_format("GOPHER")
    assert unknown is WireFormat
    assert not any(getattr(unknown, name) for name in CAPABILITIES)
    with pytest.raises(ValueError, match="use " + " or ".join(formats.TYPES)):
        registry.get_adapter(config("GOPHER"))


def test_the_named_constants_are_registered_types():
    assert formats.OPENAI in formats.TYPES
    assert formats.OLLAMA in formats.TYPES
    assert formats.TYPES == tuple(formats.FORMATS)


def test_every_table_built_from_the_formats_covers_every_type():
    assert set(DEFAULT_ENDPOINTS) == set(formats.TYPES)
    assert set(DEFAULT_BASE_URLS) == set(formats.TYPES)
    assert [ptype for ptype, _label in sorted(TYPE_CHOICES)] == sorted(formats.TYPES)
    # The form lists first the type a new provider's form starts with.
    assert TYPE_CHOICES[0][0] == new_provider_form()["type"]
    for ptype, wire in formats.FORMATS.items():
        assert DEFAULT_ENDPOINTS[ptype] == (wire.models_path, wire.chat_path)
        assert DEFAULT_BASE_URLS[ptype] == wire.default_base_url


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
    assert all(ptype in message for ptype in formats.TYPES)


def test_the_provider_form_offers_the_registered_types(client):
    html = client.get("/settings/providers/new").get_data(as_text=True)
    page = BeautifulSoup(html, "html.parser")
    options = [o["value"] for o in page.select("select[name=type] option")]
    assert options == [ptype for ptype, _label in TYPE_CHOICES]


def test_servers_that_cannot_say_what_is_loaded_give_no_reader():
    # Built from the type alone: no adapter is made (no secret read) for such a server.
    cannot = [t for t, w in formats.FORMATS.items() if not w.reports_loaded_models]
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
    assert found == [], "ask the format (providers.formats.wire_format) instead:\n" + "\n".join(
        found
    )


def test_the_source_check_would_see_a_type_compare():
    assert QUOTED_TYPE.search('    if provider.type == "OLLAMA":')
    assert QUOTED_TYPE.search("kind != 'OPENAI'")
    assert not QUOTED_TYPE.search("type=formats.OLLAMA")
    assert sum(1 for _ in _sources()) > 50
