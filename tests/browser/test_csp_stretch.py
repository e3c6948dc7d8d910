"""No Content-Security-Policy error over a long keyboard stretch: 100 cards rated on /evaluate
and 20 A/B votes, every console message and every `securitypolicyviolation` event collected
from the first script on (htmx's indicator <style> was one: it is turned off by a meta tag htmx
reads when it loads, whatever order the scripts run in)."""

import pytest

from app.db.connection import database
from tests.browser.helpers import serving
from tests.conftest import make_app
from tests.factories import T0
from tests.factories import add_item
from tests.factories import bulk_items
from tests.factories import make_run

pytestmark = [pytest.mark.browser]

CARDS = 100
VOTES = 20
WAIT = 20_000
# Before any script of the page: every refusal the browser makes, kept on window.
WATCH = """window.__csp = [];
document.addEventListener('securitypolicyviolation',
  e => window.__csp.push(
    `${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`));"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    app = make_app(tmp_path_factory.mktemp("csp"), WTF_CSRF_ENABLED=True)
    with app.app_context():
        run, targets = make_run("rate", targets=[("local", "llama3", {"temperature": 0.2})])
        bulk_items(run, targets[0], CARDS + 5, answered_at=T0)
        small, pair = make_run("ab", targets=[("local", "alpha"), ("local", "beta")])
        for target in pair:
            for n in range(VOTES + 3):
                add_item(small, target, f"q{n:02d}", score=50.0, answer=f"Answer {n}")
        ids = [t.id for t in pair]
    database.close()
    with serving(app, "csp-server") as base:
        yield {"base": base, "ab": ids}


@pytest.fixture
def watched(browser):
    """A page whose console messages and CSP refusals are all kept, from its first script."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(WATCH)
    page = context.new_page()
    page.set_default_timeout(WAIT)
    page.messages = []
    page.on("console", lambda m: page.messages.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: page.messages.append(f"pageerror: {e}"))
    yield page
    context.close()


def _refusals(page):
    found = [m for m in page.messages if "Content Security Policy" in m or "violates" in m]
    return found + page.evaluate("window.__csp")


def test_100_cards_rated_by_keyboard_log_no_csp_error(watched, server):
    from playwright.sync_api import expect

    page = watched
    page.goto(server["base"] + "/evaluate?run=rate&unrated=1")
    card = page.locator("#card article")
    for n in range(CARDS):
        item = card.get_attribute("data-item")
        page.keyboard.press(str(1 + n % 5))  # a rating moves to the next card
        expect(card).not_to_have_attribute("data-item", item, timeout=WAIT)
    assert not _refusals(page), _refusals(page)
    assert not [m for m in page.messages if m.startswith(("error", "pageerror"))]


def test_20_ab_votes_by_keyboard_log_no_csp_error(watched, server):
    from playwright.sync_api import expect

    page = watched
    a, b = server["ab"]
    page.goto(server["base"] + f"/ab?runA=ab&targetA={a}&targetB={b}")
    for n in range(VOTES):
        # A pair takes keys once it has been on screen a moment (ab.js): wait as a reader would.
        expect(page.locator("#pair article[data-ready]")).to_have_count(1, timeout=WAIT)
        page.keyboard.press("qwe"[n % 3])
        expect(page.locator("#ab-progress")).to_have_text(
            f"{n + 1} of {VOTES + 3} pairs voted", timeout=WAIT
        )
    assert not _refusals(page), _refusals(page)
    assert not [m for m in page.messages if m.startswith(("error", "pageerror"))]


def test_htmx_is_told_not_to_add_its_style_before_it_loads(watched, server):
    page = watched
    page.goto(server["base"] + "/")
    page.wait_for_load_state("networkidle")
    assert page.evaluate("htmx.config.includeIndicatorStyles") is False
    assert page.locator("head style").count() == 0
    assert not _refusals(page)
