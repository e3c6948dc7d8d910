"""Provider storage: validation of every field, secrets, model lists and test inference."""

import socket

import pytest

from app import crypto
from app.catalog.prices import delete_price
from app.catalog.prices import list_prices
from app.catalog.prices import price_to_dict
from app.catalog.prices import set_price
from app.catalog.prices import set_prices
from app.catalog.provider_models import list_models
from app.catalog.provider_trial import run_test_inference
from app.catalog.providers import create_provider
from app.catalog.providers import delete_provider
from app.catalog.providers import get_provider
from app.catalog.providers import provider_config
from app.catalog.providers import provider_to_dict
from app.catalog.providers import update_provider
from app.db.models import Price
from app.db.models import Provider
from app.db.models import ProviderHeader
from app.errors import Conflict
from app.errors import NotFound
from app.errors import ValidationError
from app.providers.interface import ProviderError

SECRET = "Bearer sk-test-9f8e7d6c5b4a"


def closed_port_url():
    """A localhost URL where nothing listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def provider_data(**overrides):
    data = {
        "name": "p1",
        "type": "OPENAI",
        "baseUrl": "http://127.0.0.1:18080",
        "headers": [
            {"key": "Authorization", "value": SECRET, "isSecret": True},
            {"key": "X-Team", "value": "bench", "isSecret": False},
        ],
    }
    data.update(overrides)
    return data


def fields_of(exc):
    return [e["field"] for e in exc.value.errors]


@pytest.mark.parametrize(
    ("ptype", "models", "inference"),
    [
        ("OPENAI", "/v1/models", "/v1/chat/completions"),
        ("OLLAMA", "/api/tags", "/api/chat"),
    ],
)
def test_endpoints_default_per_type(app, ptype, models, inference):
    p = create_provider(provider_data(type=ptype, headers=[]))
    assert (p.models_endpoint, p.inference_endpoint) == (models, inference)


def test_defaults_for_timeout_and_concurrency(app):
    p = create_provider(provider_data(headers=[]))
    assert p.timeout_seconds == 300.0 and p.max_concurrency == 1  # as the built-in ones


def test_base_url_trailing_slash_is_dropped(app):
    assert create_provider(provider_data(baseUrl="http://h:1/")).base_url == "http://h:1"


def test_snake_case_field_names_are_accepted_too(app):
    p = create_provider(
        {
            "name": "s",
            "type": "ollama",
            "base_url": "http://h:1",
            "max_concurrency": 3,
            "timeout_seconds": "30",
        }
    )
    assert (p.type, p.max_concurrency, p.timeout_seconds) == ("OLLAMA", 3, 30.0)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": "x" * 101}, "name"),
        ({"type": "GEMINI"}, "type"),
        ({"baseUrl": ""}, "baseUrl"),
        ({"baseUrl": "ftp://host"}, "baseUrl"),
        ({"baseUrl": "localhost:11434"}, "baseUrl"),
        ({"baseUrl": "http://"}, "baseUrl"),
        ({"baseUrl": "http://user:pw@host"}, "baseUrl"),
        ({"baseUrl": "http://host/?q=1"}, "baseUrl"),
        ({"baseUrl": "http://host:99999"}, "baseUrl"),
        ({"baseUrl": "http://ho st"}, "baseUrl"),
        ({"baseUrl": "http://h/" + "a" * 500}, "baseUrl"),
        ({"modelsEndpoint": "v1/models"}, "modelsEndpoint"),
        ({"inferenceEndpoint": "chat"}, "inferenceEndpoint"),
        ({"timeoutSeconds": 0}, "timeoutSeconds"),
        ({"timeoutSeconds": 3601}, "timeoutSeconds"),
        ({"timeoutSeconds": "soon"}, "timeoutSeconds"),
        ({"maxConcurrency": 0}, "maxConcurrency"),
        ({"maxConcurrency": 65}, "maxConcurrency"),
        ({"maxConcurrency": 1.5}, "maxConcurrency"),
        ({"maxConcurrency": True}, "maxConcurrency"),
        ({"headers": "Authorization: x"}, "headers"),
        ({"headers": [{"key": "Bad Name", "value": "x"}]}, "headers[0].key"),
        ({"headers": [{"key": "X:Y", "value": "x"}]}, "headers[0].key"),
        ({"headers": [{"key": "X" * 101, "value": "x"}]}, "headers[0].key"),
        ({"headers": [{"key": "", "value": "x"}]}, "headers[0].key"),
        ({"headers": [{"key": "X-A", "value": "a\r\nX-Evil: 1"}]}, "headers[0].value"),
        ({"headers": [{"key": "X-A", "value": "v" * 4097}]}, "headers[0].value"),
        ({"headers": [{"key": "X-A", "value": ""}]}, "headers[0].value"),
        (
            {"headers": [{"key": "X-A", "value": "1"}, {"key": "x-a", "value": "2"}]},
            "headers[1].key",
        ),
        ({"headers": [{"key": "X-A", "value": "snow \u2603"}]}, "headers[0].value"),
        ({"baseUrl": "http://[::1"}, "baseUrl"),
    ],
)
def test_a_bad_field_is_named_and_nothing_is_saved(app, overrides, field):
    with pytest.raises(ValidationError) as info:
        create_provider(provider_data(**overrides))
    assert fields_of(info) == [field]
    assert Provider.select().count() == 0 and ProviderHeader.select().count() == 0


def test_every_bad_field_is_listed_at_once(app):
    with pytest.raises(ValidationError) as info:
        create_provider(
            {
                "name": "",
                "type": "X",
                "baseUrl": "nope",
                "timeoutSeconds": -1,
                "maxConcurrency": 99,
                "headers": [{"key": "a b", "value": "1"}],
            }
        )
    assert fields_of(info) == [
        "name",
        "type",
        "baseUrl",
        "timeoutSeconds",
        "maxConcurrency",
        "headers[0].key",
    ]


def test_a_duplicate_name_is_a_conflict(app):
    create_provider(provider_data())
    with pytest.raises(Conflict, match="p1"):
        create_provider(provider_data(headers=[]))
    assert Provider.select().count() == 1


def test_renaming_to_a_taken_name_is_a_conflict(app):
    create_provider(provider_data())
    other = create_provider(provider_data(name="p2"))
    with pytest.raises(Conflict):
        update_provider(other.id, {"name": "p1"})


def test_secret_values_are_stored_encrypted_and_plain_ones_as_is(app):
    p = create_provider(provider_data())
    rows = {h.key: h for h in p.headers}
    assert rows["Authorization"].value != SECRET and rows["Authorization"].is_secret
    assert (
        crypto.decrypt(rows["Authorization"].value, f"provider:{p.id}:header:Authorization")
        == SECRET
    )
    assert rows["X-Team"].value == "bench"


def test_provider_config_has_the_decrypted_headers(app):
    config = provider_config(create_provider(provider_data()))
    assert config.headers == {"Authorization": SECRET, "X-Team": "bench"}
    assert (config.type, config.base_url, config.timeout) == (
        "OPENAI",
        "http://127.0.0.1:18080",
        300.0,
    )


def test_provider_to_dict_masks_secrets(app):
    d = provider_to_dict(create_provider(provider_data()))
    assert d["headers"][0] == {
        "id": d["headers"][0]["id"],
        "key": "Authorization",
        "valueMasked": "****5b4a",
        "isSecret": True,
    }
    assert d["headers"][1]["value"] == "bench"
    assert {
        "baseUrl",
        "modelsEndpoint",
        "inferenceEndpoint",
        "timeoutSeconds",
        "maxConcurrency",
        "createdAt",
    } <= set(d)
    assert SECRET not in repr(d)


def test_editing_with_an_empty_secret_keeps_it(app):
    p = create_provider(provider_data())
    update_provider(p.id, {"headers": [{"key": "Authorization", "value": "", "isSecret": True}]})
    assert provider_config(get_provider(p.id)).headers == {"Authorization": SECRET}


def test_editing_with_a_new_secret_replaces_it(app):
    p = create_provider(provider_data())
    update_provider(
        p.id, {"headers": [{"key": "Authorization", "value": "Bearer new", "isSecret": True}]}
    )
    assert provider_config(p).headers["Authorization"] == "Bearer new"


def test_renaming_a_secret_header_without_a_value_keeps_the_value(app):
    p = create_provider(provider_data())
    header_id = ProviderHeader.get(ProviderHeader.key == "Authorization").id
    update_provider(
        p.id, {"headers": [{"id": header_id, "key": "X-Api-Key", "value": "", "isSecret": True}]}
    )
    assert provider_config(p).headers == {"X-Api-Key": SECRET}


def test_unmarking_a_secret_needs_the_value_again(app):
    p = create_provider(provider_data())
    with pytest.raises(ValidationError) as info:
        update_provider(
            p.id, {"headers": [{"key": "Authorization", "value": "", "isSecret": False}]}
        )
    assert fields_of(info) == ["headers[0].value"]
    assert provider_config(p).headers["Authorization"] == SECRET


def test_a_new_secret_header_without_a_value_is_an_error(app):
    p = create_provider(provider_data(headers=[]))
    with pytest.raises(ValidationError) as info:
        update_provider(p.id, {"headers": [{"key": "X-Key", "value": "", "isSecret": True}]})
    assert fields_of(info) == ["headers[0].value"]


def test_a_blank_header_row_removes_nothing_else_and_is_skipped(app):
    p = create_provider(
        provider_data(headers=[{"key": "", "value": ""}, {"key": "X-A", "value": "1"}])
    )
    assert [h.key for h in p.headers] == ["X-A"]


def test_headers_left_out_of_the_list_are_removed(app):
    p = create_provider(provider_data())
    update_provider(p.id, {"headers": [{"key": "X-Team", "value": "bench"}]})
    assert provider_config(p).headers == {"X-Team": "bench"}


def test_an_update_without_headers_keeps_them(app):
    p = create_provider(provider_data())
    update_provider(p.id, {"maxConcurrency": 4})
    assert provider_config(get_provider(p.id)).headers["Authorization"] == SECRET


def test_a_failed_update_changes_nothing(app):
    p = create_provider(provider_data())
    with pytest.raises(ValidationError):
        update_provider(p.id, {"name": "renamed", "headers": [{"key": "bad key", "value": "x"}]})
    fresh = get_provider(p.id)
    assert fresh.name == "p1" and len(list(fresh.headers)) == 2


def test_changing_the_type_switches_default_endpoints(app):
    p = create_provider(provider_data(type="OLLAMA"))
    p = update_provider(p.id, {"type": "OPENAI"})
    assert (p.models_endpoint, p.inference_endpoint) == ("/v1/models", "/v1/chat/completions")


def test_changing_the_type_keeps_custom_endpoints(app):
    p = create_provider(provider_data(type="OPENAI", modelsEndpoint="/api/v1/models"))
    p = update_provider(p.id, {"type": "OLLAMA"})
    assert p.models_endpoint == "/api/v1/models"


def test_unknown_provider_is_not_found(app):
    with pytest.raises(NotFound):
        get_provider(999)
    with pytest.raises(NotFound):
        delete_provider(999)


def test_delete_removes_the_headers(app):
    p = create_provider(provider_data())
    delete_provider(p.id)
    assert ProviderHeader.select().count() == 0


# -- talking to the server ----------------------------------------------------------------


@pytest.mark.parametrize("ptype", ["OPENAI", "OLLAMA"])
def test_list_models_asks_the_server(app, fake, ptype):
    fake.models = ["zeta", "alpha"]
    p = create_provider(provider_data(type=ptype, baseUrl=fake.url))
    assert [m["id"] for m in list_models(p.id)] == ["alpha", "zeta"]
    assert fake.calls[-1]["headers"]["Authorization"] == SECRET


def test_list_models_is_cached_briefly_and_refresh_asks_again(app, fake):
    p = create_provider(provider_data(baseUrl=fake.url))
    list_models(p.id)
    list_models(p.id)
    assert len(fake.calls) == 1
    list_models(p.id, refresh=True)
    assert len(fake.calls) == 2


def test_editing_a_provider_forgets_its_cached_models(app, fake):
    p = create_provider(provider_data(baseUrl=fake.url))
    list_models(p.id)
    update_provider(p.id, {"maxConcurrency": 2})
    list_models(p.id)
    assert len(fake.calls) == 2


def test_list_models_on_a_closed_port_is_a_clear_error(app):
    p = create_provider(provider_data(baseUrl=closed_port_url()))
    with pytest.raises(ProviderError) as info:
        list_models(p.id)
    assert "connect" in info.value.message.lower()
    assert SECRET not in info.value.message


@pytest.mark.parametrize(
    "spec",
    [{"malformed": True}, {"status": 500}, {"status": 401}, {"body": "<html>not json</html>"}],
)
def test_list_models_on_a_bad_answer_is_a_clear_error(app, fake, spec):
    fake.enqueue(path="/v1/models", **spec)
    p = create_provider(provider_data(baseUrl=fake.url))
    with pytest.raises(ProviderError) as info:
        list_models(p.id)
    assert info.value.message and SECRET not in info.value.message


@pytest.mark.parametrize("ptype", ["OPENAI", "OLLAMA"])
def test_test_inference_returns_answer_and_metrics(app, fake, ptype):
    text = "Hello there, friend. How nice to see you again today."
    fake.enqueue(text, chunk_delay=0.05)  # ~450 ms: a rate even for a starved reader
    p = create_provider(provider_data(type=ptype, baseUrl=fake.url))
    result = run_test_inference(p.id, "fake-model", "Say hello")
    assert result["success"] is True and result["error"] is None
    assert result["answer"] == text
    assert result["wall_ms"] > 0 and result["ttft_ms"] is not None
    assert result["tokens"] and result["tokens_per_second"] and result["tps_source"]
    assert result["raw"]
    body = fake.chat_calls()[-1]["body"]
    assert body["messages"] == [{"role": "user", "content": "Say hello"}]


def test_test_inference_on_a_closed_port_reports_the_error(app):
    p = create_provider(provider_data(baseUrl=closed_port_url()))
    result = run_test_inference(p.id, "m", "hi")
    assert result["success"] is False and "connect" in result["error"].lower()
    assert SECRET not in repr(result)


def test_test_inference_on_a_server_error_reports_it(app, fake):
    fake.enqueue("model exploded", status=500)
    p = create_provider(provider_data(baseUrl=fake.url))
    result = run_test_inference(p.id, "m", "hi")
    assert result["success"] is False and "500" in result["error"]


def test_test_inference_on_a_slow_server_times_out_with_a_message(app, fake):
    fake.enqueue("late", latency=3)
    p = create_provider(provider_data(baseUrl=fake.url, timeoutSeconds=1))
    result = run_test_inference(p.id, "m", "hi")
    assert result["success"] is False and "time" in result["error"].lower()


@pytest.mark.parametrize(("model", "prompt", "field"), [("", "hi", "model"), ("m", " ", "prompt")])
def test_test_inference_needs_a_model_and_a_prompt(app, model, prompt, field):
    p = create_provider(provider_data())
    with pytest.raises(ValidationError) as info:
        run_test_inference(p.id, model, prompt)
    assert fields_of(info) == [field]


# -- price table --------------------------------------------------------------------------


def test_set_price_inserts_then_updates(app):
    set_price("openrouter", "gpt-x", 1.5, "2")
    set_price("openrouter", "gpt-x", 3, 4)
    [price] = list_prices()
    assert (price.input_per_1m, price.output_per_1m) == (3.0, 4.0)
    assert price_to_dict(price)["providerName"] == "openrouter"


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("", "m", 1, 1), "providerName"),
        (("p", "", 1, 1), "model"),
        (("p", "m", -1, 1), "inputPer1m"),
        (("p", "m", 1, "lots"), "outputPer1m"),
    ],
)
def test_set_price_validates_each_field(app, args, field):
    with pytest.raises(ValidationError) as info:
        set_price(*args)
    assert fields_of(info) == [field]
    assert Price.select().count() == 0


def test_set_prices_is_all_or_nothing(app):
    with pytest.raises(ValidationError) as info:
        set_prices(
            [
                {"providerName": "p", "model": "a", "inputPer1m": 1, "outputPer1m": 1},
                {"providerName": "p", "model": "b", "inputPer1m": -1},
            ]
        )
    assert fields_of(info) == ["[1].inputPer1m"]
    assert Price.select().count() == 0


def test_delete_price(app):
    price = set_price("p", "m", 1, 1)
    delete_price(price.id)
    assert list_prices() == []
    with pytest.raises(NotFound):
        delete_price(price.id)
