"""Two profiles of one model (same provider and model, other params) read apart everywhere a run
is shown: every page, every chart, every export and `llmbench show` names each in full, the one
way `target_name` does."""

import datetime as dt
import html
import json
import re

import pytest
from click.testing import CliRunner

from app.cli import main
from app.db.models import RunTarget
from app.db.target_name import target_name
from app.ratings import charts as report_charts
from app.results.run_charts import CHARTS
from app.results.run_speed_charts import RUN_WIDE
from app.schedules.digest import digest_finished
from tests.factories import T0
from tests.factories import add_item
from tests.factories import make_run
from tests.keys import TEST_KEY_B64

PROVIDER = "llamacpp-smol"
MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF-Q8_0"
PROFILES = ({"temperature": 0.2}, {"temperature": 0.8, "top_p": 0.9})


def _flat(text):
    """Visible text without any whitespace: a label wrapped over lines still reads whole."""
    return "".join(text.split())


def _visible(markup):
    """The text a person reads in HTML or SVG: tags, <title> tooltips, styles and scripts out."""
    markup = re.sub(r"(?is)<(title|style|script|desc)\b.*?</\1>", " ", markup)
    markup = re.sub(r"(?s)<[^>]+>", " ", markup)
    return html.unescape(markup)


@pytest.fixture
def names(app):
    run, targets = make_run(
        "profiles", targets=[(PROVIDER, MODEL, params) for params in PROFILES], cost_usd=None
    )
    for position, target in enumerate(targets):
        for n in range(4):
            add_item(run, target, f"t{n}", score=60 + 10 * position + n, category="coding")
    make_run("profiles-b", targets=[(PROVIDER, MODEL, params) for params in PROFILES])
    for position, target in enumerate(RunTarget.select().where(RunTarget.run_id != run.id)):
        for n in range(4):
            add_item(target.run, target, f"t{n}", score=50 + 10 * position + n, category="coding")
    digest_finished(T0 + dt.timedelta(days=1))  # the aggregates Trends draws
    return [target_name(t.provider_name, t.label) for t in targets]


def test_the_two_profiles_have_different_names(names):
    assert names[0] != names[1] and all(MODEL in name for name in names)


def _reads_both(text, names, where):
    seen = _flat(text)
    missing = [name for name in names if _flat(name) not in seen]
    assert not missing, f"{where} does not name {missing}"


PAGES = (
    "/runs/profiles/results",
    "/runs/profiles/report",
    "/runs/profiles/report.html",
    "/compare?a=profiles-b&b=profiles",
    "/runs/profiles",
    "/compare.md?a=profiles-b&b=profiles",
    "/trends",
)


@pytest.mark.parametrize("path", PAGES)
def test_every_page_names_both_profiles_in_full(client, names, path):
    response = client.get(path)
    assert response.status_code == 200
    _reads_both(_visible(response.get_data(as_text=True)), names, path)


CHART_PATHS = (
    [f"/runs/profiles/charts/{name}.svg" for name in CHARTS]
    + [f"/runs/profiles/speed-charts/{name}.svg" for name in RUN_WIDE]
    + [f"/runs/profiles/report/{name}.svg" for name in report_charts.CHARTS]
    + ["/compare/chart.svg?base=profiles-b&run=profiles"]
)


@pytest.mark.parametrize("size", ["wide", "narrow"])
@pytest.mark.parametrize("path", CHART_PATHS)
def test_every_chart_that_names_a_profile_names_both_whole(client, names, path, size):
    svg = client.get(path + ("&" if "?" in path else "?") + f"size={size}").get_data(as_text=True)
    text = _visible(svg)
    if "SmolLM2" not in text and "…" not in text:
        return  # a chart with nothing to draw names no model
    _reads_both(text, names, f"{path} ({size})")


def test_markdown_names_both_profiles(client, names):
    _reads_both(client.get("/runs/profiles/results.md").get_data(as_text=True), names, "md")


@pytest.mark.parametrize("path", ["/runs/profiles/results.csv", "/runs/profiles/averages.csv"])
def test_csv_files_keep_provider_and_whole_label_in_their_own_columns(client, names, path):
    """Data for a spreadsheet: the name's two parts apart, each whole (filter by provider)."""
    text = client.get(path).get_data(as_text=True)
    _reads_both(text, [name.split("/", 1)[1] for name in names], path)
    assert "provider" in text.splitlines()[0] and PROVIDER in text


def test_summary_json_names_each_target_by_its_one_name(client, names):
    data = json.loads(client.get("/runs/profiles/summary.json").get_data(as_text=True))
    _reads_both(json.dumps(data, ensure_ascii=False), names, "summary.json")


def test_llmbench_show_names_both_profiles(app, names):
    env = {"LLMBENCH_DB": app.config["DB"], "LLMBENCH_MASTER_KEY_BASE64": TEST_KEY_B64}
    result = CliRunner().invoke(main, ["show", "profiles"], env=env)
    assert result.exit_code == 0, result.output
    _reads_both(result.stdout, names, "llmbench show")
