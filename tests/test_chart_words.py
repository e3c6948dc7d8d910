"""An empty chart says what is missing: answers that completed without token counts read "No
token counts from this server", not "No completed answers"."""

from app.ratings.charts import tokens_chart
from app.ratings.report import run_report
from app.results.run_charts import run_chart
from app.results.speed_charts import seconds_text
from tests.factories import add_item
from tests.factories import make_run


def _no_tokens_run():
    run, (target,) = make_run("quiet")
    for n in range(3):
        add_item(run, target, f"t{n}", score=70, tokens_generated=None, tokens_per_second=None)
    return run


def test_the_speed_chart_of_answers_without_token_counts_says_so(app):
    svg = run_chart(_no_tokens_run(), "speed")
    assert "No token counts from this server" in svg
    assert "No completed answers" not in svg


def test_the_reports_tokens_chart_says_the_server_sent_no_token_counts(app):
    assert "No token counts from this server" in tokens_chart(
        run_report(_no_tokens_run())["targets"]
    )


def test_a_run_with_no_answers_still_says_nothing_is_finished(app):
    run, _ = make_run("none")
    assert "No completed answers to draw" in run_chart(run, "speed")


def test_an_answer_time_just_under_a_second_reads_in_seconds_not_an_exponent():
    assert seconds_text(0.9996) == "1 s" and seconds_text(0.85) == "850 ms"


def test_without_a_price_the_reports_quality_chart_plots_score_against_answer_time(app, client):
    _no_tokens_run()  # local answers: no cost
    svg = client.get("/runs/quiet/report/cost_quality.svg").get_data(as_text=True)
    assert "Score against p90 answer time" in svg and "Cost per 1000 tasks" not in svg
    page = client.get("/runs/quiet/report").get_data(as_text=True)
    assert "against p90 answer time per target (no target has a price)" in page


def test_the_report_table_headers_are_words(client, app):
    _no_tokens_run()
    page = client.get("/runs/quiet/report").get_data(as_text=True)
    assert "Average rating" in page and "Cost per 1000 tasks (USD)" in page
    assert "avg_rating" not in page and "cost_per_1k_tasks" not in page
