"""The A/B pickers name two profiles of one long-named model whole: each option's text is the
target's one name, and the chosen target's whole name is written below its select (a closed
select cuts a long name)."""

from bs4 import BeautifulSoup

from app.db.target_name import target_name
from tests.factories import add_item
from tests.factories import make_run

LONG_MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct-Q8_0-GGUF"


def _two_profiles():
    run, targets = make_run(
        "profiles",
        targets=[
            ("smollm-real", LONG_MODEL, {"temperature": 0.2}),
            ("smollm-real", LONG_MODEL, {"temperature": 0.8, "top_p": 0.9}),
        ],
    )
    for target in targets:
        add_item(run, target, "t1", score=50)
    return targets


def _page(client, query):
    reply = client.get("/ab", query_string=query)
    return BeautifulSoup(reply.get_data(as_text=True), "html.parser")


def test_each_target_option_reads_the_targets_one_name(client):
    a, b = _two_profiles()
    page = _page(client, {"runA": "profiles"})
    options = [o.get_text() for o in page.select("#ab-targetA option") if o["value"]]
    assert options == [target_name(t.provider_name, t.label) for t in (a, b)]
    assert options[0] != options[1]


def test_the_chosen_targets_whole_name_is_written_below_its_select(client):
    a, b = _two_profiles()
    page = _page(client, {"runA": "profiles", "targetA": a.id, "targetB": b.id})
    assert page.select_one("#ab-targetA-name").get_text() == target_name(a.provider_name, a.label)
    assert page.select_one("#ab-targetB-name").get_text() == target_name(b.provider_name, b.label)
    assert page.select_one("#ab-targetA")["aria-describedby"] == "ab-targetA-name"


def test_no_name_is_written_below_a_select_with_nothing_chosen(client):
    _two_profiles()
    page = _page(client, {"runA": "profiles"})
    assert page.select_one("#ab-targetA-name").get_text() == ""
