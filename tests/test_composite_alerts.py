"""A composite score drop against the baseline raises an alert like the score-drop alert: at
least the template's threshold in points, the change alone (the composite has no CI)."""

import datetime as dt

from app.db.models import Alert
from app.db.models import Collection
from app.results.composite import CompositeSettings
from app.schedules.alerts import alert_to_dict
from app.schedules.baselines import pin_baseline
from app.schedules.digest import digest_finished
from app.schedules.webhooks import payload
from tests.over_time import T0
from tests.over_time import finished_run
from tests.test_alerts import template

DAY = dt.timedelta(days=1)
SCORES = [70.0] * 30  # every answer takes 1 s: composite 0.7 × 70 + 15 + 15 = 79.0


def _baseline_then(settings_after, tmpl=None, scores_after=SCORES, composite_settings=None):
    """A pinned baseline, then a run over the same tasks with the same judge."""
    collection = Collection.create(name="bench")
    finished_run("base", {"local/m1": SCORES}, collection=collection, template=tmpl)
    digest_finished(T0)
    pin_baseline(collection.id, "base")
    finished_run(
        "later",
        {"local/m1": scores_after},
        finished_at=T0 + DAY,
        template=tmpl,
        settings=settings_after,
    )
    extra = {"composite_settings": composite_settings} if composite_settings else {}
    digest_finished(T0 + DAY, **extra)
    return [a for a in Alert.select() if a.metric == "composite"]


def test_composite_drop_raises_alert(app):
    # Same scores, but a latency target no answer meets: on-target 0 of 15, composite 64.0.
    (alert,) = _baseline_then({"latencyTargetMs": 500})
    assert alert.run.run_id == "later" and alert.against == "baseline"
    assert alert.metric == "composite"
    assert alert.ci_low is None and alert.ci_high is None
    assert alert.series == "local/m1" and alert.drop == 15.0
    assert alert.message == (
        "local/m1 composite score dropped 15.0 points against the baseline run base "
        "(79.0 -> 64.0; the composite has no CI, so this is the change alone; threshold 5 points)"
    )


def test_composite_drop_alone_raises_no_score_alert(app):
    _baseline_then({"latencyTargetMs": 500})
    assert Alert.select().count() == 1


def test_composite_drop_under_the_templates_threshold_stays_quiet(app):
    assert _baseline_then({"latencyTargetMs": 500}, tmpl=template(threshold=20.0)) == []


def test_composite_drop_uses_the_templates_threshold(app):
    (alert,) = _baseline_then({"latencyTargetMs": 500}, tmpl=template(threshold=15.0))
    assert alert.threshold == 15.0 and alert.template.name == "nightly"


def test_composite_small_drop_raises_no_alert(app):
    # 70 -> 65 on every task: the composite falls 3.5 points, under the default 5.
    assert _baseline_then(None, scores_after=[65.0] * 30) == []


def test_composite_alert_follows_the_configured_weights(app):
    # Quality weight 0.2: on-target is worth 40 points, all lost to the latency target.
    settings = CompositeSettings(quality_weight=0.2)
    (alert,) = _baseline_then({"latencyTargetMs": 500}, composite_settings=settings)
    assert alert.drop == 40.0


def test_composite_alert_says_its_metric_in_the_api_and_the_webhook(app):
    (alert,) = _baseline_then({"latencyTargetMs": 500})
    assert alert_to_dict(alert)["metric"] == "composite"
    body = payload(alert)
    assert body["metric"] == "composite" and body["against"] == "baseline"
    assert body["ci"] is None and body["p"] is None  # the composite has no interval


def test_score_alert_says_its_metric(app):
    _baseline_then(None, scores_after=[50.0] * 30)
    score = Alert.get(Alert.against == "previous")  # the baseline is the previous run too
    assert alert_to_dict(score)["metric"] == "score"
