"""A model server that is busy (429, 503, a model still loading, a restart): its targets wait
like for an absent one (the breaker), no attempt is spent on it, nothing fails.

A fake server of the test's own answers busy for a spell of a fake clock's time, which drives
the spell: it begins on a run event (the judge's warm-up done, the first answer, the judging
phase) and ends when the clock passes its length, so a "20 s" spell takes no real 20 s. A
restart is the server stopped (connection refused) for the first 10 s of the spell.
"""

import datetime as dt
import json

import pytest

from app.cli.progress import Output
from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import NEW
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.db.models import JudgeCall
from app.db.models import Outage
from app.db.models import Run
from app.db.models import RunLog
from app.db.models import RunTarget
from app.engine.orchestrator import tick
from app.providers.interface import ProviderConfig
from app.providers.interface import ProviderError
from app.providers.ollama import OllamaAdapter
from app.providers.openai import OpenAIAdapter
from app.runs.control import resume_run
from app.runs.judge_jobs import queue_pairwise
from app.runs.progress import progress
from tests.engine_helpers import ENDPOINTS
from tests.engine_helpers import FakeClock
from tests.engine_helpers import call_kind
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run
from tests.fakeserver import FakeServer

HOLDER = "test-holder"
LLAMACPP_LOADING = {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}
REPLIES = {
    "429": {"status": 429, "retry_after": 1, "text": "slow down"},
    "503 loading model": {"status": 503, "body": LLAMACPP_LOADING},
    "restart": {"status": 503, "body": LLAMACPP_LOADING},  # once it is up again
}
WHY = {
    "429": ["busy (429, retry after 1 s)"],
    "503 loading model": ["loading model"],
    "restart": ["connection refused", "loading model"],
}


@pytest.fixture
def server():
    """A fake model server this test may stop and start again (not the shared one)."""
    fake = FakeServer().start()
    yield fake
    fake.stop()


@pytest.fixture
def config(app):
    return dict(app.config, OUTAGE_PROBE_SECONDS=5.0, OUTAGE_PROBE_MAX_SECONDS=60.0)


class Spell(FakeClock):
    """A fake clock with a busy spell of the server: from begin() on, every call is answered
    `reply` for `seconds` of the clock's time; for a restart the server is down first."""

    def __init__(self, server, reply, seconds=20.0, down=0.0):
        self.server, self.reply, self.seconds, self.down = server, reply, seconds, down
        self.began = None
        super().__init__()
        server.responder = self.respond

    @property
    def t(self):
        return self._t

    @t.setter
    def t(self, value):
        self._t = value
        if self.began is not None and not self.server.running and self.lasted() >= self.down:
            self.server.restart()

    def lasted(self):
        return (self._t - self.began).total_seconds()

    def begin(self):
        if self.began is not None:
            return
        self.began = self._t
        if self.down:
            self.server.stop()

    def respond(self, call):
        if self.began is not None and self.lasted() < self.seconds:
            return dict(self.reply)
        return None


def spell_for(server, kind):
    if kind == "restart":  # down 10 s, then loading the model for 20 s
        return Spell(server, REPLIES[kind], seconds=30.0, down=10.0)
    return Spell(server, REPLIES[kind])


def begin_on(spell, stage):
    """An on_event listener that begins the spell at the stage: the target's warm-up (the
    judge's is done), the answers (after the first), the judging phase."""

    def listener(event):
        name = event["event"]
        if (
            (stage == "warm-up" and name == "judge_warmup")
            or (stage == "answers" and name == "item_done")
            or (stage == "judge" and name == "phase_changed" and "JUDGING" in event["message"])
        ):
            spell.begin()

    return listener


def events(run, name):
    return list(RunLog.select().where((RunLog.run == run) & (RunLog.event == name)))


def statuses():
    kinds = (NEW, WAITING_FOR_JUDGE, COMPLETED, FAILED)
    return {s: Item.select().where(Item.status == s).count() for s in kinds}


@pytest.mark.parametrize("kind", ["429", "503 loading model", "restart"])
@pytest.mark.parametrize("stage", ["judge warm-up", "warm-up", "answers", "judge"])
def test_a_busy_spell_fails_nothing_and_spends_no_attempt(app, server, config, stage, kind):
    p = make_provider(server)
    run = start_run(p, [(p, "m1")], make_tasks(6))
    spell = spell_for(server, kind)
    if stage == "judge warm-up":
        spell.begin()  # busy before the run's first call
    result = drive(config, spell, on_event=begin_on(spell, stage))
    assert result["state"] == "finished"
    assert statuses() == {NEW: 0, WAITING_FOR_JUDGE: 0, COMPLETED: 6, FAILED: 0}
    assert {(i.answer_attempts, i.attempts) for i in Item.select()} == {(1, 1)}
    assert spell.lasted() >= spell.seconds  # it did wait the spell out
    whys = [e.data["error"] for e in events(run, "provider_waiting")]
    assert list(dict.fromkeys(whys)) == WHY[kind]
    assert len(events(run, "provider_back")) == 1 and Outage.select().count() == 0
    assert RunTarget.get().warmup_error is None


def test_a_429_waits_for_its_retry_after_not_the_probe_backoff(app, server, config):
    p = make_provider(server)
    run = start_run(p, [(p, "m1")], make_tasks(2))
    spell = Spell(server, REPLIES["429"])
    drive(config, spell, on_event=begin_on(spell, "answers"))
    gaps = [
        (dt.datetime.fromisoformat(e.data["nextTryAt"][:-1]) - e.created_at).total_seconds()
        for e in events(run, "provider_waiting")
    ]
    assert len(gaps) >= 19 and set(gaps) == {1.0}


def test_a_warmups_failing_streak_starts_again_after_the_server_was_busy(app, server, config):
    p = make_provider(server)
    run = start_run(p, [(p, "m1")], make_tasks(2))
    clock = FakeClock()
    began = clock()
    seen = []

    def respond(call):
        if call_kind(call)[0] != "warmup":
            return None
        seen.append(call)
        if len(seen) == 1:
            return {"status": 500, "text": "hiccup"}
        if (clock() - began).total_seconds() < 570:  # busy for 9.5 min
            return {"status": 429, "retry_after": 60}
        return {"status": 500, "text": "hiccup"} if len(seen) % 2 else None

    server.responder = respond
    assert drive(config, clock)["state"] == "finished"
    assert (clock() - began).total_seconds() > 600  # the first 500 was over 10 min before
    assert statuses() == {NEW: 0, WAITING_FOR_JUDGE: 0, COMPLETED: 2, FAILED: 0}
    assert events(run, "warmup_failing") == []


def test_a_warmup_due_while_its_server_is_busy_does_not_wake_the_run_early(app, server, config):
    p = make_provider(server)
    start_run(p, [(p, "m1"), (p, "m2")], make_tasks(2))
    seen = []

    def respond(call):
        kind, model, _ = call_kind(call)
        seen.append((kind, model))
        if seen.count((kind, model)) > 1:
            return None
        if (kind, model) == ("warmup", "m1"):
            return {"status": 500, "text": "hiccup"}  # m1 backs off; m2 goes first
        if (kind, model) == ("answer", "m2"):
            return {"status": 429, "retry_after": 30}
        return None

    server.responder = respond
    clock = FakeClock()
    result = tick(config, holder=HOLDER, now=clock)
    assert result["idle"] and result["wakeAt"] < clock() + dt.timedelta(seconds=30)
    clock.t = result["wakeAt"]  # m1's warm-up is due, but its server is busy for 30 s
    result = tick(config, holder=HOLDER, now=clock)
    assert result["idle"] and result["wakeAt"] > clock()


@pytest.mark.parametrize(
    ("kind", "why"),
    [("429", "busy (429, retry after 1 s)"), ("503 loading model", "loading model")],
)
def test_the_live_view_says_why_a_busy_server_is_waited_for(app, client, server, config, kind, why):
    p = make_provider(server)
    run = start_run(p, [(p, "m1")], make_tasks(3))
    spell = Spell(server, REPLIES[kind])
    spell.begin()
    assert tick(config, holder=HOLDER, now=spell)["state"] == "running"
    since = spell().strftime("%H:%M:%S")
    [waiting] = progress(run)["waiting"]
    assert waiting["message"].startswith(f"waiting for fake: {why} since {since} UTC, next try ")
    page = client.get(f"/runs/{run.run_id}/progress", headers={"HX-Request": "true"}).text
    assert f"Waiting for fake: {why} since {since}" in page


def test_a_server_busy_past_the_limit_pauses_the_run_and_continue_finishes(app, server, config):
    p = make_provider(server)
    run = start_run(p, [(p, "m1")], make_tasks(4))
    spell = Spell(server, REPLIES["503 loading model"], seconds=11 * 60)
    result = drive(config, spell, on_event=begin_on(spell, "answers"))
    assert result["state"] == "paused"
    reason = Run.get_by_id(run.id).control_reason
    assert reason.startswith("fake stays busy (loading model since ")
    assert "past the 10 min limit" in reason and "no item was failed" in reason
    assert events(run, "provider_busy")[0].level == "ERROR"
    assert statuses() == {NEW: 3, WAITING_FOR_JUDGE: 1, COMPLETED: 0, FAILED: 0}
    assert {(i.attempts, i.error_msg) for i in Item.select().where(Item.status == NEW)} == {
        (0, None)
    }
    spell.advance(60)  # the model has loaded
    resume_run(run.run_id, now=spell())
    assert drive(config, spell)["state"] == "finished"
    assert statuses() == {NEW: 0, WAITING_FOR_JUDGE: 0, COMPLETED: 4, FAILED: 0}


def test_a_retry_after_past_the_limit_pauses_the_run_at_once(app, server, config):
    p = make_provider(server)
    run = start_run(p, [(p, "m1")], make_tasks(2))
    spell = Spell(server, {"status": 429, "retry_after": 3600}, seconds=1e6)
    spell.begin()
    assert tick(config, holder=HOLDER, now=spell)["state"] == "paused"
    reason = Run.get_by_id(run.id).control_reason
    assert reason.startswith("fake stays busy (busy (429, retry after 3600 s) since ")
    assert "it asks to wait 60 min, past the 10 min limit" in reason
    assert statuses()[NEW] == 2


def test_busy_answers_in_flight_at_once_give_their_claims_back_uncounted(app, server, config):
    p = make_provider(server, max_concurrency=4)
    run = start_run(p, [(p, "m1")], make_tasks(12))
    spell = Spell(server, {**REPLIES["429"], "latency": 0.05})
    result = drive(config, spell, on_event=begin_on(spell, "answers"))
    assert result["state"] == "finished"
    assert statuses() == {NEW: 0, WAITING_FOR_JUDGE: 0, COMPLETED: 12, FAILED: 0}
    assert {i.answer_attempts for i in Item.select()} == {1}
    assert events(run, "retry_scheduled") == []


def test_a_busy_pairwise_judge_makes_its_calls_wait_not_fail(app, fake, server, config):
    target = make_provider(fake)
    run = start_run(target, [(target, "m1"), (target, "m2")], make_tasks(2))
    assert drive(config, FakeClock())["state"] == "finished"
    judge = make_provider(server, name="judge")
    first, second = RunTarget.select().where(RunTarget.run == run).order_by(RunTarget.position)
    job = queue_pairwise(first, second, judge, "judge")
    spell = Spell(server, REPLIES["429"])
    verdict = {"text": json.dumps({"winner": "A", "reason": "because"})}
    server.responder = lambda call: spell.respond(call) or verdict
    spell.begin()
    assert drive(config, spell)["state"] == "finished"
    calls = list(JudgeCall.select().where(JudgeCall.job == job))
    assert len(calls) == 4 and {(c.status, c.attempts) for c in calls} == {(COMPLETED, 1)}
    assert events(run, "provider_waiting")[0].data["error"] == "busy (429, retry after 1 s)"


@pytest.mark.parametrize("wire", ["OPENAI", "OLLAMA"])
@pytest.mark.parametrize(
    ("status", "body", "retry_after", "busy"),
    [
        (429, None, 1, "busy (429, retry after 1 s)"),
        (429, None, None, "busy (429)"),
        (503, {"error": "server busy"}, None, "busy (503)"),
        (503, LLAMACPP_LOADING, None, "loading model"),
        (500, {"error": "loading model"}, None, "loading model"),
        (500, None, None, None),
        (502, None, None, None),
        (400, {"error": "loading model"}, None, None),
    ],
)
def test_a_busy_answer_is_told_from_the_requests_own_errors(
    fake, wire, status, body, retry_after, busy
):
    fake.enqueue(status=status, body=body, retry_after=retry_after)
    models, chat = ENDPOINTS[wire]
    adapter = (OpenAIAdapter if wire == "OPENAI" else OllamaAdapter)(
        ProviderConfig(
            name="t",
            type=wire,
            base_url=fake.url,
            models_endpoint=models,
            inference_endpoint=chat,
        )
    )
    with pytest.raises(ProviderError) as info:
        adapter.chat("m", [{"role": "user", "content": "hi"}])
    adapter.close()
    assert info.value.busy == busy and info.value.unreachable is None


def test_the_cli_says_why_it_waits_once_per_reason(capsys):
    output = Output(as_json=False, quiet=False)
    for error, message in [
        ("connection refused", "waiting for fake: connection refused since 12:00:00 UTC"),
        ("connection refused", "waiting for fake: connection refused since 12:00:00 UTC (2)"),
        ("loading model", "waiting for fake: loading model since 12:00:00 UTC"),
    ]:
        output.event(
            {"event": "provider_waiting", "providerId": 1, "error": error, "message": message}
        )
    output.event({"event": "provider_back", "providerId": 1, "message": "fake answers again"})
    assert capsys.readouterr().err.splitlines() == [
        "waiting for fake: connection refused since 12:00:00 UTC",
        "waiting for fake: loading model since 12:00:00 UTC",
        "fake answers again",
    ]
