"""Requests for fuzzing every route of the app: the routes come from its url_map (a new route is
covered as soon as it exists), each request made from a random.Random so that the Hypothesis test
(tests/test_fuzz.py) and the request count of bench/fuzz_requests.py share one generator.

A request is one of: a query string, a form (urlencoded), an upload (multipart with a `file`),
or a JSON body; field names are the ones our forms, queries and bodies read, values the ones that
once answered 500 (issue 26) and their kin.
"""

import io
import json
import re
from urllib.parse import urlencode

from app.db.models import Price
from app.schedules.templates import create_template
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.factories import add_item
from tests.factories import make_run

# Names our pages' forms, query strings and JSON bodies read (templates' name="…", args.get,
# form.get, the API's fields), so fuzzed requests reach the checks behind "unknown field".
NAMES = """
next model category run winner then target refresh q format collection viewport to status sort
runId rating queue providerName per_page name judgeProviderId judgeModel judge from file
webhookUrl until unrated timezone taskIds targetB targetA tags tag state spec source since runs
runB runA rightItemId removeWebhook regressionThreshold prompt pairs page onDuplicate notes
modelTyped min_score max_score maxBudgetUsd leftItemId enabled dir difficulty description cron
copy collectionIds clear blind before base b avg_sort avg_dir after addAll a autosave estimates
from_run item items_mark last limit log_mark perPage preset question size vars rubric taskId
subcategory systemPrompt excellent good pass autoFail templateVersion baseUrl type headers
timeoutSeconds maxConcurrency key value isSecret targets params settings content filename
inputPer1m outputPer1m score kind triggeredBy note
""".split()

HUGE_INT = "9" * 5000
# Values that answered 500 once, and their kin.
NASTY = [
    "",
    " ",
    "x",
    "0",
    "-1",
    "1",
    "2",
    "99999999999999999999",
    "9223372036854775808",
    HUGE_INT,
    "\u00b2",  # a digit to str.isdigit(), not to int()
    "\u0661\u0662",  # Arabic-Indic digits: int() reads them, SQLite's text does not
    "1e309",
    "nan",
    "inf",
    "[" * 5000,
    '{"a":' * 3000,
    "[]",
    "{}",
    '{"a": 1}',
    "[1, 2]",
    "null",
    "true",
    "http://[::1",
    "http://[::1]:80/x",
    "//evil.example/x",
    "/runs/x",
    "javascript:alert(1)",
    "\ud800",
    "a\x00b",
    "%",
    "../../etc/passwd",
    "<script>x</script>",
    "=HYPERLINK(1)",
    "{var}",
    "2025-13-45",
    "2025-01-01",
    "* * * * *",
    "Mars/Olympus",
    "json",
    "csv",
    "jsonl",
    "yaml",
    "OPENAI",
    "OLLAMA",
    "A",
    "B",
    "tie",
    "on",
]
JSON_VALUES = [
    None,
    True,
    0,
    -1,
    2**63,
    10**30,
    1e308,
    "",
    "x",
    "http://[::1",
    [],
    [1],
    {},
    {"a": 1},
    [[[[]]]],
]
FILE_BODIES = [
    "",
    "[" * 5000,
    '{"a":' * 3000,
    f'[{{"score": {HUGE_INT}}}]',
    f'{{"id": "a", "prompt": "b", "n": {HUGE_INT}}}',
    "- id: " + HUGE_INT,
    "[" * 3000 + "]" * 3000,
    "task_id,prompt_template\n1,2\n",
    "run_id,task_id,target,rating\nx,y,z,9\n",
    '{"tasks": [{"id": "a", "prompt": "b", "category": "c"}]}',
    '{"id": "a", "category": "c", "prompt": "q", "vars": "' + "[" * 50 + '"}',
    "\ufeffa,b\n1,2",
    "\x00\xff",
]
FILE_NAMES = ["f.json", "f.jsonl", "f.csv", "f.yaml", "f.txt", "", "../x.json", "f"]
SKIP = ("/static/",)
VARIABLE = re.compile(r"<(?:(\w+):)?(\w+)>")


def app_routes(app):
    """(rule, method) for every route but static files: from the app's own url_map."""
    found = []
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith(SKIP):
            continue
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            found.append((rule.rule, method))
    return sorted(found)


def fill(rule, world, rng):
    """The rule's URL with each variable a real value from `world` or, now and then, a nasty
    one (a route answers 404 for a missing id: fine, but it must not fall over first)."""

    def value(match):
        name = match.group(2)
        if name in world and rng.random() < 0.8:
            return str(rng.choice(world[name]) if isinstance(world[name], list) else world[name])
        return rng.choice(["0", "1", "99999999999999999999", "x", "%F0%9F%92%A9", "-1"])

    return VARIABLE.sub(value, rule)


def _fields(rng, count):
    names = rng.sample(NAMES, count)
    return {name: rng.choice(NASTY) for name in names}


def make_request(rule, method, world, rng):
    """(method, url, kwargs for client.open) of one fuzzed request to `rule`."""
    url = fill(rule, world, rng)
    query = _fields(rng, rng.randint(0, 4))
    kwargs = {
        # A lone surrogate goes out as the bytes a careless client would send (%ED%A0%80).
        "query_string": urlencode(query, encoding="utf-8", errors="surrogatepass"),
    }
    if method == "GET":
        return method, url, kwargs
    kind = rng.choice(["form", "form", "upload", "json"])
    if kind == "form":
        form = _fields(rng, rng.randint(0, 6))
        kwargs["data"] = urlencode(form, encoding="utf-8", errors="surrogatepass")
        kwargs["content_type"] = "application/x-www-form-urlencoded"
    elif kind == "upload":
        text = rng.choice(FILE_BODIES)
        files = {
            "file": (io.BytesIO(text.encode("utf-8", "surrogatepass")), rng.choice(FILE_NAMES))
        }
        # The test client encodes a multipart field as UTF-8: no lone surrogate there.
        form = {
            k: v.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
            for k, v in _fields(rng, 2).items()
        }
        kwargs["data"] = {**form, **files}
        kwargs["content_type"] = "multipart/form-data"
        kwargs["headers"] = {"X-Requested-With": "llmbench"}
    else:
        body = {name: rng.choice(JSON_VALUES + NASTY) for name in rng.sample(NAMES, 4)}
        kwargs["data"] = json.dumps(body).encode("utf-8", "surrogatepass")
        kwargs["content_type"] = "application/json"
    return method, url, kwargs


def send(client, method, url, kwargs):
    """(status, the body's first 200 characters) of one request, its streamed body read through."""
    response = client.open(url, method=method, **kwargs)
    body = response.get_data(as_text=True)
    response.close()
    return response.status_code, body[:200]


def build_world(fake):
    """Something real behind every URL variable: a provider on the fake server, tasks in a
    collection, finished runs with items, a price row and a template."""
    provider = make_provider(fake)
    collection = make_tasks(3)
    run, (target,) = make_run("fuzz-run", targets=(("fake", "m1"),))
    other, (other_target,) = make_run("fuzz-run-2", targets=(("fake", "m2"),))
    items = [add_item(run, target, f"t{i}", score=50.0 + i) for i in range(3)]
    items += [add_item(other, other_target, f"t{i}", score=40.0 + i) for i in range(3)]
    price = Price.create(provider_name="fake", model="m1", input_per_1m=1, output_per_1m=2)
    spec = {
        "judgeProviderId": provider.id,
        "judgeModel": "judge",
        "collectionIds": [collection.id],
        "targets": [{"providerId": provider.id, "model": "m1"}],
    }
    template = create_template({"name": "fuzz-template", "spec": spec})
    return {
        "run_id": ["fuzz-run", "fuzz-run-2"],
        "item_id": [i.id for i in items],
        "provider_id": provider.id,
        "task_pk": [m.task_id for m in collection.memberships],
        "collection_id": collection.id,
        "price_id": price.id,
        "template_id": template.id,
        "kind": ["ratings", "votes"],
        "name": ["score", "speed", "latency", "category", "ratings", "cost_quality", "tokens"],
    }


def describe(kwargs):
    """A request's input, short enough to print: query, form or body, and the upload's name."""
    shown = {"query": kwargs.get("query_string", "")[:160]}
    data = kwargs.get("data")
    if isinstance(data, dict):
        shown["form"] = {k: (v[1] if isinstance(v, tuple) else v[:40]) for k, v in data.items()}
    elif data is not None:
        shown["body"] = data[:160]
    return shown
