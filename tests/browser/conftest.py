"""Browser tests wait on what the page shows, never on the clock; on a busy machine an htmx
swap can take longer than Playwright's 5 s default, so expectations wait up to 20 s.

One chromium (Debian's, never a downloaded one) serves every browser test; each test gets its
own page, whose console errors are kept in `page.console_errors`."""

import os

import pytest

from tests.browser.helpers import CHROMIUM
from tests.browser.helpers import FLAGS
from tests.browser.helpers import settle


@pytest.fixture(autouse=True, scope="session")
def _patient_expectations():
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    sync_api.expect.set_options(timeout=20_000)


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium through Playwright (skipped when either is missing)."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(
            f"{CHROMIUM} not found: install Debian's chromium (apt-get install -y "
            "chromium); these tests never download a browser"
        )
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    """A fresh page at 1280×900 that accepts downloads and keeps its console errors."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(20_000)
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.console_errors = errors
    yield page
    settle(page)
    context.close()
