"""A run config file (YAML) sets the composite score's latency target like the API does."""

import pytest

from app.errors import ValidationError
from app.runconfig import reader
from tests.cli_helpers import write_config


def _plan(path):
    return reader.load(path, environ={"FAKE_KEY": "k"})


def test_run_config_sets_the_latency_target(app, tmp_path, fake):
    plan = _plan(write_config(tmp_path, fake, latency_target_ms=2500))
    assert plan.settings["latencyTargetMs"] == 2500


def test_run_config_takes_the_api_spelling_too(app, tmp_path, fake):
    plan = _plan(write_config(tmp_path, fake, latencyTargetMs=800))
    assert plan.settings["latencyTargetMs"] == 800


def test_run_config_with_a_bad_latency_target_names_it(app, tmp_path, fake):
    with pytest.raises(ValidationError) as info:
        _plan(write_config(tmp_path, fake, latency_target_ms=0))
    assert any("latency_target_ms" in e["field"] for e in info.value.errors)
