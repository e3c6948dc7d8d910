"""The run list on a phone (390 px): each run's score (best / worst target) is on screen beside
its run, with no sideways scroll of the page or the table's box."""

import pytest

from app.db.connection import database
from tests.browser.helpers import serving
from tests.conftest import make_app
from tests.factories import add_item
from tests.factories import make_run

pytestmark = [pytest.mark.browser]

LONG_MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct-Q8_0-GGUF"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A run of two profiles of one long-named model, scored."""
    app = make_app(tmp_path_factory.mktemp("run-list-phone"))
    with database.connection_context():
        run, targets = make_run(
            "small-bars",
            targets=[
                ("smollm-real", LONG_MODEL, {"temperature": 0.2}),
                ("smollm-real", LONG_MODEL, {"temperature": 0.8, "top_p": 0.9}),
            ],
        )
        for n, target in enumerate(targets):
            add_item(run, target, "t1", score=40.8 - n)
    database.close()
    with serving(app, "run-list-phone") as base:
        yield base


def test_at_390_px_the_score_is_on_screen_and_nothing_scrolls_sideways(browser, server):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        page.goto(f"{server}/runs/")
        score = page.locator(".history-table tbody td", has_text="40.8 / 39.8")
        box = score.bounding_box()
        assert box and box["x"] + box["width"] <= 390
        wrap = page.locator(".table-wrap").first
        assert wrap.evaluate("w => w.scrollWidth <= w.clientWidth + 1")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        context.close()
