"""The composite score where two runs are compared: the compare page, the API, `llmbench diff`
and the baseline-against-several view show each target's composite in both runs and its change,
with no verdict of its own (it has no CI)."""

import pytest
from bs4 import BeautifulSoup

from app.db.models import Run
from app.results.compare import compare_runs
from tests.cli_helpers import judge_scores
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows
from tests.cli_helpers import write_config
from tests.factories import add_item
from tests.factories import make_run


@pytest.fixture
def pair(app):
    """m1: 80 -> 70 on three tasks, answers in 1 s (composite 86.0 -> 79.0); m2 has no scored
    answer in B (no composite)."""
    run_a, (a1, a2) = make_run("ca", targets=[("local", "m1"), ("local", "m2")])
    run_b, (b1, b2) = make_run("cb", targets=[("local", "m1"), ("local", "m2")])
    for key in ("t1", "t2", "t3"):
        add_item(run_a, a1, key, score=80)
        add_item(run_b, b1, key, score=70)
        add_item(run_a, a2, key, score=60)
        add_item(run_b, b2, key, status="FAILED", error_stage="answer", error_msg="refused")
    return run_a, run_b


def _model(result, label):
    return next(m for m in result["models"] if m["label"] == label)


def test_compare_shows_composite_of_each_target_in_both_runs(pair):
    m1 = _model(compare_runs(*pair), "local/m1")
    assert (m1["a"]["compositeScore"], m1["b"]["compositeScore"]) == (86.0, 79.0)
    assert m1["compositeDelta"] == -7.0
    assert m1["b"]["compositeFormula"].endswith("= 79.0")


def test_compare_gives_no_composite_change_for_a_target_without_one(pair):
    m2 = _model(compare_runs(*pair), "local/m2")
    assert m2["a"]["compositeScore"] == 72.0
    assert m2["b"]["compositeScore"] is None and m2["compositeDelta"] is None


def test_composite_change_gets_no_verdict_of_its_own(pair):
    result = compare_runs(*pair)
    assert _model(result, "local/m1")["verdict"] == "too few shared tasks"
    assert "no confidence interval" in result["compositeNote"]


def test_compare_page_shows_composite_beside_the_score(client, pair):
    page = BeautifulSoup(client.get("/compare?a=ca&b=cb").get_data(as_text=True), "html.parser")
    heads = [th.get_text() for th in page.select("table.rs-compare thead th")]
    assert heads[1:5] == ["Score A", "Score B", "Δ score", "Composite A → B"]
    cell = page.select("table.rs-compare tbody tr")[0].select("td")[3]
    assert cell.get_text(" ", strip=True) == "86.0 → 79.0 -7.0"
    formula = cell.select_one(".cmp-composite__b")["title"]
    assert formula.startswith("B: composite = 0.70 × quality 70.0")
    assert "no confidence interval" in page.select_one("#cmp-composite-rule").get_text()


def test_baseline_against_several_shows_composite_before_and_after(client, pair):
    run_c, (c1, _c2) = make_run("cc", targets=[("local", "m1"), ("local", "m2")])
    for key in ("t1", "t2", "t3"):
        add_item(run_c, c1, key, score=90)
    page = BeautifulSoup(
        client.get("/compare?run=ca&run=cb&run=cc").get_data(as_text=True), "html.parser"
    )
    first = page.select("table.cmp-many tbody tr")[0]
    texts = [d.get_text(" ", strip=True) for d in first.select(".cmp-composite")]
    assert texts == ["composite 86.0 → 79.0 (-7.0)", "composite 86.0 → 93.0 (+7.0)"]


def test_api_compare_has_each_targets_composite(client, pair):
    m1 = _model(client.get("/api/compare?a=ca&b=cb").get_json(), "local/m1")
    assert (m1["a"]["compositeScore"], m1["b"]["compositeScore"], m1["compositeDelta"]) == (
        86.0,
        79.0,
        -7.0,
    )


def test_diff_prints_composite_of_both_runs_and_its_change(tmp_path, fake):
    cli = make_cli(tmp_path)
    path = write_config(tmp_path, fake, targets=("m1",))
    fake.responder = judge_scores({"m1": 80})
    assert cli("run", "-c", path, "--quiet").exit_code == 0
    fake.responder = judge_scores({"m1": 70})
    assert cli("run", "-c", path, "--quiet").exit_code == 0
    run_a, run_b = [r.run_id for r in sorted(rows(Run), key=lambda r: r.id)]
    result = cli("diff", run_a, run_b)
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if x.startswith("fake/m1"))
    # The fake server answers at once: 0.7 × score + 30.
    assert line.split()[1:7] == ["80.0", "70.0", "-10.0", "86.0", "79.0", "-7.0"]
    assert "comp = composite score" in result.stdout
