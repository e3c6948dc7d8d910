"""The example promptfoo suite (docs/examples/promptfoo) under the real promptfoo and under
`llmbench run -c`, on the same fixed answers from the fake server: a table of each test case x
provider, with promptfoo's and llmbench's pass/fail and each assert's (✓/✗), in suite order.

Install promptfoo once, outside the repository (node 20.20+ and the npm registry):

    mkdir -p /tmp/pf && cd /tmp/pf && npm init -y && npm install promptfoo@0.121

then, from the repository:

    LLMBENCH_PROMPTFOO=/tmp/pf .venv/bin/python bench/promptfoo_agreement.py
    LLMBENCH_PROMPTFOO=/tmp/pf .venv/bin/python -m pytest tests/test_promptfoo_agrees.py

promptfoo runs with its telemetry, update check and sharing off, no cache, its config folder in
a temp folder. Exits 1 when any assert differs.
"""

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import promptfoo_compare as pf
from tests.cli_helpers import make_cli
from tests.fakeserver import FakeServer


def main():
    executable = pf.find_promptfoo()
    if executable is None:
        sys.exit("promptfoo not found: set LLMBENCH_PROMPTFOO to its npm folder (see --help)")
    with tempfile.TemporaryDirectory() as folder, FakeServer() as fake:
        work = Path(folder)
        fake.models = list(pf.MODELS)
        fake.responder = pf.answer
        os.environ["OLLAMA_BASE_URL"] = fake.url
        os.environ.pop("OPENAI_API_KEY", None)
        suite = pf.copy_suite(work / "promptfoo", fake.url)
        theirs = pf.run_promptfoo(executable, suite, fake.url, work)
        ours = pf.run_llmbench(make_cli(work), suite)
        compared = pf.compare(pf.suite_tests(suite), theirs, ours)
    print(pf.table(compared))
    same = sum(theirs == ours for _, _, theirs, ours in compared)
    print(f"\n{same} of {len(compared)} test cases agree on every assert")
    return 0 if same == len(compared) else 1


if __name__ == "__main__":
    if "--help" in sys.argv or "-h" in sys.argv:
        print(__doc__)
        sys.exit(0)
    sys.exit(main())
