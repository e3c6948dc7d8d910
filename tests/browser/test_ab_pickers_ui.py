"""The A/B target pickers read whole at 1280 px and 390 px: at 1280 px the select is wide
enough for the longest target name (a long model and its params); at both widths the chosen
target's whole name is shown below its select, inside the page, and follows a new choice."""

import pytest

from app.db.connection import database
from app.db.target_name import target_name
from tests.browser.helpers import serving
from tests.conftest import make_app
from tests.factories import add_item
from tests.factories import make_run

pytestmark = [pytest.mark.browser]

LONG_MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct-Q8_0-GGUF"
# How wide the select's longest option text is drawn in the select's own font, and the room
# the select leaves for text (its width less padding and the arrow).
FIT = """(select) => {
  const style = getComputedStyle(select);
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const widest = Math.max(...[...select.options].map(o => ctx.measureText(o.text).width));
  const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return {widest, room};
}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One run with two profiles of one long-named model."""
    app = make_app(tmp_path_factory.mktemp("ab-pickers"))
    with database.connection_context():
        run, targets = make_run(
            "profiles",
            targets=[
                ("smollm-real", LONG_MODEL, {"temperature": 0.2}),
                ("smollm-real", LONG_MODEL, {"temperature": 0.8, "top_p": 0.9}),
            ],
        )
        for target in targets:
            add_item(run, target, "t1", score=50)
        names = [target_name(t.provider_name, t.label) for t in targets]
        ids = [t.id for t in targets]
    database.close()
    with serving(app, "ab-pickers") as base:
        yield {"base": base, "names": names, "ids": ids}


def _open(browser, server, width):
    context = browser.new_context(viewport={"width": width, "height": 844})
    page = context.new_page()
    a, b = server["ids"]
    page.goto(f"{server['base']}/ab?runA=profiles&targetA={a}&targetB={b}")
    return context, page


def test_at_1280_px_the_target_select_fits_the_longest_name(browser, server):
    context, page = _open(browser, server, 1280)
    try:
        fit = page.locator("#ab-targetB").evaluate(FIT)
        assert fit["widest"] <= fit["room"], fit
    finally:
        context.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_the_chosen_name_is_whole_below_the_select_and_follows_a_new_choice(browser, server, width):
    context, page = _open(browser, server, width)
    try:
        shown = page.locator("#ab-targetB-name")
        assert shown.text_content() == server["names"][1]
        box = shown.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.select_option("#ab-targetB", str(server["ids"][0]))
        assert shown.text_content() == server["names"][0]
    finally:
        context.close()
