"""The run list shows each target's own score (and the best and worst), never one number
averaged over different targets."""

from bs4 import BeautifulSoup

from tests.factories import add_item
from tests.factories import make_run


def test_each_target_in_the_run_list_has_its_own_score(client):
    run, (good, bad) = make_run("two", targets=[("local", "good"), ("local", "bad")])
    add_item(run, good, "t1", score=90)
    add_item(run, bad, "t1", score=30)
    page = BeautifulSoup(client.get("/runs/").get_data(as_text=True), "html.parser")
    row = next(tr for tr in page.select("tbody tr") if "two" in tr.get_text())
    targets = [d.get_text(" ", strip=True) for d in row.select(".cell-targets div")]
    assert targets == ["good 90.0", "bad 30.0"]
    text = row.get_text(" ", strip=True)
    assert "90.0 / 30.0" in text and "60.0" not in text  # best / worst, not the blend


def test_the_list_says_which_are_not_scored_yet(client):
    run, (target,) = make_run("fresh", targets=[("local", "m1")])
    add_item(run, target, "t1", score=None)
    page = BeautifulSoup(client.get("/runs/").get_data(as_text=True), "html.parser")
    assert "m1 –" in page.select_one(".cell-targets").get_text(" ", strip=True)
