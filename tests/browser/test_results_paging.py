"""The results table's pager in a browser: Next and Previous continue from the page's edge items
(keyset pages, any depth), Last counts from the end, the URL follows, at 1280 and 390 px."""

import pytest

from app.db.connection import database
from tests.browser.helpers import picture
from tests.browser.helpers import serving
from tests.conftest import make_app
from tests.factories import bulk_items
from tests.factories import make_run

pytestmark = [pytest.mark.browser]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A finished run of 2 targets x 60 items (5 pages of 25), served on 127.0.0.1."""
    app = make_app(tmp_path_factory.mktemp("paging"))
    with database.connection_context():
        run, (t1, t2) = make_run("paged", targets=[("local", "alpha"), ("remote", "beta")])
        bulk_items(run, t1, 60, score_of=lambda n: float(n % 7))
        bulk_items(run, t2, 60, start=60, score_of=lambda n: float(n % 7))
    database.close()
    with serving(app, "paging") as base:
        yield base


@pytest.mark.parametrize("width", [1280, 390])
def test_next_previous_and_last_page_through_a_sorted_table(page, server, width):
    from playwright.sync_api import expect

    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{server}/runs/paged/results?sort=score&dir=desc&per_page=25")
    summary, label = page.locator(".rs-summary"), page.locator(".rs-pager > span")
    pager = page.locator(".rs-pager")
    expect(summary).to_contain_text("Items 1–25 of 120")
    pager.locator('a[rel="next"]').click()
    expect(summary).to_contain_text("Items 26–50 of 120")
    second = page.locator("#results-table tbody tr[id^=item-]").all_inner_texts()
    pager.locator('a[rel="next"]').click()
    expect(label).to_have_text("Page 3 of 5")
    assert "after=" in page.url  # the address bar holds the page, shareable
    pager.locator('a[rel="prev"]').click()
    expect(label).to_have_text("Page 2 of 5")
    assert "before=" in page.url
    assert page.locator("#results-table tbody tr[id^=item-]").all_inner_texts() == second
    pager.locator("a", has_text="Last").click()
    expect(summary).to_contain_text("Items 101–120 of 120")
    expect(pager.locator('a[rel="next"]')).to_have_count(0)
    pager.scroll_into_view_if_needed()
    picture(page, f"results-paging-last-{width}")
    page.reload()  # the URL alone brings the same page back
    expect(summary).to_contain_text("Items 101–120 of 120")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.console_errors == []
