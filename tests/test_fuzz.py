"""No 500 from any input: property-based fuzzing (Hypothesis) of every JSON endpoint, every route's
query strings, forms and uploads, the import formats, and the replies a model server may send.

Bounded and seeded (derandomize=True, a fixed number of examples per endpoint) so CI runs the
same requests every time. Each test prints how many requests it sent and how many got >= 500
(see them with `pytest -s tests/test_fuzz.py`).
"""

import csv
import io
import json
from urllib.parse import urlencode

import pytest
import yaml
from flask import Flask
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from app.api import bp as api_bp
from app.db.models import Price
from app.providers.interface import Completion
from app.providers.interface import ProviderConfig
from app.providers.interface import ProviderError
from app.providers.ollama import OllamaAdapter
from app.providers.openai import OpenAIAdapter
from app.web import init_app as web_init
from tests import fuzzing
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.factories import add_item
from tests.factories import make_run

EXAMPLES = 40  # per endpoint and method
SETTINGS = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
TALLY = {"requests": 0, "5xx": 0}

# The field names our JSON endpoints read, so fuzzed bodies get past "unknown field" and reach
# the checks behind it.
FIELDS = [
    "name",
    "type",
    "baseUrl",
    "modelsEndpoint",
    "inferenceEndpoint",
    "headers",
    "timeoutSeconds",
    "maxConcurrency",
    "key",
    "value",
    "isSecret",
    "id",
    "taskId",
    "task_id",
    "category",
    "subcategory",
    "difficulty",
    "question",
    "systemPrompt",
    "excellent",
    "good",
    "pass",
    "passAnswer",
    "incorrectDirection",
    "rubric",
    "autoFail",
    "tags",
    "vars",
    "templateVersion",
    "description",
    "taskIds",
    "collectionIds",
    "runId",
    "judgeProviderId",
    "judgeModel",
    "judgeParams",
    "targets",
    "targetModels",
    "providerId",
    "model",
    "params",
    "settings",
    "maxAttempts",
    "maxBudgetUsd",
    "questionLimit",
    "categories",
    "format",
    "content",
    "filename",
    "collection",
    "onDuplicate",
    "includeDetailed",
    "prompt",
    "providerName",
    "inputPer1m",
    "outputPer1m",
]
SPECIAL = [
    "",
    " ",
    "x",
    "OPENAI",
    "OLLAMA",
    "http://127.0.0.1:9",
    "\ud800",
    "a\udfffb",
    "\x00",
    "=HYPERLINK(1)",
    "{var}",
    "<script>alert(1)</script>",
    "9" * 40,
    -1,
    0,
    1,
    2**63,
    -(2**63) - 1,
    1e308,
    float("inf"),
    float("nan"),
    True,
    [],
    {},
]
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from(SPECIAL)
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=8) | st.sampled_from(FIELDS), children, max_size=5)
    ),
    max_leaves=12,
)
bodies = st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=8) | json_values
# Bodies no parser or route should fall over on, sent as they are.
RAW_BODIES = [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    b'{"name": "\\ud800", "question": "\\udfff"}',
    b'{"name": "ok", "tags": ["\\ud83d"]}',
    b"\xff\xfe\x00garbage",
    b"{",
    b"1e999999",
    b"null",
    b'"just a string"',
    b"[1, 2, 3]",
    b"",
]
CONTENT_TYPES = ["application/json", "text/plain", "application/x-www-form-urlencoded"]


@pytest.fixture
def world(app, fake):
    """Something real behind every id: a provider on the fake server, tasks, a collection, a
    finished run with an item, a price row."""
    provider = make_provider(fake)
    collection = make_tasks(3)
    run, (target,) = make_run("fuzz-run")
    item = add_item(run, target, "t1", score=50.0)
    price = Price.create(provider_name="fake", model="m1", input_per_1m=1, output_per_1m=2)
    return {
        "run_id": "fuzz-run",
        "item_id": item.id,
        "provider_id": provider.id,
        "task_pk": collection.memberships[0].task_id,
        "collection_id": collection.id,
        "price_id": price.id,
    }


def api_rules():
    """(rule, method) for every JSON endpoint, from the API blueprint's own routes."""
    app = Flask("fuzz-rules")
    app.register_blueprint(api_bp)
    found = []
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/"):
            continue
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            found.append((rule.rule, method))
    return sorted(found)


RULES = api_rules()


def fill(rule, world, choice):
    """The rule's URL with its variables filled: a real id, or a fuzzed one."""
    url = rule
    for name, value in world.items():
        for form in (f"<{name}>", f"<int:{name}>"):
            if form in url:
                url = url.replace(form, str(value if choice is None else choice))
    return url


def send(client, method, url, **kwargs):
    response = client.open(url, method=method, **kwargs)
    response.get_data()  # streamed replies are read through
    response.close()
    TALLY["requests"] += 1
    if response.status_code >= 500:
        TALLY["5xx"] += 1
    return response


@pytest.mark.parametrize(("rule", "method"), RULES, ids=[f"{m} {r}" for r, m in RULES])
def test_no_json_endpoint_answers_500(app, client, world, rule, method):
    before = dict(TALLY)

    @SETTINGS
    @given(
        body=bodies,
        path=st.none() | st.sampled_from(["0", "-1", "99999999", "x", "%F0%9F%92%A9", "a/b"]),
        query=st.dictionaries(
            st.sampled_from(
                FIELDS
                + [
                    "page",
                    "perPage",
                    "since",
                    "limit",
                    "status",
                    "state",
                    "target",
                    "a",
                    "b",
                    "estimates",
                ]
            ),
            st.text(max_size=12) | st.sampled_from(["-1", "0", "1e9", "\ud800"]),
            max_size=3,
        ),
        content_type=st.sampled_from(CONTENT_TYPES),
    )
    def fuzz(body, path, query, content_type):
        url = fill(rule, world, path)
        data = json.dumps(body, allow_nan=True).encode("utf-8", "surrogatepass")
        response = send(
            client,
            method,
            url,
            data=data,
            # A lone surrogate goes out as the bytes a careless client would send (%ED%A0%80).
            query_string=urlencode(query, encoding="utf-8", errors="surrogatepass"),
            headers={"Content-Type": content_type},
        )
        assert response.status_code < 500, (method, url, body, response.get_data(as_text=True))

    fuzz()
    for raw in RAW_BODIES:
        response = send(
            client,
            method,
            fill(rule, world, None),
            data=raw,
            headers={"Content-Type": "application/json"},
        )
        assert response.status_code < 500, (method, rule, raw[:40], response.status_code)
    sent = TALLY["requests"] - before["requests"]
    print(f"\n{method} {rule}: {sent} requests, {TALLY['5xx'] - before['5xx']} answers >= 500")
    print(f"total so far: {TALLY['requests']} requests, {TALLY['5xx']} answers >= 500")


# ---- the import formats ----------------------------------------------------------------------

SEED004_KEYS = [
    "id",
    "category",
    "difficulty",
    "scenario",
    "prompt",
    "rubric",
    "auto_fail",
    "version",
    "source",
    "system_prompt",
    "excellent",
    "good",
    "pass",
    "tags",
    "vars",
]
SEED003_KEYS = [
    "task_id",
    "template_version",
    "prompt_template",
    "input_text",
    "vars_json",
    "category",
    "difficulty",
    "excellent",
    "rubric_json",
    "auto_fail_json",
]
SEED001_KEYS = [
    "task_id",
    "category",
    "sub_category",
    "difficulty",
    "question",
    "expected_answer",
    "incorrect_direction",
    "tags",
]


def jsonl(keys):
    rows = st.lists(st.dictionaries(st.sampled_from(keys), json_values, max_size=8), max_size=4)
    garbage = st.lists(st.text(max_size=20), max_size=2)
    return st.tuples(rows, garbage).map(lambda t: "\n".join([json.dumps(r) for r in t[0]] + t[1]))


def csv_text():
    def write(t):
        header, rows = t
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(header)
        writer.writerows(rows)
        return out.getvalue()

    header = st.lists(st.sampled_from(SEED003_KEYS + ["bogus"]), min_size=1, max_size=6)
    rows = st.lists(st.lists(st.text(max_size=15), max_size=7), max_size=4)
    return st.tuples(header, rows).map(write) | st.text(max_size=60)


def yaml_text():
    docs = st.lists(
        st.dictionaries(st.sampled_from(SEED001_KEYS), json_values, max_size=6), max_size=3
    )
    return docs.map(lambda d: yaml.safe_dump(d, allow_unicode=True)) | st.text(max_size=60)


def json_doc():
    docs = st.fixed_dictionaries(
        {
            "tasks": st.lists(
                st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=6), max_size=3
            )
        },
        optional={"collections": json_values, "format": json_values},
    )
    return docs.map(lambda d: json.dumps(d, allow_nan=True)) | st.text(max_size=60)


FORMAT_CONTENT = {
    "jsonl": jsonl(SEED004_KEYS),
    "runner-jsonl": jsonl(SEED003_KEYS),
    "csv": csv_text(),
    "yaml": yaml_text(),
    "json": json_doc(),
}


@pytest.mark.parametrize("fmt", sorted(FORMAT_CONTENT))
def test_no_import_answers_500(app, client, world, fmt):
    before = dict(TALLY)

    @SETTINGS
    @given(
        content=FORMAT_CONTENT[fmt],
        given_format=st.sampled_from([fmt, None, "auto", "bogus"]),
        on_duplicate=st.sampled_from(["reject", "skip", "update", "bogus"]),
        as_upload=st.booleans(),
        filename=st.sampled_from(["tasks." + fmt.split("-")[-1], "x.txt", "", "../../etc/x"]),
    )
    def fuzz(content, given_format, on_duplicate, as_upload, filename):
        if as_upload:
            response = send(
                client,
                "POST",
                "/api/tasks/import",
                data={
                    "file": (io.BytesIO(content.encode("utf-8", "surrogatepass")), filename or "f"),
                    **({"format": given_format} if given_format else {}),
                    "onDuplicate": on_duplicate,
                },
                headers={"X-Requested-With": "llmbench"},
                content_type="multipart/form-data",
            )
        else:
            body = {
                "content": content,
                "format": given_format,
                "onDuplicate": on_duplicate,
                "filename": filename,
            }
            response = send(
                client,
                "POST",
                "/api/tasks/import",
                data=json.dumps(body).encode("utf-8", "surrogatepass"),
                headers={"Content-Type": "application/json"},
            )
        assert response.status_code < 500, (fmt, content, response.get_data(as_text=True))

    fuzz()
    sent = TALLY["requests"] - before["requests"]
    print(f"\nimport {fmt}: {sent} requests, {TALLY['5xx'] - before['5xx']} answers >= 500")
    print(f"total so far: {TALLY['requests']} requests, {TALLY['5xx']} answers >= 500")


SURROGATE_BODIES = [
    ("POST", "/api/tasks", {"taskId": "s1", "category": "c", "question": "\ud800"}, "question"),
    (
        "POST",
        "/api/providers",
        {"name": "p\ud800", "type": "OPENAI", "baseUrl": "http://127.0.0.1:9"},
        "name",
    ),
    ("POST", "/api/collections", {"name": "c\udfff"}, "name"),
    (
        "PUT",
        "/api/prices",
        {"providerName": "p\ud800", "model": "m", "inputPer1m": 1, "outputPer1m": 1},
        "providerName",
    ),
    (
        "POST",
        "/api/tasks/import",
        {"content": '{"id": "a", "category": "c", "prompt": "\ud800"}', "format": "jsonl"},
        "content",
    ),
]


@pytest.mark.parametrize(
    ("method", "url", "body", "field"),
    SURROGATE_BODIES,
    ids=[f"{m} {u}" for m, u, _b, _f in SURROGATE_BODIES],
)
def test_a_lone_surrogate_is_a_400_naming_where(client, method, url, body, field):
    data = json.dumps(body).encode()  # "\ud800" escaped, as a client would send it
    response = send(client, method, url, data=data, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.get_json()["errors"][0]["field"] == f"body.{field}"


def test_a_non_text_filename_is_a_400(client):
    response = client.post(
        "/api/tasks/import", json={"content": '{"id": "a", "prompt": "b"}', "filename": 5}
    )
    assert response.status_code == 400 and response.get_json()["errors"][0]["field"] == "filename"


# ---- what a model server may send -------------------------------------------------------------

reply_bodies = st.recursive(
    scalars,
    lambda c: (
        st.lists(c, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "choices",
                    "message",
                    "delta",
                    "content",
                    "model",
                    "usage",
                    "timings",
                    "finish_reason",
                    "error",
                    "done",
                    "eval_count",
                    "eval_duration",
                    "response",
                    "text",
                    "type",
                    "prompt_tokens",
                    "completion_tokens",
                ]
            ),
            c,
            max_size=5,
        )
    ),
    max_leaves=10,
)
ODD_REPLIES = [
    {"choices": "abc"},
    {"choices": [{"message": {"content": [{"type": "text", "text": "hi"}]}}]},
    {"choices": [{"message": {"content": ["a", {"text": "b"}]}}]},
    {"choices": [{"message": "abc"}]},
    {"choices": [None]},
    {"choices": [{"message": {"content": {"nested": 1}}}]},
    {"message": "abc", "done": True},
    {"message": {"content": 5}, "done": True},
]


def adapter_for(fake, kind):
    cls, endpoints = {
        "OPENAI": (OpenAIAdapter, ("/v1/models", "/v1/chat/completions")),
        "OLLAMA": (OllamaAdapter, ("/api/tags", "/api/chat")),
    }[kind]
    return cls(ProviderConfig("t", kind, fake.url, *endpoints, timeout=5.0))


@pytest.mark.parametrize("kind", ["OPENAI", "OLLAMA"])
def test_odd_reply_shapes_are_read_or_refused_never_a_crash(fake, kind):
    adapter = adapter_for(fake, kind)
    for body in ODD_REPLIES:
        fake.enqueue(body=body)
        try:
            result = adapter.chat("m", [{"role": "user", "content": "hi"}], stream=False)
        except ProviderError as exc:
            assert exc.kind == "malformed", (body, exc.message)
        else:
            assert isinstance(result, Completion) and isinstance(result.text, str)
    adapter.close()


@pytest.mark.parametrize("kind", ["OPENAI", "OLLAMA"])
@pytest.mark.parametrize("stream", [False, True])
def test_fuzzed_replies_never_raise_anything_but_a_provider_error(fake, kind, stream):
    adapter = adapter_for(fake, kind)

    @SETTINGS
    @given(body=reply_bodies)
    def fuzz(body):
        if stream:
            line = json.dumps(body, allow_nan=True)
            raw = f"data: {line}\n\ndata: [DONE]\n\n" if kind == "OPENAI" else line + "\n"
            fake.enqueue(body=raw.encode("utf-8", "surrogatepass"))
        else:
            fake.enqueue(body=json.dumps(body, allow_nan=True).encode("utf-8", "surrogatepass"))
        try:
            result = adapter.chat("m", [{"role": "user", "content": "hi"}], stream=stream)
        except ProviderError:
            return
        assert isinstance(result.text, str)

    fuzz()
    adapter.close()


# ---- every route: query strings, forms, uploads, JSON (tests/fuzzing.py) ----------------------

ROUTE_EXAMPLES = 8  # per route and method: 174 of them today, about 1 400 requests


def _all_routes():
    app = Flask("fuzz-routes")
    web_init(app)
    return fuzzing.app_routes(app)


ROUTES = _all_routes()


@pytest.mark.parametrize(("rule", "method"), ROUTES, ids=[f"{m} {r}" for r, m in ROUTES])
def test_no_route_answers_500_to_fuzzed_forms_queries_or_uploads(app, client, fake, rule, method):
    world = fuzzing.build_world(fake)
    before = dict(TALLY)

    @settings(SETTINGS, max_examples=ROUTE_EXAMPLES)
    @given(rng=st.randoms(use_true_random=False))
    def fuzz(rng):
        method_, url, kwargs = fuzzing.make_request(rule, method, world, rng)
        response = send(client, method_, url, **kwargs)
        assert response.status_code < 500, (method_, url, kwargs, response.status_code)

    fuzz()
    sent = TALLY["requests"] - before["requests"]
    print(f"\n{method} {rule}: {sent} requests, {TALLY['5xx'] - before['5xx']} answers >= 500")
