"""The test master key, in a module of its own: the worker processes the process tests start
(tests/crash_worker.py, tests/fire_worker.py) import it without importing conftest (pytest,
Flask and every page: seconds per process)."""

import base64

TEST_KEY_B64 = base64.b64encode(b"k" * 32).decode()
