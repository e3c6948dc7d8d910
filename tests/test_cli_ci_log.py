"""A CI log a person can read: without a terminal, a progress line every 10 s (elapsed,
answered and judged of the total, failures, rate, ETA) and a line at once for each pause,
load step and phase; --json events carry the time and the counts."""

import json

from app.cli.ci_log import Ticker
from app.cli.progress import Output


class Clock:
    """A clock the test moves."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def _summary(counts, judge="judge"):
    return {
        "runId": "ci-1",
        "state": "running",
        "phase": "BENCHMARKING",
        "totalItems": sum(counts.values()),
        "counts": counts,
        "targets": [{"providerName": "fake", "model": "m1", "label": "m1 · fast"}],
        "judgeProviderName": "fake",
        "judgeModel": judge,
    }


NONE_DONE = {"NEW": 40, "WAITING_FOR_JUDGE": 0, "COMPLETED": 0, "FAILED": 0, "CANT_BE_FINISHED": 0}
HALF_DONE = {
    "NEW": 10,
    "WAITING_FOR_JUDGE": 10,
    "COMPLETED": 18,
    "FAILED": 2,
    "CANT_BE_FINISHED": 0,
}


def _output(capsys, counts_now, as_json=False):
    clock = Clock()
    out = Output(as_json, False, ticker=Ticker(clock), read_counts=lambda run_id: counts_now)
    out.start(_summary(NONE_DONE), "run_started")
    capsys.readouterr()
    return out, clock


def test_without_a_screen_a_progress_line_comes_every_10_seconds(capsys):
    out, clock = _output(capsys, HALF_DONE)
    clock.now += 9.9
    out.refresh()
    assert capsys.readouterr().err == ""
    clock.now += 0.1
    out.refresh()
    line = capsys.readouterr().err.strip()
    assert line == ("Run ci-1 [10s] answered 30/40, judged 20/40, 2 failed · 2.50 items/s · ETA 6s")
    out.refresh()  # not due again until 10 s more
    assert capsys.readouterr().err == ""


def test_a_run_without_a_judge_says_answered_only():
    clock = Clock()
    ticker = Ticker(clock)
    ticker.begin(NONE_DONE, judged=False)
    clock.now += 20
    assert "judged" not in ticker.line(HALF_DONE)


def test_json_progress_events_carry_the_time_and_the_counts(capsys):
    out, clock = _output(capsys, HALF_DONE, as_json=True)
    clock.now += 10
    out.refresh()
    (event,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert event["event"] == "progress" and event["at"].endswith("Z")
    assert (event["answered"], event["judged"], event["failed"], event["total"]) == (30, 20, 2, 40)
    assert event["elapsedSeconds"] == 10.0 and event["etaSeconds"] == 6


def test_json_events_from_the_engine_are_stamped(capsys):
    out, _ = _output(capsys, HALF_DONE, as_json=True)
    out.event({"event": "item_done", "runId": "ci-1", "message": "done"})
    (event,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert event["event"] == "item_done" and event["at"].endswith("Z")


def test_a_pause_and_a_load_step_are_said_at_once(capsys):
    out, _ = _output(capsys, HALF_DONE)
    out.event({"event": "load_step", "message": "fake/m1: step 2 of 3, concurrency 4"})
    out.event({"event": "run_paused", "message": "judge unreachable", "level": "WARNING"})
    err = capsys.readouterr().err
    assert "step 2 of 3" in err and "judge unreachable" in err


def test_the_plain_start_line_names_targets_by_label(capsys):
    out = Output(False, False, ticker=Ticker(Clock()))
    out.start(_summary(NONE_DONE), "run_started")
    assert "targets fake/m1 · fast;" in capsys.readouterr().err


def test_a_dead_model_server_at_the_start_is_said_at_each_try(capsys):
    out, _ = _output(capsys, HALF_DONE)
    out.event(
        {
            "event": "warmup_retry",
            "message": "Warm-up of fake/m1: try 2 at 05:00:10 (backoff 2.0 s): refused",
            "level": "WARNING",
        }
    )
    assert "Warm-up of fake/m1: try 2" in capsys.readouterr().err


def test_an_outage_is_said_once_at_its_start_and_at_its_end(capsys):
    out, _ = _output(capsys, HALF_DONE)
    waiting = {
        "event": "provider_waiting",
        "providerId": 1,
        "error": "refused",
        "message": "fake: connection refused; its items wait",
        "level": "WARNING",
    }
    out.event(waiting)
    out.event(waiting)  # the same probe failing again is not said twice
    out.event({"event": "provider_back", "providerId": 1, "message": "fake is back"})
    err = capsys.readouterr().err
    assert err.count("connection refused") == 1 and "fake is back" in err
