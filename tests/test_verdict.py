"""A verdict needs evidence: no verdict below 10 paired tasks, significance from the CI and the
sign test together, one verdict in the API, the compare page and `llmbench diff`, and warnings
when the runs are not alike (judge, judge params, tasks asked differently)."""

import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner

from app.cli import main
from app.db.connection import database
from app.db.models import Item
from app.results.compare import compare_runs
from app.results.compare import verdict
from tests.conftest import TEST_KEY_B64
from tests.factories import add_item
from tests.factories import make_run


def test_two_shared_tasks_give_no_verdict():
    # The case: n = 2, a one-point bootstrap interval, sign-test p 0.5.
    result = verdict([(80.0, 90.0), (70.0, 80.0)])
    assert result["verdict"] == "too few shared tasks" and result["significant"] is False
    assert result["why"] == "2 shared scored tasks; a verdict needs at least 10"
    assert result["regression"] is False


def test_a_drop_on_few_tasks_is_no_regression():
    result = verdict([(90.0, 70.0)] * 3)
    assert result["meanDiff"] == -20.0 and result["regression"] is False
    assert result["verdict"] == "too few shared tasks"


def test_a_consistent_drop_on_enough_tasks_is_worse_and_a_regression():
    result = verdict([(80.0 + n % 3, 70.0 + n % 3) for n in range(12)])
    assert result["verdict"] == "worse" and result["significant"] and result["regression"]
    assert result["signTestP"] < 0.05 and result["ciHigh"] < 0


def test_the_ci_alone_is_not_enough():
    # Nine tiny gains and six big losses: the mean is clearly down, but the signs say
    # nothing (p of the sign test is 0.607), so there is no verdict of worse.
    pairs = [(50.0, 51.0)] * 9 + [(80.0, 40.0)] * 6
    result = verdict(pairs)
    assert result["ciHigh"] < 0 and result["signTestP"] > 0.05
    assert result["verdict"] == "no significant change" and not result["regression"]
    assert result["why"].startswith("the sign test gives p = 0.607, not below 0.05")


def test_a_small_consistent_drop_is_worse_but_no_regression():
    result = verdict([(80.0, 78.0)] * 10 + [(60.0, 59.0)] * 5)
    assert result["verdict"] == "worse" and not result["regression"]


@pytest.fixture
def few(app):
    """Two runs sharing two tasks of one model; B is 10 points lower."""
    a, (ta,) = make_run("a")
    b, (tb,) = make_run("b")
    for key, score in (("t1", 80.0), ("t2", 70.0)):
        add_item(a, ta, key, score=score)
        add_item(b, tb, key, score=score - 10)
    return a, b


def test_the_api_page_and_cli_give_the_same_verdict(app, client, few, tmp_path):
    api = client.get("/api/compare?a=a&b=b").get_json()["models"][0]
    assert api["verdict"] == "too few shared tasks" and api["regressionAlert"] is False
    assert api["pairedScore"]["significant"] is False
    page = BeautifulSoup(client.get("/compare?a=a&b=b").text, "html.parser")
    row = page.select_one("table.rs-compare tbody tr")
    assert "too few shared tasks" in row.get_text(" ")
    assert page.find(string=lambda s: s and "Regression:" in s) is None
    database.close()
    env = {"LLMBENCH_DB": app.config["DB"], "LLMBENCH_MASTER_KEY_BASE64": TEST_KEY_B64}
    out = CliRunner().invoke(main, ["diff", "a", "b"], env=env)
    assert out.exit_code == 0
    line = next(ln for ln in out.output.splitlines() if ln.startswith("local/m1"))
    assert line.endswith("too few shared tasks") and "REGRESSION" not in out.output


def test_different_judges_and_judge_params_are_warned_about(app):
    a, (ta,) = make_run("a")
    b, (tb,) = make_run("b", judge_model="judge-2", judge_params={"temperature": 0.7})
    add_item(a, ta, "t1", score=50.0)
    add_item(b, tb, "t1", score=50.0)
    warnings = compare_runs(a, b)["warnings"]
    assert "judged by different judges: judgeprov/judge-1 and judgeprov/judge-2" in warnings[0]
    assert warnings[1].startswith("the judge's params differ")


def test_tasks_asked_differently_are_warned_about(app, client):
    a, (ta,) = make_run("a")
    b, (tb,) = make_run("b")
    for n in range(3):
        add_item(a, ta, f"t{n}", score=50.0, context_hash="h" * 64)
        add_item(b, tb, f"t{n}", score=50.0, context_hash=("h" if n else "x") * 64)
    (warning,) = compare_runs(a, b)["warnings"]
    assert warning.startswith("local/m1: 1 of 3 shared tasks were asked differently")
    page = BeautifulSoup(client.get("/compare?a=a&b=b").text, "html.parser")
    assert "1 of 3 shared tasks were asked differently" in page.find(id="compare-warnings").text
    assert Item.select().count() == 6
