"""Evaluate's card shows how the task's checks scored an answer, as the item page does: the
table of checks (check, score, pass, why) and the checks' score beside the judge's, with no
judge named where no judge saw the answer."""

from bs4 import BeautifulSoup

from tests.factories import add_item
from tests.factories import make_run

HX = {"HX-Request": "true"}
CHECKS = [
    {"type": "contains", "score": 100.0, "passed": True, "reason": "`42` found", "gate": False},
    {
        "type": "regex",
        "score": 0.0,
        "passed": False,
        "reason": "regex `^x` not found",
        "gate": True,
    },
]


def card(client, run_id, item, blind=False):
    query = f"run={run_id}&item={item.id}" + ("&blind=1" if blind else "")
    return BeautifulSoup(client.get(f"/evaluate/card?{query}", headers=HX).data, "html.parser")


def text(page, selector):
    return page.select_one(selector).get_text(" ", strip=True)


def judged_with_checks(run_id="ev-checks", **judge):
    run, (target,) = make_run(run_id)
    item = add_item(
        run,
        target,
        "t1",
        score=35.0,
        evaluation_reason="checks: 1/2 checks passed; judge: half right",
        check_score=50.0,
        check_results=CHECKS,
        judge_scores=[20.0],
        judge_ms=812.0,
        **judge,
    )
    return item


def test_the_card_shows_each_check_with_its_score_result_and_reason(client, app):
    item = judged_with_checks()
    page = card(client, "ev-checks", item)
    rows = page.select(f"#ev-judge #item-checks-{item.id} tbody tr")
    cells = [[td.get_text(" ", strip=True) for td in row.select("td")] for row in rows]
    assert cells == [
        ["contains", "100.0", "pass", "`42` found"],
        ["regex (gate)", "0.0", "fail", "regex `^x` not found"],
    ]


def test_the_card_shows_the_checks_score_beside_the_judges(client, app):
    item = judged_with_checks()
    page = card(client, "ev-checks", item)
    assert text(page, f"#item-part-scores-{item.id}") == "Checks 50.0 · judge 20.0"
    assert text(page, "#ev-judge h3") == "Judge judgeprov/judge-1"
    assert text(page, ".ev-score") == "35"


def test_the_card_and_the_item_page_show_the_same_checks_table(client, app):
    item = judged_with_checks()
    on_card = card(client, "ev-checks", item).select_one(f"#item-checks-{item.id}")
    item_page = client.get(f"/runs/ev-checks/items/{item.id}", headers=HX).data
    on_item_page = BeautifulSoup(item_page, "html.parser").select_one(f"#item-checks-{item.id}")
    assert on_card is not None and str(on_card) == str(on_item_page)


def test_an_answer_of_a_run_without_a_judge_names_no_judge(client, app):
    run, (target,) = make_run("ev-free", judge_provider_name="", judge_model="")
    item = add_item(
        run,
        target,
        "t1",
        score=50.0,
        evaluation_reason="checks: 1/2 checks passed",
        check_score=50.0,
        check_results=CHECKS,
        judged_at=None,
    )
    page = card(client, "ev-free", item)
    assert text(page, "#ev-judge h3") == "Score checks only"
    assert text(page, f"#item-part-scores-{item.id}") == "Checks 50.0 · no judge (checks only)"
    assert "judge-1" not in page.get_text() and page.select(f"#item-checks-{item.id} tbody tr")


def test_an_answer_its_checks_scored_alone_in_a_judged_run_names_no_judge(client, app):
    run, (target,) = make_run("ev-alone")
    item = add_item(
        run,
        target,
        "t1",
        score=50.0,
        evaluation_reason="checks: 1/2 checks passed",
        check_score=50.0,
        check_results=CHECKS,
    )
    page = card(client, "ev-alone", item)
    assert text(page, "#ev-judge h3") == "Score checks only"
    assert text(page, f"#item-part-scores-{item.id}") == "Checks 50.0"


def test_an_answer_without_checks_shows_the_judge_alone(client, app):
    run, (target,) = make_run("ev-plain")
    item = add_item(run, target, "t1", score=80.0, evaluation_reason="good", judge_ms=500.0)
    page = card(client, "ev-plain", item)
    assert text(page, "#ev-judge h3") == "Judge judgeprov/judge-1"
    assert text(page, "#ev-judge p") == "80 / 100 — good"
    assert page.select_one(f"#item-checks-{item.id}") is None
    assert page.select_one(f"#item-part-scores-{item.id}") is None


def test_a_blind_card_hides_the_checks_with_the_judge(client, app):
    item = judged_with_checks()
    page = card(client, "ev-checks", item, blind=True)
    assert page.select_one("#ev-judge") is None
    assert page.select_one(f"#item-checks-{item.id}") is None
