"""Issue 30's "Done when" in the browser: two rater accounts sign in through the login form,
each rates the same answers on /evaluate and votes the same pairs on /ab by keyboard, in their
own queue; the leaderboard then shows Krippendorff's α and Fleiss' κ between them with n and
an interval; a viewer reads the cards but has no rating form, and a rating posted as a viewer
is refused with 403.

As the issue says: 60 answers rated (two targets answering 30 tasks) and 20 of the 30 pairs
voted by each rater; each votes in their own shuffled order, so the pairs both voted (κ's n)
are at least 10."""

import pytest

from app.accounts.store import add_account
from app.db.connection import database
from app.db.models import Rating
from app.db.models import Vote
from tests.browser.helpers import serving
from tests.conftest import make_app
from tests.factories import add_item
from tests.factories import make_run

pytestmark = [pytest.mark.browser]
PASSWORD = "a long enough password"
TASKS = 30  # tasks both targets answered: 60 answers, 30 pairs
RATED = 2 * TASKS  # every answer, by each rater
VOTED = 20  # pairs each rater votes, of the TASKS
WAIT = 20_000  # ms an expectation waits: the machine running the suite is busy
RATERS = ("ana", "bo")


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    """The app (CSRF on, accounts: two raters and a viewer) with one finished run of two
    targets answering the same TASKS tasks."""
    app = make_app(tmp_path_factory.mktemp("team-labels"), WTF_CSRF_ENABLED=True)
    with app.app_context():
        run, targets = make_run("team", targets=[("local", "alpha"), ("local", "beta")])
        items = {}
        for target in targets:
            for n in range(TASKS):
                item = add_item(
                    run, target, f"q{n:02d}", score=float(40 + n), answer=f"Answer {n}, {target.id}"
                )
                items[item.id] = (target.id, n)
        for name in RATERS:
            add_account(name, "rater", PASSWORD)
        add_account("vi", "viewer", PASSWORD)
        ids = [t.id for t in targets]
    database.close()
    with serving(app, "team-labels-server") as base:
        yield {"base": base, "targets": ids, "items": items}


def sign_in(browser, base, name):
    """A new browser context (its own cookies) signed in as `name` through the login form."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(WAIT)
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.console_errors = errors
    page.goto(base + "/runs/")
    assert "/login" in page.url  # accounts exist: every page asks for a login first
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORD)
    page.click("button:has-text('Sign in')")
    page.wait_for_url(base + "/runs/")
    return context, page


def stars_for(rater, task):
    """The rating a rater gives the answer to task number `task`: the two agree mostly."""
    stars = 1 + task % 5
    if rater == "bo" and task % 4 == 0:
        stars = min(5, stars + 1)
    return stars


def verdict_for(rater, task):
    """Which target a rater prefers on task `task`: "alpha", "beta" or None (a tie)."""
    choice = ("alpha", "beta", None)[task % 3]
    if rater == "bo" and task % 5 == 0:
        choice = "beta" if choice == "alpha" else "alpha"
    return choice


def rate_by_keyboard(page, team, rater):
    """Rate every answer of the run in my queue by digit keys; the card items in the order
    they came."""
    from playwright.sync_api import expect

    queue = team["base"] + "/evaluate?run=team&unrated=1"
    page.goto(queue)
    card = page.locator("#card article")
    seen = []
    for _ in range(RATED):
        expect(card).to_have_count(1)
        item = int(card.get_attribute("data-item"))
        assert item not in seen
        seen.append(item)
        page.keyboard.press(str(stars_for(rater, team["items"][item][1])))
        if len(seen) < RATED:  # one key: rated, and on to the next card
            expect(page.locator(f"#card article[data-item='{item}']")).to_have_count(0)
    expect(page.locator(".ev-end")).to_have_text("That was the last card for these filters.")
    page.goto(queue)  # my queue is empty now
    expect(page.locator("#ev-empty")).to_be_visible()
    return seen


def vote_by_keyboard(page, team, rater):
    """Vote VOTED pairs of alpha against beta by Q/W/E; (left item, right item, verdict)."""
    from playwright.sync_api import expect

    alpha, beta = team["targets"]
    page.goto(team["base"] + f"/ab?runA=team&targetA={alpha}&targetB={beta}")
    pair = page.locator("#pair article")
    cast = []
    for n in range(VOTED):
        # A pair takes keys once it has been on screen a moment, as a person reading it.
        expect(page.locator("#pair article[data-ready]")).to_have_count(1)
        left, right = int(pair.get_attribute("data-left")), int(pair.get_attribute("data-right"))
        left_target, task = team["items"][left]
        wanted = verdict_for(rater, task)
        if wanted is None:
            key, winner = "e", "TIE"
        else:
            left_is_alpha = left_target == alpha
            key = "q" if (wanted == "alpha") == left_is_alpha else "w"
            winner = "LEFT" if key == "q" else "RIGHT"
        page.keyboard.press(key)
        expect(page.locator("#ab-progress")).to_have_text(f"{n + 1} of {TASKS} pairs voted")
        cast.append((left, right, winner))
    return cast


def _rows(model, where):
    with database.connection_context():
        return list(model.select().where(where))


def test_two_raters_label_the_same_answers_in_their_own_queues_and_agreement_shows(browser, team):
    from playwright.sync_api import expect

    rated, voted, pages = {}, {}, []
    try:
        for name in RATERS:
            context, page = sign_in(browser, team["base"], name)
            pages.append((context, page))
            rated[name] = rate_by_keyboard(page, team, name)
            voted[name] = vote_by_keyboard(page, team, name)
            assert page.console_errors == []

        # Each rater's labels are their own, stored under "human:<name>".
        for name in RATERS:
            ratings = {r.item_id: r.rating for r in _rows(Rating, Rating.rater == f"human:{name}")}
            assert ratings == {i: stars_for(name, team["items"][i][1]) for i in rated[name]}
            votes = _rows(Vote, Vote.voter == f"human:{name}")
            assert sorted((v.left_item_id, v.right_item_id, v.winner) for v in votes) == sorted(
                voted[name]
            )
            assert all(v.source == "human" for v in votes)
        assert _rows(Rating, Rating.rater == "human") == []  # nobody's labels are anonymous

        # My queue is mine: the second rater was offered every answer the first had rated
        # (in their own shuffled order), not an empty queue.
        first, second = RATERS
        assert set(rated[second]) == set(rated[first])
        pairs = {name: {(min(v[:2]), max(v[:2])) for v in voted[name]} for name in RATERS}
        assert len(pairs[second]) == VOTED
        both = len(pairs[first] & pairs[second])
        assert both >= 2 * VOTED - TASKS

        # Agreement between the two people, with n and a 95 % interval, on the leaderboard.
        context, page = pages[0]
        page.goto(team["base"] + "/leaderboard?runs=team")
        table = page.locator("#people-agreement-table")
        alpha_row = table.locator("tr", has_text="Krippendorff")
        kappa_row = table.locator("tr", has_text="Fleiss")
        expect(alpha_row).to_be_visible()
        expect(kappa_row).to_be_visible()
        for row, expected_n in ((alpha_row, RATED), (kappa_row, both)):
            cells = row.locator("td")
            value, interval, n = (cells.nth(i).text_content().strip() for i in (2, 3, 4))
            assert value != "–" and float(value) <= 1
            low, _, high = interval.partition("–")
            assert low and high and float(low) <= float(high), interval
            assert n == str(expected_n)
    finally:
        for context, _ in pages:
            context.close()


def test_a_viewer_reads_the_cards_with_no_rating_form_and_a_posted_rating_is_refused(browser, team):
    from playwright.sync_api import expect

    context, page = sign_in(browser, team["base"], "vi")
    try:
        page.goto(team["base"] + "/evaluate?run=team")
        card = page.locator("#card article")
        expect(card).to_have_count(1)
        expect(page.locator("#read-only")).to_be_visible()
        expect(page.locator("#rate-form")).to_have_count(0)
        item = card.get_attribute("data-item")
        token = page.locator("meta[name=csrf-token]").get_attribute("content")
        before = len(_rows(Rating, Rating.item == int(item)))
        reply = page.request.post(
            team["base"] + f"/evaluate/items/{item}",
            form={"rating": "3", "then": "next", "csrf_token": token},
            max_redirects=0,
        )
        assert reply.status == 403
        assert "rater role" in reply.text()
        assert len(_rows(Rating, Rating.item == int(item))) == before
        assert page.console_errors == []
    finally:
        context.close()
