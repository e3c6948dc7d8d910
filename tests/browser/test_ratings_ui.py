"""Browser tests for people's labels: 100 ratings with tags by keyboard without a reload, 20 A/B
votes by keyboard (a double press stores one), and screenshots of every new page at 1280 px
and 390 px. Playwright + Debian's chromium against a real server; skipped without chromium."""

import datetime as dt

import pytest

from app.catalog.providers import create_provider
from app.db.connection import database
from app.db.models import Item
from app.db.models import JudgeCall
from app.db.models import JudgeJob
from app.db.models import Rating
from app.db.models import RunTarget
from app.db.models import Vote
from tests.browser.helpers import WIDTHS
from tests.browser.helpers import picture
from tests.browser.helpers import serving
from tests.browser.helpers import shot
from tests.conftest import make_app
from tests.factories import T0
from tests.factories import add_item
from tests.factories import bulk_items
from tests.factories import make_run

pytestmark = [pytest.mark.browser]

# What sticks out past the screen (outside the scrolling table wrappers), for the message.
WIDEST = """() => [...document.querySelectorAll('body *')]
  .filter(el => el.getBoundingClientRect().right > document.documentElement.clientWidth + 1
    && !el.closest('.table-wrap'))
  .slice(0, 8).map(el => [el.tagName, String(el.className), el.id])"""
WAIT = 20_000  # ms an expectation waits: the machine running the suite is busy
RATED = 100
VOTED = 20


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The app on 127.0.0.1:<free port> with two finished runs written to its database."""
    app = make_app(tmp_path_factory.mktemp("ratings-ui"), WTF_CSRF_ENABLED=True)
    with app.app_context():
        run, targets = make_run(
            "rate",
            targets=[
                ("local", "llama3", {"temperature": 0.2}),
                ("local", "llama3", {"temperature": 1.0}),
            ],
            judge_model="judge-1",
        )
        for target in targets:
            bulk_items(
                run,
                target,
                RATED + 10,
                answered_at=T0,
                excellent="the best answer",
                good="a good answer",
                pass_answer="a passable answer",
            )
        small, small_targets = make_run("ab", targets=[("local", "alpha"), ("local", "beta")])
        for target in small_targets:
            for n in range(VOTED + 5):
                add_item(
                    small,
                    target,
                    f"q{n:02d}",
                    score=float(40 + n),
                    answer=f"Answer {n}, take {target.position + 1}",
                )
        ids = {"rate": [t.id for t in targets], "ab": [t.id for t in small_targets]}
    database.close()
    with serving(app, "ratings-ui-server") as base:
        yield {"base": base, "app": app, "targets": ids}


def _rows(model, where=None):
    with database.connection_context():
        query = model.select()
        return list(query.where(where) if where is not None else query)


def test_a_person_rates_and_tags_100_answers_in_a_row_by_keyboard_without_a_reload(page, server):
    from playwright.sync_api import expect

    page.goto(server["base"] + "/evaluate?run=rate&unrated=1")
    page.evaluate("window.__noReload = true")
    loads = []
    page.on("load", lambda: loads.append(1))
    card = page.locator("#card article")
    seen = []
    for n in range(RATED):
        item = card.get_attribute("data-item")
        assert item not in seen
        seen.append(item)
        stars = str(1 + n % 5)
        page.keyboard.press("t")
        expect(page.locator("#tag-add")).to_be_focused(timeout=WAIT)
        page.keyboard.type(f"batch{n % 3}")
        page.keyboard.press("Enter")
        expect(page.locator("#tag-chips .chip")).to_have_count(1, timeout=WAIT)
        expect(page.locator("#save-status")).to_have_text("Saved", timeout=WAIT)
        page.keyboard.press("Escape")
        page.keyboard.press(stars)  # one key: rated, and on to the next card
        expect(card).not_to_have_attribute("data-item", item, timeout=WAIT)
    assert page.evaluate("window.__noReload") is True and loads == []
    assert page.url.endswith(f"item={card.get_attribute('data-item')}")  # bookmarkable
    ratings = _rows(Rating)
    assert len(ratings) == RATED
    by_item = {str(r.item_id): r for r in ratings}
    for n, item in enumerate(seen):
        assert by_item[item].rating == 1 + n % 5 and by_item[item].tags == [f"batch{n % 3}"]
    shot(page, "evaluate-card")


def test_with_stay_a_rating_keeps_the_card_and_new_tags_join_the_suggestions(page, server):
    from playwright.sync_api import expect

    page.goto(server["base"] + "/evaluate?run=rate&stay=1")
    card = page.locator("#card article")
    item = card.get_attribute("data-item")
    page.keyboard.press("4")
    expect(page.locator("#ev-rated")).to_have_text("rated 4", timeout=WAIT)
    expect(card).to_have_attribute("data-item", item)
    expect(page.locator('#tag-options option[value="fresh-tag"]')).to_have_count(0)
    page.keyboard.press("t")
    page.keyboard.type("fresh-tag")
    page.keyboard.press("Enter")
    expect(page.locator("#save-status")).to_have_text("Saved", timeout=WAIT)
    # The suggestions refresh without a reload: the next card can pick the tag.
    expect(page.locator('#tag-options option[value="fresh-tag"]')).to_have_count(1, timeout=WAIT)


def test_at_390_px_the_card_and_its_rating_keys_are_on_the_first_screen(page, server):
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(server["base"] + "/evaluate?run=rate&unrated=1")
    keys = page.locator("#rate-form .ev-rating").bounding_box()
    menu = page.locator("header.topbar").bounding_box()
    # The site menu is the accounts feature's (issue 30): what is below it must fit.
    below_menu = keys["y"] + keys["height"] - (menu["y"] + menu["height"] if menu else 0)
    assert below_menu <= 844 - 60, f"the rating keys end {below_menu:.0f} px below the menu"
    next_button = page.locator("#next-card").bounding_box()
    assert next_button["x"] + next_button["width"] <= 390


def test_at_390_px_the_leaderboards_rating_interval_and_n_are_on_screen(page, server, judged):
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(server["base"] + "/leaderboard?runs=rate&source=judge")
    heads = page.locator("#leaderboard thead th")
    visible = {h.text_content(): h.bounding_box() for h in heads.all() if h.is_visible()}
    for name in ("Rating", "95 % interval", "n"):
        box = visible[name]
        assert box["x"] + box["width"] <= 390, f"{name} ends at {box['x'] + box['width']:.0f} px"


def test_a_note_is_saved_as_it_is_typed_and_k_goes_back(page, server):
    from playwright.sync_api import expect

    page.goto(server["base"] + "/evaluate?run=rate&blind=1")
    first = page.locator("#card article").get_attribute("data-item")
    expect(page.locator(".ev-target")).to_have_count(0, timeout=WAIT)  # blind: no model names
    expect(page.locator("#ev-judge")).to_have_count(0, timeout=WAIT)  # blind: no judge
    page.keyboard.press("n")
    page.keyboard.type("too long, but right")
    expect(page.locator("#save-status")).to_have_text("Saved", timeout=WAIT)
    page.keyboard.press("Escape")
    page.keyboard.press("j")
    expect(page.locator("#card article")).not_to_have_attribute("data-item", first, timeout=WAIT)
    page.keyboard.press("k")
    expect(page.locator("#card article")).to_have_attribute("data-item", first, timeout=WAIT)
    expect(page.locator("#notes")).to_have_value("too long, but right", timeout=WAIT)
    shot(page, "evaluate-blind")


def test_20_ab_votes_by_keyboard_reveal_the_names_and_record_the_winner(page, server):
    from playwright.sync_api import expect

    a, b = server["targets"]["ab"]
    page.goto(server["base"] + f"/ab?runA=ab&targetA={a}&targetB={b}")
    page.evaluate("window.__noReload = true")
    # The names stay hidden before the vote.
    expect(page.locator("#pair")).not_to_contain_text("alpha", timeout=WAIT)
    keys = {"q": "LEFT", "w": "RIGHT", "e": "TIE"}
    expected = []
    for n in range(VOTED):
        pair = page.locator("#pair article")
        # A pair takes keys once it has been on screen a moment (a double press never lands
        # on the next pair): wait for it as a person reading it would.
        expect(page.locator("#pair article[data-ready]")).to_have_count(1, timeout=WAIT)
        left, right = pair.get_attribute("data-left"), pair.get_attribute("data-right")
        key = "qwe"[n % 3]
        page.keyboard.press(key)
        expect(page.locator("#ab-progress")).to_have_text(
            f"{n + 1} of {VOTED + 5} pairs voted", timeout=WAIT
        )
        expect(page.locator("#ab-reveal")).to_contain_text("A was", timeout=WAIT)
        expected.append((int(left), int(right), keys[key]))
    assert page.evaluate("window.__noReload") is True
    people = _rows(Vote, Vote.source == "human")  # the judge's votes of `judged` aside
    votes = {(v.left_item_id, v.right_item_id): v for v in people}
    assert len(votes) == VOTED
    target_of = {i.id: i.target_id for i in _rows(Item)}
    for left, right, winner in expected:
        vote = votes[(left, right)]  # stored with the sides as they were shown
        assert vote.winner == winner and vote.source == "human"
        won = {"LEFT": target_of[left], "RIGHT": target_of[right]}.get(winner)
        assert vote.winner_target_id == won
    shot(page, "ab-pair")


def test_a_double_key_press_stores_one_vote(page, server):
    from playwright.sync_api import expect

    a, b = server["targets"]["ab"]
    page.goto(server["base"] + f"/ab?runA=ab&targetA={b}&targetB={a}")
    before = len(_rows(Vote))
    progress = page.locator("#ab-progress").text_content()
    voted = int(progress.split(" of ")[0])
    # Two presses in the same instant: the second finds the vote already out.
    page.evaluate(
        "for (let i = 0; i < 2; i++) document.dispatchEvent("
        "new KeyboardEvent('keydown', {key: 'q', bubbles: true}))"
    )
    expect(page.locator("#ab-progress")).to_have_text(
        f"{voted + 1} of {VOTED + 5} pairs voted", timeout=WAIT
    )
    page.wait_for_load_state("networkidle")
    assert len(_rows(Vote)) == before + 1


def test_a_key_pressed_again_just_after_the_next_pair_appears_does_not_vote_on_it(page, server):
    from playwright.sync_api import expect

    a, b = server["targets"]["ab"]
    page.goto(server["base"] + f"/ab?runA=ab&targetA={a}&targetB={b}")
    before = len(_rows(Vote))
    voted = int(page.locator("#ab-progress").text_content().split(" of ")[0])
    # The second press comes the moment the next pair is swapped in (40 ms later, by hand).
    page.evaluate(
        "document.addEventListener('htmx:afterSwap', () => document.dispatchEvent("
        "new KeyboardEvent('keydown', {key: 'w', bubbles: true})), {once: true});"
        "document.dispatchEvent(new KeyboardEvent('keydown', {key: 'q', bubbles: true}))"
    )
    expect(page.locator("#ab-progress")).to_have_text(
        f"{voted + 1} of {VOTED + 5} pairs voted", timeout=WAIT
    )
    expect(page.locator("#pair article[data-ready]")).to_have_count(1, timeout=WAIT)
    page.wait_for_load_state("networkidle")
    assert len(_rows(Vote)) == before + 1
    expect(page.locator("#ab-progress")).to_have_text(f"{voted + 1} of {VOTED + 5} pairs voted")


def test_u_undoes_the_last_vote_and_its_pair_comes_back(page, server):
    from playwright.sync_api import expect

    a, b = server["targets"]["ab"]
    page.goto(server["base"] + f"/ab?runA=ab&targetA={a}&targetB={b}")
    expect(page.locator("#pair article[data-ready]")).to_have_count(1, timeout=WAIT)
    task = page.locator("#ab-task").text_content()
    voted = int(page.locator("#ab-progress").text_content().split(" of ")[0])
    page.keyboard.press("e")
    expect(page.locator("#ab-progress")).to_have_text(
        f"{voted + 1} of {VOTED + 5} pairs voted", timeout=WAIT
    )
    expect(page.locator("#pair article[data-ready]")).to_have_count(1, timeout=WAIT)
    page.keyboard.press("u")
    expect(page.locator("#ab-notice")).to_contain_text("was undone", timeout=WAIT)
    expect(page.locator("#ab-progress")).to_have_text(f"{voted} of {VOTED + 5} pairs voted")
    expect(page.locator("#ab-task")).to_have_text(task)


@pytest.fixture(scope="module")
def judged(server):
    """A judge's votes and a finished reference check, written directly, for the screenshots."""
    with database.connection_context():
        a, b = server["targets"]["rate"]
        target_a = RunTarget.get_by_id(a)
        job = JudgeJob.create(
            run=target_a.run_id,
            kind="reference",
            judge_provider_name="local",
            judge_model="judge-1",
        )
        items = list(target_a.items.order_by(Item.id).limit(6))
        for n, item in enumerate(items):
            for level, score in (("excellent", 90 - n), ("good", 70 + 3 * n), ("pass", 50)):
                JudgeCall.create(
                    job=job,
                    run=target_a.run_id,
                    item=item,
                    level=level,
                    status="COMPLETED",
                    score=score,
                )
        other = {i.task_key: i for i in RunTarget.get_by_id(b).items}
        for n, item in enumerate(items):
            right = other[item.task_key]
            Vote.create(
                left_item=item,
                right_item=right,
                item_low=min(item.id, right.id),
                item_high=max(item.id, right.id),
                left_target=a,
                right_target=b,
                task_key=item.task_key,
                winner=("LEFT", "RIGHT", "TIE")[n % 3],
                winner_target=(a, b, None)[n % 3],
                source="judge",
                voter="judge:local/judge-1",
                inconsistent=n % 3 == 2,
                created_at=T0 + dt.timedelta(seconds=n),
            )


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("evaluate", "/evaluate?run=rate"),
        ("ab-pick", "/ab?runA=ab"),
        ("leaderboard", "/leaderboard?runs=rate&runs=ab"),
        ("report", "/runs/rate/report"),
        ("results-judge-check", "/runs/rate/results#judge-check"),
        ("labels", "/labels"),
    ],
)
def test_rating_pages_render_at_both_widths(page, server, judged, name, path):
    response = page.goto(server["base"] + path)
    assert response.status == 200
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        overflow = page.evaluate("document.documentElement.scrollWidth")
        assert overflow <= width, f"{path} is {overflow}px wide at {width}px: " + str(
            page.evaluate(WIDEST)
        )
    shot(page, name)
    if name == "results-judge-check":  # the section itself, readable at both widths
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            picture(page.locator("#judge-check"), f"judge-check-{width}")


@pytest.fixture(scope="module")
def checked(server):
    """A judged answer its task's checks scored too (a gate among them), for Evaluate's card."""
    with database.connection_context():
        run, (target,) = make_run("checked", targets=[("local", "qwen2.5:7b-instruct-q4_K_M")])
        item = add_item(
            run,
            target,
            "math-001",
            score=35.0,
            question="What is 6 × 7? Answer with the number alone.",
            answer="The answer is 41, give or take.",
            evaluation_reason="checks: 1/3 checks passed; number: number 41 is not 42; judge: "
            "close but wrong",
            check_score=33.33,
            check_results=[
                {"type": "number", "score": 0.0, "passed": False, "reason": "number 41 is not 42"},
                {"type": "contains", "score": 100.0, "passed": True, "reason": "`4` found"},
                {
                    "type": "regex",
                    "score": 0.0,
                    "passed": False,
                    "reason": "regex `^\\d+$` not found",
                    "gate": True,
                },
            ],
            judge_scores=[40.0],
            judge_ms=900.0,
        )
    return item.id


def test_the_evaluate_card_shows_the_checks_beside_the_judge_at_both_widths(page, server, checked):
    from playwright.sync_api import expect

    page.goto(server["base"] + f"/evaluate?run=checked&item={checked}")
    rows = page.locator(f"#ev-judge #item-checks-{checked} tbody tr")
    expect(rows).to_have_count(3, timeout=WAIT)
    expect(page.locator(f"#item-part-scores-{checked}")).to_have_text("Checks 33.3 · judge 40.0")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        overflow = page.evaluate("document.documentElement.scrollWidth")
        assert overflow <= width, f"the card is {overflow}px wide at {width}px: " + str(
            page.evaluate(WIDEST)
        )
    shot(page, "evaluate-checks")


def test_the_new_run_form_adds_a_second_params_profile_of_a_model(page, server, fake_server):
    """Item 7 in the browser: '+ profile' brings a second row of the same model (htmx), each
    with its own params and label."""
    from playwright.sync_api import expect

    fake_server.reset()
    fake_server.models = ["alpha-7b"]
    with database.connection_context():
        provider = create_provider(
            {"name": "fake-profiles", "type": "OPENAI", "base_url": fake_server.url}
        )
    try:
        page.goto(server["base"] + "/")
        group = page.locator(f"#target-models-{provider.id}")
        summary = page.locator("details.provider-group", has=group).locator("summary")
        if not group.is_visible():
            summary.click()
        first = group.locator(f'input[value="{provider.id}:alpha-7b"]')
        expect(first).to_be_visible(timeout=WAIT)
        first.check()
        group.locator("button.target__copy").click()
        second = page.locator(f'input[name="target"][value="{provider.id}~2:alpha-7b"]')
        expect(second).to_be_checked(timeout=WAIT)
        expect(first).to_be_checked(timeout=WAIT)  # the first profile kept its pick
        page.fill(f'input[name="{provider.id}~2:alpha-7b#temperature"]', "1.2")
        page.fill(f'input[name="{provider.id}~2:alpha-7b#label"]', "alpha hot")
        shot(page, "dashboard-profiles")
    finally:
        fake_server.reset()
