"""Browser tests wait on what the page shows, never on the clock; on a busy machine an htmx
swap can take longer than Playwright's 5 s default, so expectations wait up to 20 s."""

import pytest


@pytest.fixture(autouse=True, scope="session")
def _patient_expectations():
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    sync_api.expect.set_options(timeout=20_000)
