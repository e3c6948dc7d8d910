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
    assert targets == ["local/good 90.0", "local/bad 30.0"]  # each by its one name
    text = row.get_text(" ", strip=True)
    assert "90.0 / 30.0" in text and "60.0" not in text  # best / worst, not the blend


def test_the_list_says_which_are_not_scored_yet(client):
    run, (target,) = make_run("fresh", targets=[("local", "m1")])
    add_item(run, target, "t1", score=None)
    page = BeautifulSoup(client.get("/runs/").get_data(as_text=True), "html.parser")
    assert "m1 –" in page.select_one(".cell-targets").get_text(" ", strip=True)


def _run_ids_in_order(client, sort):
    page = BeautifulSoup(client.get(f"/runs/?sort={sort}").get_data(as_text=True), "html.parser")
    return [a.get_text(strip=True) for a in page.select("tbody tr td:nth-of-type(2) a")]


def test_sorting_by_score_ranks_runs_by_their_best_target_not_a_blend(client):
    two, (good, bad) = make_run("two", targets=[("local", "good"), ("local", "bad")])
    add_item(two, good, "t1", score=90)
    add_item(two, bad, "t1", score=30)  # a blend would read 60
    one, (only,) = make_run("one", targets=[("local", "only")])
    add_item(one, only, "t1", score=70)
    assert _run_ids_in_order(client, "-score") == ["two", "one"]
    assert _run_ids_in_order(client, "score") == ["one", "two"]


def test_the_score_header_says_it_sorts_by_the_best_target(client):
    make_run("listed")
    page = BeautifulSoup(client.get("/runs/").get_data(as_text=True), "html.parser")
    header = next(th for th in page.select("thead th") if "Score" in th.get_text())
    assert "best target" in header["title"]


def test_the_dashboards_recent_results_show_the_best_and_worst_target_not_a_blend(client):
    run, (good, bad) = make_run("two", targets=[("local", "good"), ("local", "bad")])
    add_item(run, good, "t1", score=90)
    add_item(run, bad, "t1", score=30)
    page = BeautifulSoup(client.get("/").get_data(as_text=True), "html.parser")
    panel = page.find(id="recent-results")
    text = panel.get_text(" ", strip=True)
    assert "90.0 / 30.0" in text and "60.0" not in text
    names = [d.get_text() for d in panel.select(".cell-model .wrap-anywhere")]
    assert names == ["local/good", "local/bad"]
    assert "best target" in panel.find("th", string=lambda s: s and "Score" in s)["title"]
