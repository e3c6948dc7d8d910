"""Results pages through the test client: state in the URL, fragments, row expansion, actions."""

import pytest
from bs4 import BeautifulSoup
from flask import url_for

from app.db.connection import database
from app.db.models import FAILED
from app.db.models import NEW
from app.db.models import Item
from app.db.models import Run
from app.runs.retries import retryable_answer_failures
from app.web.results import _ITEM_MARK
from app.web.results import AVERAGE_DEFAULTS
from app.web.results import FILTER_KEYS
from app.web.results import TABLE_DEFAULTS
from app.web.results import Links
from tests.conftest import make_app
from tests.factories import add_item
from tests.factories import bulk_items
from tests.factories import make_run

HX = {"HX-Request": "true"}


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.fixture
def run_with_items(app):
    run, (t1, t2) = make_run("r1", targets=[("local", "m1"), ("remote", "m2")])
    bulk_items(run, t1, 60)
    bulk_items(run, t2, 60, score_of=lambda n: float(100 - n))
    jf = add_item(
        run,
        t1,
        "zz-judge-failed",
        status=FAILED,
        error_stage="judge",
        error_msg="judge returned bad json",
        answer="an answer",
        response_raw='{"choices": [{"message": {"content": "an answer"}}]}',
        judge_raw="not json at all",
    )
    return run, t1, t2, jf


def _task_keys(page):
    return [td.get_text(strip=True) for td in page.select("#results-table td.rs-task summary")]


def test_results_page_renders_every_region(client, run_with_items):
    page = soup(client.get("/runs/r1/results"))
    for region in ("#averages", "#results-table", "#results-filters"):
        assert page.select_one(region) is not None
    assert len(page.select("#averages tbody tr")) == 2
    assert len(page.select(".rs-charts:not(.sp-charts) img")) == 4
    assert page.select_one("#results-table").get("hx-target") == "this"


def test_results_page_is_paginated(client, run_with_items):
    page = soup(client.get("/runs/r1/results?per_page=25&page=2"))
    assert len(page.select("#results-table tbody tr[id^=item-]")) == 25
    assert "Items 26–50 of 121" in page.select_one(".rs-summary").get_text()
    last = page.select("#results-table tbody tr[id^=item-]")[-1]["id"].removeprefix("item-")
    assert page.select_one('a[rel="next"]')["href"] == (
        f"/runs/r1/results?page=3&per_page=25&after={last}"
    )


def test_next_and_previous_links_continue_from_the_page_edges(client, run_with_items):
    second = soup(client.get("/runs/r1/results?per_page=25&page=2"))
    third = soup(client.get(second.select_one('a[rel="next"]')["href"]))
    assert "Items 51–75 of 121" in third.select_one(".rs-summary").get_text()
    back = soup(client.get(third.select_one('a[rel="prev"]')["href"]))
    assert _task_keys(back) == _task_keys(second)
    assert "before=" in third.select_one('a[rel="prev"]')["href"]


def test_the_last_link_counts_from_the_end(client, run_with_items):
    first = soup(client.get("/runs/r1/results?per_page=25"))
    last_link = first.select_one("a.rs-pager__end")
    assert last_link.get_text(strip=True) == "Last »"
    assert last_link["href"] == "/runs/r1/results?page=5&per_page=25"
    last = soup(client.get(last_link["href"]))
    assert "Items 101–121 of 121" in last.select_one(".rs-summary").get_text()
    assert last.select_one('a[rel="next"]') is None


def test_sort_by_score_descending_from_the_url(client, run_with_items):
    page = soup(client.get("/runs/r1/results?sort=score&dir=desc&model=remote/m2"))
    keys = _task_keys(page)
    assert keys[:2] == ["t000000", "t000001"]
    header = page.select_one('th[aria-sort="descending"]')
    assert header is not None and "Score" in header.get_text()


def test_header_links_toggle_direction_and_target_the_fragment(client, run_with_items):
    page = soup(client.get("/runs/r1/results?sort=time"))
    link = page.select_one('th[aria-sort="ascending"] a')
    assert "dir=desc" in link["href"] and link["href"].startswith("/runs/r1/results?")
    assert link["hx-get"].startswith("/runs/r1/results/table?")
    assert link["hx-include"] == "#averages-state"


@pytest.mark.parametrize(
    "query, expected",
    [
        ("status=judge_failed", 1),
        ("status=COMPLETED&min_score=90", 11),
        ("category=math&model=local/m1", 15),
        ("difficulty=hard&max_score=10", 3),
    ],
)
def test_filters_from_the_url(client, run_with_items, query, expected):
    page = soup(client.get(f"/runs/r1/results/table?{query}&per_page=200"))
    assert len(page.select("tbody tr[id^=item-]")) == expected


@pytest.mark.parametrize("category", ["math", "code", "writing", "facts", "poetry"])
def test_a_category_filter_counts_every_item_of_that_category_on_the_page_as_in_its_fragment(
    client, run_with_items, category
):
    # The full page takes the count from its category breakdown; the fragment counts items.
    made = Item.select().where(Item.category == category).count()
    # An item not answered yet counts too (and the failed one, in its category).
    run, t1, _t2, _jf = run_with_items
    add_item(run, t1, f"late-{category}", status=NEW, category=category)
    query = f"category={category}&per_page=25"
    page = soup(client.get(f"/runs/r1/results?{query}")).select_one(".rs-summary").get_text()
    table = soup(client.get(f"/runs/r1/results/table?{query}")).select_one(".rs-summary")
    assert page == table.get_text()
    assert f"of {made + 1} " in page


def test_table_fragment_for_htmx_pushes_the_page_url(client, run_with_items):
    response = client.get("/runs/r1/results/table?sort=score&dir=desc&avg_sort=score", headers=HX)
    assert response.headers["HX-Push-Url"] == "/runs/r1/results?sort=score&dir=desc&avg_sort=score"
    page = soup(response)
    root = page.find()
    assert root["id"] == "results-table"
    assert page.select_one("header.topbar") is None


def test_averages_fragment_sorts_and_keeps_the_table_state(client, run_with_items):
    response = client.get(
        "/runs/r1/results/averages?avg_sort=score&avg_dir=asc&sort=time", headers=HX
    )
    page = soup(response)
    assert page.find()["id"] == "averages"
    assert [td.get_text(strip=True) for td in page.select("tbody tr td:nth-of-type(2)")] == [
        "m1",
        "m2",
    ]
    assert response.headers["HX-Push-Url"] == "/runs/r1/results?sort=time&avg_sort=score"


@pytest.mark.parametrize(
    "query, field",
    [
        ("sort=colour", "sort"),
        ("page=zero", "page"),
        ("min_score=lots", "min_score"),
        ("min_score=-5", "min_score"),
        ("max_score=500", "max_score"),
        ("avg_sort=mood", "avg_sort"),
        ("after=x", "after"),
        ("after=99999", "after"),
        ("after=1&before=2", "before"),
    ],
)
def test_bad_parameters_answer_400_naming_the_field(client, run_with_items, query, field):
    response = client.get(f"/runs/r1/results?{query}")
    assert response.status_code == 400
    assert field in response.get_data(as_text=True)


@pytest.mark.parametrize("query", ["min_score=0&max_score=100", "min_score=12.5"])
def test_scores_from_0_to_100_are_accepted(client, run_with_items, query):
    assert client.get(f"/runs/r1/results?{query}").status_code == 200


def test_unknown_run_is_404(client, app):
    assert client.get("/runs/nope/results").status_code == 404


def test_page_query_count_does_not_grow_with_rows(client, app, monkeypatch):
    run_small, (small,) = make_run("small")
    bulk_items(run_small, small, 5)
    run_big, (big,) = make_run("big")
    bulk_items(run_big, big, 400)
    client.get("/runs/small/results")  # warm the CI cache for both runs
    client.get("/runs/big/results")
    counts = []
    original = database.execute_sql

    def counting(sql, params=None):
        counts[-1] += 1
        return original(sql, params)

    # The bound database behind the proxy (a proxy takes no attributes).
    monkeypatch.setattr(database.obj, "execute_sql", counting)
    for run_id in ("small", "big"):
        counts.append(0)
        assert client.get(f"/runs/{run_id}/results?per_page=200").status_code == 200
    assert counts[0] == counts[1]
    # Run, targets, averages (+ CIs), breakdowns, the table page and its count, charts' data,
    # the judge check, system metrics and repeats, the model sort's target order (keyset.py),
    # the secrets' stamp of the masking pass (web/masking.py), the composite score's answer
    # times (results/composite_figures.py), the speed table's answers and its cache stamp
    # (results/speed.py: the kept figures' own reads), the judge check's warnings (the targets'
    # models), the judge check's
    # stamp of people's labels (ratings, the votes on each side and the latest vote change:
    # index-only counts), and the stamp of the figures kept per run state (results/kept.py:
    # three small reads, once per page however many kept figures it shows): a fixed number,
    # whatever the rows.
    assert counts[1] <= 22, counts


def test_a_results_page_reads_the_runs_latest_item_change_and_kept_counts_once(
    client, run_with_items, monkeypatch
):
    # Its kept figures and its speed figures are stamped by the same two reads: each one a
    # round trip to PostgreSQL.
    client.get("/runs/r1/results")  # the figures worked out and kept
    seen = []
    original = database.execute_sql

    def reading(sql, params=None):
        seen.append(sql)
        return original(sql, params)

    monkeypatch.setattr(database.obj, "execute_sql", reading)
    assert client.get("/runs/r1/results").status_code == 200
    latest = [sql for sql in seen if 'MAX("t1"."updated_at")' in sql and '"item"' in sql]
    counts = [sql for sql in seen if '"item_count' in sql and '"answer_ms_n"' in sql]
    assert len(latest) == 1, latest
    assert len(counts) == 1, counts


def test_row_expansion_is_lazy_loaded_with_a_no_js_link(client, run_with_items):
    _run, _t1, _t2, jf = run_with_items
    page = soup(client.get("/runs/r1/results?status=judge_failed"))
    details = page.select_one(f"#item-{jf.id} details.rs-expand")
    assert details["hx-get"] == f"/runs/r1/items/{jf.id}"
    assert details["hx-trigger"] == "toggle once"
    assert details["hx-target"] == f"#detail-{jf.id}"
    assert details.select_one("a")["href"] == f"/runs/r1/items/{jf.id}"


def test_item_fragment_shows_answer_reason_and_raw_json(client, run_with_items):
    _run, _t1, _t2, jf = run_with_items
    response = client.get(f"/runs/r1/items/{jf.id}", headers=HX)
    assert "HX-Request" in response.headers["Vary"]
    page = soup(response)
    assert page.find()["class"] == ["rs-item"]
    text = page.get_text()
    assert "an answer" in text and "judge returned bad json" in text
    assert '"choices": [' in page.select(".rs-raw")[0].get_text()
    assert "not json at all" in page.select(".rs-raw")[1].get_text()


def test_item_page_without_htmx_is_a_full_page(client, run_with_items):
    _run, _t1, _t2, jf = run_with_items
    page = soup(client.get(f"/runs/r1/items/{jf.id}"))
    assert page.select_one("header.topbar") is not None
    assert page.select_one(".rs-item") is not None


def test_item_of_another_run_is_404(client, run_with_items):
    make_run("other")
    _run, _t1, _t2, jf = run_with_items
    assert client.get(f"/runs/other/items/{jf.id}").status_code == 404


def test_retry_judge_button_only_on_judge_failed_rows(client, run_with_items):
    _run, _t1, _t2, jf = run_with_items
    page = soup(client.get("/runs/r1/results?per_page=200"))
    forms = page.select("#results-table form.rs-retry")
    assert len(forms) == 1
    assert forms[0]["action"] == f"/runs/r1/items/{jf.id}/retry-judge"
    assert forms[0]["method"] == "post"


def test_retry_judge_form_returns_to_the_page_it_is_on(client, run_with_items):
    _run, _t1, _t2, jf = run_with_items
    page = soup(client.get("/runs/r1/results?status=judge_failed&sort=score"))
    form = page.select_one("#results-table form.rs-retry")
    assert form.select_one('input[name="next"]')["value"] == (
        "/runs/r1/results?sort=score&status=judge_failed"
    )
    assert form.select_one('input[name="csrf_token"]')["value"]


def test_item_links_are_the_item_urls_whatever_the_run_id(app):
    # The id goes where url_for puts it, even in a run id made of the same digits.
    with app.test_request_context():
        for run_id in ("r1", str(_ITEM_MARK), f"{_ITEM_MARK}.{_ITEM_MARK}"):
            links = Links(run_id, {})
            for endpoint in ("results.item", "results.retry_judge"):
                expected = url_for(endpoint, run_id=run_id, item_id=7)
                assert links.item(7, endpoint) == expected


def test_the_number_filter_writes_what_the_num_macro_writes(app):
    # The results table writes its numbers with the filter, the other pages with the macro.
    env = app.jinja_env
    macro = env.from_string('{% from "_macros.html" import num %}{{ num(v, d) }}')
    ours = env.from_string("{{ v|number(d) }}")
    for value in (None, 0, 0.05, -1234.5678, 12, 1e9, 99.95, float("nan")):
        for digits in (0, 1, 2, 4):
            assert ours.render(v=value, d=digits) == macro.render(v=value, d=digits)


def test_links_are_the_urls_url_for_writes(app):
    # Links encodes the query itself (url_for once per page): the same URLs, odd values too.
    state = {**TABLE_DEFAULTS, **AVERAGE_DEFAULTS, **dict.fromkeys(FILTER_KEYS, "")}
    odd = {"category": "a/b c&d=é+ü?#", "model": "ollama/llama3:8b", "min_score": "2.5"}
    changes = [{}, {"page": 3, "after": 1234}, {"sort": "score", "dir": "desc"}, odd]
    with app.test_request_context():
        for change in changes:
            links = Links("r-1.x", {**state, **change})
            keys = (*TABLE_DEFAULTS, *FILTER_KEYS, *AVERAGE_DEFAULTS)
            params = links._params(keys, {})
            assert links.page() == url_for("results.show", run_id="r-1.x", **params)
            table_params = links._params((*TABLE_DEFAULTS, *FILTER_KEYS), {"page": 1})
            expected = url_for("results.table", run_id="r-1.x", **table_params)
            assert links.table(page=1) == expected
            averages = links.averages(avg_sort="score")
            assert averages == url_for("results.averages", run_id="r-1.x", avg_sort="score")


def test_retry_judge_requeues_the_item_and_redirects_back(client, run_with_items):
    _run, _t1, _t2, jf = run_with_items
    response = client.post(
        f"/runs/r1/items/{jf.id}/retry-judge", data={"next": "/runs/r1/results?status=judge_failed"}
    )
    assert response.status_code == 302
    assert response.headers["Location"] == "/runs/r1/results?status=judge_failed"
    assert Item.get_by_id(jf.id).status == "WAITING_FOR_JUDGE"


def test_retry_judge_ignores_a_foreign_next_url(client, run_with_items):
    _run, _t1, _t2, jf = run_with_items
    response = client.post(
        f"/runs/r1/items/{jf.id}/retry-judge", data={"next": "https://evil.example/runs/r1/"}
    )
    assert response.headers["Location"] == "/runs/r1/results"


def test_retry_all_failed_judgements(client, run_with_items):
    page = soup(client.get("/runs/r1/results"))
    form = page.find("form", action="/runs/r1/results/retry-judgements")
    assert "(1)" in form.get_text()
    response = client.post("/runs/r1/results/retry-judgements")
    assert response.status_code == 302
    assert Item.select().where(Item.status == FAILED).count() == 0


def test_retry_failed_answers_sits_next_to_retry_judgements_and_requeues_them(
    client, run_with_items
):
    run, t1, _, _ = run_with_items
    add_item(run, t1, "no-answer", status=FAILED, error_stage="answer", error_msg="timeout")
    page = soup(client.get("/runs/r1/results"))
    form = page.find("form", action="/runs/r1/results/retry-answers")
    assert "Retry failed answers (1)" in form.get_text()
    assert form.find("input", attrs={"name": "csrf_token"}) is not None
    assert form.find_previous_sibling("form")["action"] == "/runs/r1/results/retry-judgements"
    response = client.post("/runs/r1/results/retry-answers")
    assert response.status_code == 302
    item = Item.get(Item.task_key == "no-answer")
    assert item.status == "NEW"


def test_retry_failed_answers_counts_answer_and_warm_up_failures_not_the_judges(
    client, run_with_items
):
    # The count comes from the kept counts: the same items the retry asks again.
    run, t1, t2, _ = run_with_items
    add_item(run, t1, "no-answer", status=FAILED, error_stage="answer", error_msg="timeout")
    add_item(run, t2, "no-warm-up", status=FAILED, error_stage="warmup", error_msg="refused")
    add_item(run, t2, "cut", status="CANT_BE_FINISHED", error_stage="answer", error_msg="cut")
    page = soup(client.get("/runs/r1/results"))
    form = page.find("form", action="/runs/r1/results/retry-answers")
    assert retryable_answer_failures(run) == 2
    assert "Retry failed answers (2)" in form.get_text()


def test_no_retry_failed_answers_button_without_failed_answers(client, run_with_items):
    page = soup(client.get("/runs/r1/results"))
    assert page.find("form", action="/runs/r1/results/retry-answers") is None


def test_delete_run_sits_behind_a_confirmation_and_redirects_to_history(client, run_with_items):
    page = soup(client.get("/runs/r1/results"))
    form = page.find("form", action="/runs/r1/results/delete")
    assert form.find_parent("details") is not None
    response = client.post("/runs/r1/results/delete")
    assert response.status_code == 302
    assert response.headers["Location"] == "/runs/"
    assert Run.get_or_none(Run.run_id == "r1") is None


def test_forms_carry_the_csrf_token(tmp_path):
    app = make_app(tmp_path, WTF_CSRF_ENABLED=True)
    run, (target,) = make_run("r1")
    add_item(run, target, "x", status=FAILED, error_stage="judge", error_msg="e", answer="a")
    client = app.test_client()
    page = soup(client.get("/runs/r1/results"))
    forms = page.select('form[method="post"]')
    assert len(forms) == 4  # retry one, retry all failed judgements, the judge check, delete
    for form in forms:
        assert form.select_one('input[name="csrf_token"]')["value"]
    assert client.post("/runs/r1/results/delete").status_code == 400
    database.close()


@pytest.mark.parametrize(
    "path, filename, mimetype",
    [
        ("results.csv", "run-r1-detailed.csv", "text/csv"),
        ("averages.csv", "run-r1-average.csv", "text/csv"),
        ("results.md", "run-r1.md", "text/markdown"),
        ("summary.json", "run-r1-summary.json", "application/json"),
        ("report.html", "run-r1-report.html", "text/html"),
    ],
)
def test_export_links_download_attachments(client, run_with_items, path, filename, mimetype):
    response = client.get(f"/runs/r1/{path}")
    assert response.status_code == 200
    assert response.headers["Content-Disposition"] == f'attachment; filename="{filename}"'
    assert response.mimetype == mimetype
    assert response.is_streamed
    assert len(response.get_data()) > 100


@pytest.mark.parametrize(
    "path, content_type",
    [
        ("results.csv", "text/csv; charset=utf-8"),
        ("averages.csv", "text/csv; charset=utf-8"),
        ("results.md", "text/markdown; charset=utf-8"),
        ("summary.json", "application/json"),
        ("report.html", "text/html; charset=utf-8"),
    ],
)
def test_export_content_type_names_the_charset_once(client, run_with_items, path, content_type):
    assert client.get(f"/runs/r1/{path}").headers["Content-Type"] == content_type


def test_detailed_csv_download_has_the_seed_header(client, run_with_items):
    body = client.get("/runs/r1/results.csv").get_data(as_text=True)
    assert body.startswith("provider_name,model_name,task_id,task_name,task_status,")
    assert body.count("\r\n") == 122


def test_chart_endpoints_serve_svg(client, run_with_items):
    for name in ("score", "speed", "latency", "category"):
        response = client.get(f"/runs/r1/charts/{name}.svg?size=narrow")
        assert response.status_code == 200 and response.mimetype == "image/svg+xml"
    assert client.get("/runs/r1/charts/pie.svg").status_code == 404


def test_compare_page_pickers_and_result(client, app):
    run_a, (a,) = make_run("ra")
    run_b, (b,) = make_run("rb")
    for n in range(10):
        add_item(run_a, a, f"t{n}", score=80)
        add_item(run_b, b, f"t{n}", score=60)
    page = soup(client.get("/compare?a=ra&b=rb"))
    assert page.select_one("#cmp-a option[selected]")["value"] == "ra"
    assert page.select_one("#cmp-b option[selected]")["value"] == "rb"
    assert "worse" in page.select_one("table.rs-compare").get_text()
    assert "Regression" in page.select_one(".flash--error").get_text()


def test_compare_page_without_runs_shows_the_pickers(client, app):
    page = soup(client.get("/compare"))
    assert page.select_one("form.rs-compare-form") is not None


@pytest.mark.parametrize(
    "query, says", [("a=ra", "pick run B"), ("b=ra", "pick run A"), ("a=ra&b=ra", "both ra")]
)
def test_compare_page_with_one_run_or_the_same_twice_gives_a_neutral_hint(client, app, query, says):
    make_run("ra")
    response = client.get(f"/compare?{query}")
    page = soup(response)
    assert response.status_code == 200
    assert page.select_one(".flash--error") is None and page.select_one("table.rs-compare") is None
    assert says in page.select_one(".flash--info[role=status]").get_text()
    assert page.select_one("#cmp-a option[selected], #cmp-b option[selected]")["value"] == "ra"


def test_compare_page_unknown_run_is_404_with_the_form(client, app):
    make_run("ra")
    response = client.get("/compare?a=ra&b=gone")
    assert response.status_code == 404
    assert "gone" in response.get_data(as_text=True)
