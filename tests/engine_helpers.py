"""Builders for engine tests: providers on the fake server, tasks, collections, a fake clock."""

import datetime as dt

from app.clock import utcnow
from app.db.models import Collection
from app.db.models import CollectionTask
from app.db.models import Provider
from app.db.models import Task
from app.engine import lease
from app.engine.orchestrator import tick
from app.engine.warmup import JUDGE_WARMUP_MESSAGES
from app.engine.warmup import WARMUP_MESSAGES
from app.runs.lifecycle import create_run

ENDPOINTS = {"OPENAI": ("/v1/models", "/v1/chat/completions"), "OLLAMA": ("/api/tags", "/api/chat")}


class FakeClock:
    """A clock tests step by hand: call it for 'now', advance() to move on."""

    def __init__(self, start=None):
        self.t = start or utcnow()

    def __call__(self):
        return self.t

    def advance(self, seconds):
        self.t += dt.timedelta(seconds=seconds)
        return self.t


# The model names engine tests use: the fake lists them, so a run's start-time model check
# (every target and the judge must be served by their provider) accepts them.
TEST_MODELS = ("m1", "m2", "m3", "judge")


def serve_models(fake, *names):
    """Make the fake list these models too (GET /v1/models, /api/tags)."""
    fake.models = list(dict.fromkeys([*fake._model_ids(), *names]))


def make_provider(fake, name="fake", type="OPENAI", max_concurrency=1, timeout=5.0, url=None):
    """A provider row pointing at the fake server (which then lists TEST_MODELS)."""
    if fake is not None:
        serve_models(fake, *TEST_MODELS)
    models_ep, chat_ep = ENDPOINTS[type]
    return Provider.create(
        name=name,
        type=type,
        base_url=url or fake.url,
        models_endpoint=models_ep,
        inference_endpoint=chat_ep,
        timeout_seconds=timeout,
        max_concurrency=max_concurrency,
    )


def make_tasks(n, collection="c1", prefix="t", **fields):
    """n tasks 'Question {i}?' in one collection; returns the collection."""
    coll = Collection.get_or_none(Collection.name == collection) or Collection.create(
        name=collection
    )
    for i in range(n):
        values = {
            "task_id": f"{prefix}{i}",
            "category": "general",
            "difficulty": "easy",
            "question": f"Question {prefix}{i}?",
            "excellent": "best",
            "good": "ok",
            "pass_answer": "meh",
            "incorrect_direction": "wrong",
        }
        values.update(fields)
        task = Task.create(**values)
        CollectionTask.create(collection=coll, task=task)
    return coll


def start_run(judge, targets, collection, holder="test-holder", **spec):
    """create_run with judge provider, [(provider, model[, params])] targets, one collection.

    The test orchestrator takes the lease first, as a running server would hold it already.
    """
    lease.acquire(holder, 15.0)
    body = {
        "judgeProviderId": judge.id,
        "judgeModel": spec.pop("judge_model", "judge"),
        "targets": [
            {"providerId": t[0].id, "model": t[1], "params": t[2] if len(t) > 2 else {}}
            for t in targets
        ],
        "collectionIds": [collection.id],
    }
    body.update(spec)
    return create_run(body)


def drive(config, clock, max_ticks=200, holder="test-holder", on_event=None, step=None):
    """Tick until the run is no longer running; when idle jump the clock to the next retry."""
    result = None
    for _ in range(max_ticks):
        result = tick(config, holder=holder, now=clock, on_event=on_event)
        if step:
            step(result)
        if result["state"] != "running":
            return result
        if result["idle"]:
            wake = result.get("wakeAt")
            clock.t = max(clock.t, wake) if wake else clock.t + dt.timedelta(seconds=1)
    raise AssertionError(f"run still running after {max_ticks} ticks: {result}")


def call_kind(call):
    """(kind, model, last message) of a chat call; kind: warmup, judge_warmup, answer, judge,
    unload."""
    body = call["body"] or {}
    messages = body.get("messages") or []
    last = messages[-1]["content"] if messages else ""
    if "response_format" in body or "format" in body:
        kind = "judge_warmup" if last == JUDGE_WARMUP_MESSAGES[-1]["content"] else "judge"
    elif not messages:
        kind = "unload"
    elif last == WARMUP_MESSAGES[-1]["content"]:
        kind = "warmup"
    else:
        kind = "answer"
    return kind, body.get("model"), last


def calls(fake, kind=None):
    """The fake's chat calls as (kind, model, last message), optionally only one kind."""
    out = [call_kind(c) for c in fake.chat_calls()]
    return [c for c in out if kind is None or c[0] == kind]
