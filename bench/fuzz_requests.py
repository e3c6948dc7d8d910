"""No 500 from any input, counted: fuzzed requests to every route of the app (its url_map: API,
pages, forms, uploads, query strings), in process through Flask's test client, with the request
generator of tests/test_fuzz.py (tests/fuzzing.py).

Prints the requests sent, the count per status class, and each answer >= 500 with its route and
input. Bounded: --requests in all, spread over the routes in turn; --start picks the random
sequence (the same number sends the same requests).

    .venv/bin/python bench/fuzz_requests.py [--requests 20000] [--start 0]

Limits under which it runs (LLMBENCH_*): LLMBENCH_MAX_UPLOAD_MB=1 (uploads and form bodies).
"""

import argparse
import base64
import collections
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.db.connection import database
from app.factory import create_app
from tests import fuzzing
from tests.fakeserver import FakeServer

LIMITS = {"MAX_UPLOAD_MB": 1}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--start", type=int, default=0, help="the random sequence to send")
    args = parser.parse_args()
    for name in list(os.environ):
        if name.startswith("LLMBENCH_"):
            del os.environ[name]
    for name, value in LIMITS.items():
        os.environ[f"LLMBENCH_{name}"] = str(value)

    fake = FakeServer()
    fake.start()
    tmp = Path(tempfile.mkdtemp(prefix="fuzz-requests-"))
    app = create_app(
        {
            "TESTING": True,
            "PROPAGATE_EXCEPTIONS": False,  # an exception is a 500, counted, not raised
            "DB": str(tmp / "fuzz.db"),
            "MASTER_KEY_BASE64": base64.b64encode(b"k" * 32).decode(),
            "SCHEDULER_ENABLED": False,
            "LOAD_DEFAULTS": False,
            "WTF_CSRF_ENABLED": False,
            "SECRET_KEY": "fuzz",
            "SYSMETRICS_SECONDS": 0,
        }
    )
    app.logger.disabled = True  # the 500s are printed below, once each
    client = app.test_client()
    with app.app_context():
        world = fuzzing.build_world(fake)
    routes = fuzzing.app_routes(app)
    rng = random.Random(args.start)
    classes = collections.Counter()
    failures = []
    started = time.perf_counter()
    for n in range(args.requests):
        rule, method = routes[n % len(routes)]
        method, url, kwargs = fuzzing.make_request(rule, method, world, rng)
        status, body = fuzzing.send(client, method, url, kwargs)
        classes[f"{status // 100}xx"] += 1
        if status >= 500:
            failures.append((status, method, rule, url, fuzzing.describe(kwargs), body))
    seconds = time.perf_counter() - started
    fake.stop()
    if not database.is_closed():
        database.close()

    print(f"limits: {', '.join(f'LLMBENCH_{k}={v}' for k, v in LIMITS.items())}")
    print(f"routes: {len(routes)} (rule, method) pairs from the url_map")
    print(f"requests sent: {args.requests} in {seconds:.0f} s (--start {args.start})")
    for name in sorted(classes):
        print(f"  {name}: {classes[name]}")
    print(f"answers >= 500: {len(failures)}")
    for status, method, rule, url, given, body in failures[:50]:
        print(f"  {status} {method} {rule}  url={url[:120]!r}  input={given}")
        print(f"      answer: {body!r}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
