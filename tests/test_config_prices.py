"""Prices in the config (USD per 1M input / output tokens) are applied to the run through the
price table; a budget with an unpriced target or judge is an error at validate unless
--allow-unpriced; the resume command printed for a budget stop carries the budget flag."""

import pytest
import yaml

from app.db.models import Item
from app.db.models import Price
from app.db.models import Run
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows
from tests.cli_helpers import write_config

USAGE = {"prompt_tokens": 1000, "completion_tokens": 2000, "total_tokens": 3000}


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


def _with_prices(path, prices, **run):
    config = yaml.safe_load(path.read_text())
    config["prices"] = prices
    config["run"].update(run)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


PRICES = [
    {"provider": "fake", "model": "m1", "input_per_1m": 1.0, "output_per_1m": 2.0},
    {"provider": "fake", "model": "m2", "inputPer1m": 0, "outputPer1m": 0},
    {"provider": "fake", "model": "judge", "input_per_1m": 0.5, "output_per_1m": 0.5},
]


def test_config_prices_go_to_the_price_table_and_cost_the_answers(cli, tmp_path, fake):
    fake.responder = lambda call: (
        None if call["body"]["model"] == "judge" else {"text": "ok", "usage": USAGE}
    )
    path = _with_prices(write_config(tmp_path, fake), PRICES)
    assert cli("run", "-c", path, "--quiet").exit_code == 0
    prices = {(p.model, p.input_per_1m, p.output_per_1m) for p in rows(Price)}
    assert prices == {("m1", 1.0, 2.0), ("m2", 0.0, 0.0), ("judge", 0.5, 0.5)}
    costs = {(i.target.model, i.cost_usd, i.cost_source) for i in rows(Item)}
    # 1000 in x $1/1M + 2000 out x $2/1M = $0.005 per m1 answer
    assert costs == {("m1", 0.005, "price_table"), ("m2", 0.0, "price_table")}


def test_a_bad_price_is_named_with_its_line(cli, tmp_path, fake):
    path = _with_prices(
        write_config(tmp_path, fake),
        [{"provider": "fake", "model": "m1", "input_per_1m": -1, "colour": 1}],
    )
    result = cli("validate", path)
    assert result.exit_code == 2
    lines = path.read_text().splitlines()
    colour = next(n for n, text in enumerate(lines, 1) if "colour" in text)
    assert f"line {colour}: prices[0].colour: unknown key" in result.stderr
    assert "prices[0].input_per_1m: a price in USD from 0 to 1000000" in result.stderr


def test_the_dry_run_shows_the_prices_and_saves_none(cli, tmp_path, fake):
    path = _with_prices(write_config(tmp_path, fake), PRICES)
    result = cli("run", "-c", path, "--dry-run")
    assert "Price fake/m1: $1 in, $2 out per 1M tokens" in result.stdout
    assert not (tmp_path / "cli.db").exists()


def test_a_budget_with_unpriced_models_is_an_error_naming_them(cli, tmp_path, fake):
    path = _with_prices(write_config(tmp_path, fake), PRICES[:1], max_budget_usd=2)
    result = cli("validate", path)
    assert result.exit_code == 2
    assert "run.max_budget_usd: the budget cannot count what these cost" in result.stderr
    assert "judge fake/judge, target fake/m2;" in result.stderr
    assert "fake/m1" not in result.stderr.split("they have no price:")[1].split(";")[0]


def test_the_run_refuses_an_unpriced_budget_before_any_call(cli, tmp_path, fake):
    result = cli("run", "-c", write_config(tmp_path, fake, max_budget_usd=2))
    assert result.exit_code == 2 and fake.calls == [] and not rows(Run)


def test_allow_unpriced_accepts_it(cli, tmp_path, fake):
    path = write_config(tmp_path, fake, max_budget_usd=2)
    assert cli("validate", path, "--allow-unpriced").exit_code == 0


def test_prices_in_the_database_count(cli, tmp_path, fake):
    path = _with_prices(write_config(tmp_path, fake), PRICES)
    assert cli("run", "-c", path, "--quiet").exit_code == 0  # saves the prices
    again = write_config(tmp_path, fake, name="again.yml", max_budget_usd=2)
    assert cli("validate", again).exit_code == 0


def test_an_openrouter_provider_reports_its_cost_so_needs_no_price(app, tmp_path, fake):
    from app.runconfig import reader

    path = write_config(tmp_path, fake, max_budget_usd=2)
    path.write_text(path.read_text().replace(fake.url, "https://openrouter.ai/api"))
    plan = reader.load(path, environ={"FAKE_KEY": "k"})
    assert plan.settings["maxBudgetUsd"] == 2.0


def test_a_budget_stop_prints_the_resume_command_with_a_higher_budget(cli, tmp_path, fake):
    fake.responder = lambda call: (
        None if call["body"]["model"] == "judge" else {"text": "ok", "usage": USAGE}
    )
    expensive = [{**PRICES[0], "model": m, "input_per_1m": 1000} for m in ("m1", "m2")]
    path = _with_prices(write_config(tmp_path, fake), expensive + PRICES[2:], max_budget_usd=1.5)
    result = cli("run", "-c", path)
    assert result.exit_code == 3
    (run,) = rows(Run)
    # $1.004 per answer: two answers spend $2.008, so twice that is suggested.
    assert f"Continue it with: llmbench resume {run.run_id} --max-budget-usd 4.02" in (
        result.stderr
    )
