"""Accounts in the browser (issue 30): signing in through the form (CSRF on) and out, the nav
naming who is signed in, and at 390 px the menu folded behind "Menu", which opens with no
script, so a page's content starts near the top."""

import pytest

from app.accounts.store import add_account
from app.db.connection import database
from tests.browser.helpers import serving
from tests.browser.helpers import shot
from tests.conftest import make_app

pytestmark = [pytest.mark.browser]
PASSWORD = "a long enough password"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The app with CSRF on and two accounts: a rater and an admin."""
    app = make_app(tmp_path_factory.mktemp("accounts-ui"), WTF_CSRF_ENABLED=True)
    with database.connection_context():
        add_account("rae", "rater", PASSWORD)
        add_account("root", "admin", PASSWORD)
    with serving(app, "accounts-ui-server") as base:
        yield base


def sign_in(page, base, name):
    page.goto(base + "/runs/")
    assert "/login" in page.url  # an account exists: a page asks for a login first
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORD)
    page.click("button:has-text('Sign in')")
    page.wait_for_url(base + "/runs/")


def test_a_rater_signs_in_sees_their_name_and_signs_out(page, server):
    from playwright.sync_api import expect

    sign_in(page, server, "rae")
    expect(page.locator(".signout__who")).to_have_text("rae (rater)")
    expect(page.locator("nav.topnav a:has-text('Audit')")).to_have_count(0)
    page.click("button:has-text('Sign out')")
    expect(page.locator("h1")).to_have_text("Sign in")
    page.goto(server + "/runs/")
    assert "/login" in page.url
    assert page.console_errors == []


def test_at_390_px_the_menu_folds_and_opens_without_script(browser, server):
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 390, "height": 844}, java_script_enabled=False)
    page = context.new_page()
    try:
        sign_in(page, server, "root")
        heading = page.locator("main h1").first.bounding_box()
        assert heading["y"] < 200, heading
        runs_link = page.locator("nav.topnav a:has-text('Runs')")
        expect(runs_link).to_be_hidden()
        page.click("label.menu-button")
        expect(runs_link).to_be_visible()
        expect(page.locator("nav.topnav a:has-text('Audit')")).to_be_visible()
        shot(page, "menu-open-390")
        runs_link.click()
        page.wait_for_url(server + "/runs/")
    finally:
        context.close()


def test_at_1280_px_the_links_show_with_no_menu_button(page, server):
    from playwright.sync_api import expect

    sign_in(page, server, "rae")
    expect(page.locator("label.menu-button")).to_be_hidden()
    expect(page.locator("nav.topnav a:has-text('Runs')")).to_be_visible()


def test_an_admin_adds_a_rater_on_the_accounts_page_who_then_signs_in(browser, page, server):
    from playwright.sync_api import expect

    sign_in(page, server, "root")
    page.click("nav.topnav a:has-text('Accounts')")
    page.fill("#f-name", "newbie")
    page.select_option("#f-role", "rater")
    page.fill("#f-password", PASSWORD)
    page.fill("#f-passwordAgain", PASSWORD)
    page.click("button:has-text('Add account')")  # a plain form post, its CSRF token with it
    page.wait_for_url(server + "/accounts/newbie")
    expect(page.locator("#account-newbie select")).to_have_value("rater")
    context = browser.new_context()
    try:
        other = context.new_page()
        sign_in(other, server, "newbie")
        expect(other.locator(".signout__who")).to_have_text("newbie (rater)")
    finally:
        context.close()
    assert page.console_errors == []
