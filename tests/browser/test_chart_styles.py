"""The charts keep their styles under the pages' Content-Security-Policy: /trends (lines, the
category chart and a collection's radar) and a run's results page load with no console error
and no CSP violation, and the charts are drawn in the house colours."""

import datetime as dt

import pytest

from app.charts.palette import PALETTE
from app.db.connection import database
from app.db.models import Collection
from app.schedules.digest import digest_finished
from tests.browser.helpers import serving
from tests.conftest import make_app
from tests.over_time import T0
from tests.over_time import finished_run

pytestmark = [pytest.mark.browser]

DAY = dt.timedelta(days=1)
# Every CSP refusal, also those a console message would not name (an SVG's inline <style>).
WATCH_CSP = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.cspViolations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`);
});
"""


def _rgb(hex_colour):
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """Five nightly runs of two models in one collection, three categories each."""
    app = make_app(tmp_path_factory.mktemp("chart-styles"))
    with database.connection_context():
        collection = Collection.create(name="nightly")
        for day in range(5):
            finished_run(
                f"night-{day}",
                {
                    "local/alpha": [60 + day, 70, 80, 65, 75, 85],
                    "local/beta": [50, 55 - day, 60, 52, 58, 62],
                },
                finished_at=T0 + day * DAY,
                collection=collection,
                category_of=lambda task: ("math", "logic", "facts")[task % 3],
            )
            digest_finished(T0 + day * DAY)
        collection_id = collection.id
    with serving(app, "chart-styles-server") as base:
        yield {"base": base, "collection": collection_id}


@pytest.fixture
def watched(page):
    page.add_init_script(WATCH_CSP)
    return page


def _problems(page):
    return page.console_errors + page.evaluate("window.cspViolations")


def _loaded(page, selector):
    """Whether every image of `selector` has loaded a picture."""
    return page.eval_on_selector_all(
        selector, "imgs => imgs.length > 0 && imgs.every(i => i.complete && i.naturalWidth > 0)"
    )


def test_trends_draws_its_charts_with_no_console_error_or_csp_violation(watched, server):
    from playwright.sync_api import expect

    watched.goto(f"{server['base']}/trends?collection={server['collection']}")
    for chart in ("score", "tokensPerSecond", "ttftMs", "categories"):
        expect(watched.locator(f"#chart-{chart} .chart-wide svg")).to_be_visible()
        expect(watched.locator(f"#chart-{chart} .chart-wide svg polyline")).not_to_have_count(0)
    assert _problems(watched) == []
    expect(watched.locator("#chart-radar img")).to_be_visible()
    watched.wait_for_function(
        "() => [...document.querySelectorAll('#chart-radar img')].every(i => i.complete)"
    )
    assert _loaded(watched, "#chart-radar img")
    assert _problems(watched) == []


def test_the_trends_line_charts_are_styled_by_the_page(watched, server):
    from playwright.sync_api import expect

    watched.goto(f"{server['base']}/trends")
    chart = watched.locator("#chart-score .chart-wide svg")
    expect(chart).to_be_visible()
    # app.css sizes the chart to its figure; unstyled, an SVG with only a viewBox is 300 px.
    widths = chart.evaluate(
        "svg => [svg.getBoundingClientRect().width, svg.parentNode.clientWidth]"
    )
    assert widths[0] == widths[1] > 300
    line = chart.locator("polyline").first
    assert line.evaluate("l => getComputedStyle(l).stroke") == _rgb(PALETTE[0])


def test_the_radar_is_drawn_in_the_house_colours(watched, server):
    from playwright.sync_api import expect

    watched.goto(f"{server['base']}/trends/radar.svg?collection={server['collection']}")
    line = watched.locator(".serie-0 .line").first
    expect(line).to_be_attached()
    # pygal's <style> colours the series; without it the line has no stroke at all.
    assert line.evaluate("l => getComputedStyle(l).stroke") == _rgb(PALETTE[0])
    assert _problems(watched) == []


def test_a_runs_results_page_loads_its_charts_with_no_console_error_or_csp_violation(
    watched, server
):
    from playwright.sync_api import expect

    watched.goto(f"{server['base']}/runs/night-4/results")
    charts = watched.locator(".rs-charts img, figure img")
    expect(charts.first).to_be_visible()
    for index in range(charts.count()):
        charts.nth(index).scroll_into_view_if_needed()
    watched.wait_for_function(
        "() => [...document.querySelectorAll('figure img')].every(i => i.complete)"
    )
    assert _loaded(watched, "figure img")
    assert _problems(watched) == []
