"""Regression alerts on constructed runs: when they fire, when they stay quiet, the webhook."""

import datetime as dt
import json
import random

import pytest

from app import crypto
from app.catalog.providers import create_provider
from app.db.models import Alert
from app.db.models import Collection
from app.db.models import RunDigest
from app.db.models import RunLog
from app.db.models import Template
from app.schedules.baselines import pin_baseline
from app.schedules.digest import digest_finished
from app.schedules.webhooks import RETRY_SECONDS
from app.schedules.webhooks import deliver_due
from tests.over_time import T0
from tests.over_time import Receiver
from tests.over_time import finished_run

TASKS = 30
DAY = dt.timedelta(days=1)


def scores(rng, mean=70.0, sd=12.0, n=TASKS):
    return [min(100.0, max(0.0, rng.gauss(mean, sd))) for _ in range(n)]


def shifted(before, rng, by, noise=3.0):
    return [min(100.0, max(0.0, s + by + rng.gauss(0, noise))) for s in before]


def template(webhook=None, threshold=5.0):
    t = Template.create(name="nightly", spec={}, regression_threshold=threshold)
    if webhook:
        t.webhook_url = crypto.encrypt(webhook, f"template:{t.id}:webhook")
        t.save()
    return t


def pair(app, before, after, *, tmpl=None, judge_after="judge-1", hash_after="d" * 64):
    first = finished_run("r1", {"local/m1": before}, template=tmpl)
    second = finished_run(
        "r2",
        {"local/m1": after},
        finished_at=T0 + DAY,
        template=tmpl,
        judge_model=judge_after,
        dataset_hash=hash_after,
    )
    digest_finished(T0 + DAY)
    return first, second


def test_a_known_drop_raises_one_alert_against_the_previous_run(app):
    rng = random.Random(1)
    before = scores(rng)
    _first, second = pair(app, before, shifted(before, rng, -12))
    (alert,) = Alert.select()
    assert alert.run_id == second.id and alert.against == "previous"
    assert alert.series == "local/m1" and alert.n == TASKS
    assert 9 < alert.drop < 15 and alert.ci_high < 0 and alert.wilcoxon_p < 0.05
    logged = RunLog.get((RunLog.run == second) & (RunLog.event == "regression_alert"))
    assert "dropped" in logged.message


def test_noise_alone_raises_no_alert(app):
    rng = random.Random(2)
    before = scores(rng)
    pair(app, before, shifted(before, rng, 0))
    assert Alert.select().count() == 0


@pytest.mark.parametrize(("drop", "expected"), [(12.0, (18, 20)), (0.0, (0, 0))])
def test_alerts_fire_and_stay_quiet_at_the_expected_rates(app, drop, expected):
    # 20 seeded replications of a pair of runs, each digested as it would be in production.
    rng = random.Random(42)
    fired = 0
    for rep in range(20):
        before = scores(rng)
        start = T0 + dt.timedelta(days=10 * rep)
        finished_run(f"a{rep}", {f"p/m{rep}": before}, finished_at=start)
        after = shifted(before, rng, -drop, noise=8.0)
        finished_run(f"b{rep}", {f"p/m{rep}": after}, finished_at=start + DAY)
        digest_finished(start + DAY)
        fired = Alert.select().count()
    low, high = expected
    assert low <= fired <= high


def test_an_improvement_never_alerts(app):
    rng = random.Random(3)
    before = scores(rng, mean=50)
    pair(app, before, shifted(before, rng, +15))
    assert Alert.select().count() == 0


def test_a_run_with_another_judge_is_not_compared(app):
    rng = random.Random(4)
    before = scores(rng)
    pair(app, before, shifted(before, rng, -20), judge_after="judge-2")
    assert Alert.select().count() == 0


def test_a_run_over_other_tasks_is_not_compared(app):
    rng = random.Random(5)
    before = scores(rng)
    pair(app, before, shifted(before, rng, -20), hash_after="e" * 64)
    assert Alert.select().count() == 0


def test_the_templates_threshold_decides_how_big_a_drop_must_be(app):
    rng = random.Random(6)
    before = scores(rng)
    after = shifted(before, rng, -4, noise=1.0)  # clearly significant, but 4 points
    pair(app, before, after, tmpl=template(threshold=3.0))
    assert Alert.select().count() == 1


def test_a_drop_below_the_default_threshold_stays_quiet(app):
    rng = random.Random(6)
    before = scores(rng)
    pair(app, before, shifted(before, rng, -4, noise=1.0))
    assert Alert.select().count() == 0


def test_a_drop_against_the_baseline_alerts_even_when_the_previous_run_was_as_bad(app):
    rng = random.Random(7)
    base = scores(rng)
    collection = Collection.create(name="bench")
    finished_run("base", {"local/m1": base}, collection=collection)
    digest_finished(T0)
    pin_baseline(collection.id, "base")
    worse = shifted(base, rng, -15)
    finished_run("worse1", {"local/m1": worse}, finished_at=T0 + DAY)
    finished_run("worse2", {"local/m1": shifted(worse, rng, 0, 1)}, finished_at=T0 + 2 * DAY)
    digest_finished(T0 + 2 * DAY)
    # Score alerts: worse1's previous run is the baseline itself: one alert; worse2 only against
    # the baseline (both also get a composite alert against it, test_composite_alerts.py).
    alerts = {(a.run.run_id, a.against) for a in Alert.select() if a.metric == "score"}
    assert alerts == {("worse1", "previous"), ("worse2", "baseline")}


def test_repeats_count_once_per_task(app):
    rng = random.Random(8)
    before = scores(rng, n=12)
    after = shifted(before, rng, -10, noise=1)
    finished_run("r1", {"local/m1": [[s, s] for s in before]}, settings={"repeats": 2})
    finished_run(
        "r2",
        {"local/m1": [[s - 1, s + 1] for s in after]},
        finished_at=T0 + DAY,
        settings={"repeats": 2},
    )
    digest_finished(T0 + DAY)
    (alert,) = Alert.select()
    assert alert.n == 12  # tasks, not answers


def test_digesting_again_changes_nothing(app):
    rng = random.Random(9)
    before = scores(rng)
    pair(app, before, shifted(before, rng, -12))
    assert digest_finished(T0 + 2 * DAY) == []
    assert Alert.select().count() == 1
    assert RunDigest.select().count() == 2


def test_the_webhook_receives_exactly_one_post_per_alert(app):
    rng = random.Random(10)
    before = scores(rng)
    with Receiver() as receiver:
        pair(app, before, shifted(before, rng, -12), tmpl=template(receiver.url))
        assert deliver_due(T0 + DAY) == 1
        assert deliver_due(T0 + 2 * DAY) == 0  # sent: never again
        posts = receiver.wait_for_posts(1)
    assert len(posts) == 1
    body = posts[0]["body"]
    assert body["event"] == "llmbench.regression"
    assert body["runId"] == "r2" and body["model"] == "m1" and body["against"] == "previous"
    assert body["drop"] > 9 and body["ci"][1] < 0 and body["p"] < 0.05
    assert Alert.get().webhook_state == "sent"


def test_the_webhook_body_holds_no_provider_secret(app):
    key = "sk-live-EVILSECRET7f0123456789"
    create_provider(
        {
            "name": "keyed",
            "type": "OPENAI",
            "baseUrl": "http://127.0.0.1:9",
            "headers": [{"key": "Authorization", "value": f"Bearer {key}", "isSecret": True}],
        }
    )
    rng = random.Random(10)
    before = scores(rng)
    with Receiver() as receiver:
        pair(app, before, shifted(before, rng, -12), tmpl=template(receiver.url))
        Alert.update(message=f"m1 dropped; the server said {key}").execute()
        assert deliver_due(T0 + DAY) == 1
        (post,) = receiver.wait_for_posts(1)
    assert "EVILSECR" not in json.dumps(post["body"])
    assert post["body"]["message"] == "m1 dropped; the server said ****"


def test_a_failing_receiver_is_retried_after_a_backoff(app):
    rng = random.Random(11)
    before = scores(rng)
    with Receiver() as receiver:
        receiver.statuses = [500]
        pair(app, before, shifted(before, rng, -12), tmpl=template(receiver.url))
        now = T0 + DAY
        assert deliver_due(now) == 0
        alert = Alert.get()
        assert (
            alert.webhook_state == "pending" and alert.webhook_error == "HTTP 500 from the receiver"
        )
        assert deliver_due(now + dt.timedelta(seconds=RETRY_SECONDS[0] - 1)) == 0  # not yet
        assert deliver_due(now + dt.timedelta(seconds=RETRY_SECONDS[0])) == 1
        assert len(receiver.wait_for_posts(2)) == 2
    assert Alert.get().webhook_state == "sent"


def test_a_receiver_that_never_answers_fails_the_webhook_without_naming_the_url(app):
    rng = random.Random(12)
    before = scores(rng)
    url = "http://127.0.0.1:9/hooks/secret-token-9876"  # the discard port: refused
    pair(app, before, shifted(before, rng, -12), tmpl=template(url))
    now = T0 + DAY
    for _ in range(len(RETRY_SECONDS) + 1):
        deliver_due(now)
        now += dt.timedelta(seconds=max(RETRY_SECONDS))
    alert = Alert.get()
    assert alert.webhook_state == "failed"
    assert alert.webhook_attempts == len(RETRY_SECONDS) + 1
    assert "secret-token" not in alert.webhook_error and "127.0.0.1" not in alert.webhook_error


def test_alerts_are_listed_and_dismissed_through_the_api(app, client):
    rng = random.Random(13)
    before = scores(rng)
    pair(app, before, shifted(before, rng, -12))
    (open_alert,) = client.get("/api/alerts?state=open").get_json()
    assert open_alert["runId"] == "r2" and open_alert["againstRunId"] == "r1"
    dismissed = client.post(f"/api/alerts/{open_alert['id']}/dismiss").get_json()
    assert dismissed["state"] == "dismissed" and dismissed["dismissedAt"]
    assert client.get("/api/alerts?state=open").get_json() == []
    assert len(client.get("/api/alerts?state=dismissed").get_json()) == 1


def test_an_unknown_alert_state_is_a_400(client):
    reply = client.get("/api/alerts?state=closed")
    assert reply.status_code == 400 and reply.get_json()["errors"][0]["field"] == "state"
