"""Regression alerts, backed by paired statistics on the tasks two runs share.

A finished run is compared, per series (provider/model), with the previous comparable run (same
judge key and task set, finished before it) and with the baseline of each of its collections
(same judge key; the tasks both have with the same question). Each task counts once: its score
is the mean over its repeats. regression.paired_drop decides; an alert is stored once per run,
series and comparison, and queued for the template's webhook.

The composite score is checked against the baselines too: it has no CI (a mean, a median time
and a share), so its alert is its drop alone, at least the template's threshold (the same score
points as the score alert's; the composite is 0-100 as well), and says so. It is stored with
metric "composite" and no interval.
"""

from peewee import SQL
from peewee import fn

from ..clock import isoformat
from ..clock import utcnow
from ..db.connection import built_once
from ..db.connection import database
from ..db.models import ALERT_DISMISSED
from ..db.models import ALERT_OPEN
from ..db.models import COMPLETED
from ..db.models import Alert
from ..db.models import Baseline
from ..db.models import Item
from ..db.models import Run
from ..db.models import RunAggregate
from ..db.models import RunCollection
from ..db.models import RunDigest
from ..errors import NotFound
from ..errors import ValidationError
from ..results.composite import DEFAULT_SETTINGS
from ..runlog import log_event
from .baselines import metrics_by_run
from .regression import THRESHOLD_POINTS
from .regression import paired_drop

STATES = (ALERT_OPEN, ALERT_DISMISSED)
SCORE = "score"  # an alert's metric: the mean score, a paired drop with its CI
COMPOSITE = "composite"  # the composite score: the change alone


def task_means(run_pk, target_pk):
    """{(task key, question): mean score over its repeats} of one target in one run."""
    rows = (
        Item.select(Item.task_key, Item.question, fn.AVG(Item.evaluation_score))
        .where(
            (Item.run == run_pk)
            & (Item.target == target_pk)
            & (Item.status == COMPLETED)
            & Item.evaluation_score.is_null(False)
        )
        .group_by(Item.task_key, Item.question)
        .tuples()
    )
    return {(key, question): score for key, question, score in rows}


def shared_pairs(before, after):
    """(before, after) score pairs over the tasks both have, asked the same question."""
    return [(before[key], after[key]) for key in sorted(before) if key in after]


def previous_comparable(digest, series):
    """The series' aggregate in the latest comparable run that finished before `digest`'s."""
    return (
        RunAggregate.select()
        .where(
            (RunAggregate.series == series)
            & (RunAggregate.category == "")
            & (RunAggregate.judge_key == digest.judge_key)
            & (RunAggregate.tasks_key == digest.tasks_key)
            & (RunAggregate.run != digest.run_id)
            & (
                (RunAggregate.finished_at < digest.finished_at)
                | (
                    (RunAggregate.finished_at == digest.finished_at)
                    & (RunAggregate.run < digest.run_id)
                )
            )
        )
        .order_by(RunAggregate.finished_at.desc(), RunAggregate.run.desc())
        .first()
    )


def baseline_aggregates(run, digest, series):
    """The series' aggregates in the baselines of the run's collections (same judge key)."""
    collections = RunCollection.select(RunCollection.collection).where(RunCollection.run == run)
    pinned = Baseline.select(Baseline.run).where(
        Baseline.collection.in_(collections) & (Baseline.run != run.id)
    )
    return list(
        RunAggregate.select()
        .where(
            RunAggregate.run.in_(pinned)
            & (RunAggregate.series == series)
            & (RunAggregate.category == "")
            & (RunAggregate.judge_key == digest.judge_key)
        )
        .order_by(RunAggregate.run)
    )


def evaluate_run(run, digest, overall, now=None, composite_settings=DEFAULT_SETTINGS):
    """Compare each series of a just-digested run with its previous comparable run and its
    baselines; store an Alert for each significant drop, and for each composite score drop
    against a baseline. Returns the new alerts."""
    now = now or utcnow()
    template = run.template
    threshold = template.regression_threshold if template else THRESHOLD_POINTS
    created = []
    baselines = {row["series"]: baseline_aggregates(run, digest, row["series"]) for row in overall}
    for row in overall:
        after = None
        against = []
        previous = previous_comparable(digest, row["series"])
        if previous is not None:
            against.append(("previous", previous))
        for base in baselines[row["series"]]:
            if previous is None or base.run_id != previous.run_id:
                against.append(("baseline", base))
        for kind, other in against:
            if after is None:
                after = task_means(run.id, row["target_id"])
            pairs = shared_pairs(task_means(other.run_id, other.target_id), after)
            result = paired_drop(pairs, threshold=threshold)
            if result["alert"]:
                alert = _store(run, template, row, kind, other.run_id, result, threshold, now)
                if alert is not None:
                    created.append(alert)
    created += composite_alerts(
        run, template, overall, baselines, threshold, composite_settings, now
    )
    return created


def composite_drop(run_pk, base_run_pk, series, composite_settings=DEFAULT_SETTINGS, metrics=None):
    """(baseline composite, current composite) of one series, as the collection summary shows
    them (from the stored aggregates); None where either cannot be computed."""
    metrics = metrics or metrics_by_run({run_pk, base_run_pk}, composite_settings)
    now = metrics[run_pk]["series"].get(series, {}).get("composite")
    before = metrics[base_run_pk]["series"].get(series, {}).get("composite")
    return None if now is None or before is None else (before, now)


def composite_alerts(run, template, overall, baselines, threshold, composite_settings, now):
    """An Alert for each series whose composite score fell by at least `threshold` points
    against a baseline of the run (the change alone: the composite has no CI)."""
    pks = {base.run_id for bases in baselines.values() for base in bases}
    if not pks:
        return []
    metrics = metrics_by_run(pks | {run.id}, composite_settings)
    created = []
    for row in overall:
        for base in baselines[row["series"]]:
            found = composite_drop(run.id, base.run_id, row["series"], metrics=metrics)
            if found is None or found[0] - found[1] < threshold:
                continue
            alert = _store_composite(run, template, row, base.run_id, found, threshold, now)
            if alert is not None:
                created.append(alert)
    return created


def _store_composite(run, template, row, base_run_pk, found, threshold, now):
    before, after = found
    other = Run.get_by_id(base_run_pk)
    change = after - before
    message = (
        f"{row['series']} composite score dropped {-change:.1f} points against the baseline run "
        f"{other.run_id} ({before:.1f} -> {after:.1f}; the composite has no CI, so this is the "
        f"change alone; threshold {threshold:g} points)"
    )
    result = {
        "n": row["n"] or 0,
        "meanDiff": change,
        "drop": -change,
        "ciLow": None,  # the composite has no interval
        "ciHigh": None,
        "wilcoxonP": None,
        "signP": None,
    }
    return _insert(
        run, template, row, "baseline", other, result, threshold, message, now, COMPOSITE
    )


def _store(run, template, row, kind, other_run_pk, result, threshold, now):
    other = Run.get_by_id(other_run_pk)
    p = result["wilcoxonP"]
    message = (
        f"{row['series']} dropped {result['drop']:.1f} points against the {kind} run "
        f"{other.run_id} on {result['n']} shared tasks (95 % CI of the change "
        f"[{result['ciLow']:.1f}, {result['ciHigh']:.1f}], Wilcoxon p = "
        f"{'–' if p is None else f'{p:.2g}'}, sign test p = {result['signP']:.2g}; "
        f"threshold {threshold:g} points)"
    )
    return _insert(run, template, row, kind, other, result, threshold, message, now)


def _insert(run, template, row, kind, other, result, threshold, message, now, metric=SCORE):
    webhook = "pending" if template is not None and template.webhook_url else None
    inserted = (
        Alert.insert(
            run=run.id,
            template=template.id if template else None,
            series=row["series"],
            provider_name=row["provider_name"],
            model=row["model"],
            against=kind,
            metric=metric,
            against_run=other.id,
            n=result["n"],
            mean_diff=result["meanDiff"],
            drop=result["drop"],
            ci_low=result["ciLow"],
            ci_high=result["ciHigh"],
            wilcoxon_p=result["wilcoxonP"],
            sign_p=result["signP"],
            threshold=threshold,
            message=message,
            created_at=now,
            webhook_state=webhook,
            webhook_next_at=now if webhook else None,
        )
        .on_conflict_ignore()
        .execute()
    )
    if not inserted:
        return None
    log_event(run, "regression_alert", f"Regression alert: {message}", level="WARNING", now=now)
    return Alert.get(
        (Alert.run == run.id)
        & (Alert.series == row["series"])
        & (Alert.against == kind)
        & (Alert.metric == metric)
    )


def any_open_alerts(run=None):
    """Whether any alert is open (of `run`, a Run, or of any run): one seek, its SQL built
    once. Most pages show no alert, and the banner's full read (the alerts with their runs'
    columns) was written anew by peewee on every page."""
    if run is None:
        sql = built_once("open alert", lambda: Alert.select(SQL("1")).where(Alert.state == ""))
        values = (ALERT_OPEN,)
    else:
        sql = built_once(
            "open alert of a run",
            lambda: Alert.select(SQL("1")).where((Alert.state == "") & (Alert.run == 0)),
        )
        values = (ALERT_OPEN, getattr(run, "id", run))
    return database.execute_sql(f"{sql} LIMIT 1", values).fetchone() is not None


def list_alerts(state=None, run=None):
    """Alerts newest first, optionally only open or dismissed ones, or one run's."""
    query = Alert.select(Alert, Run).join(Run, on=(Alert.run == Run.id))
    if state not in (None, ""):
        if state not in STATES:
            raise ValidationError.field("state", "use open or dismissed")
        query = query.where(Alert.state == state)
    if run is not None:
        query = query.where(Alert.run == run)
    return list(query.order_by(Alert.created_at.desc(), Alert.id.desc()))


def dismiss_alert(alert_id, now=None):
    """Dismiss an alert (it stays listed under state=dismissed); returns it."""
    alert = Alert.get_or_none(Alert.id == alert_id)
    if alert is None:
        raise NotFound(f"alert {alert_id} not found")
    if alert.state != ALERT_DISMISSED:
        Alert.update(state=ALERT_DISMISSED, dismissed_at=now or utcnow()).where(
            Alert.id == alert.id
        ).execute()
    return Alert.get_by_id(alert.id)


def alert_to_dict(alert):
    """An alert as JSON (no webhook URL: only whether and how it was delivered)."""
    against = Run.get_or_none(Run.id == alert.against_run_id) if alert.against_run_id else None
    return {
        "metric": alert.metric,
        "id": alert.id,
        "runId": alert.run.run_id,
        "templateId": alert.template_id,
        "series": alert.series,
        "providerName": alert.provider_name,
        "model": alert.model,
        "against": alert.against,
        "againstRunId": against.run_id if against else None,
        "n": alert.n,
        "meanDiff": alert.mean_diff,
        "drop": alert.drop,
        "ciLow": alert.ci_low,
        "ciHigh": alert.ci_high,
        "wilcoxonP": alert.wilcoxon_p,
        "signP": alert.sign_p,
        "threshold": alert.threshold,
        "message": alert.message,
        "state": alert.state,
        "createdAt": isoformat(alert.created_at),
        "dismissedAt": isoformat(alert.dismissed_at),
        "webhook": (
            {
                "state": alert.webhook_state,
                "attempts": alert.webhook_attempts,
                "sentAt": isoformat(alert.webhook_sent_at),
                "error": alert.webhook_error,
            }
            if alert.webhook_state
            else None
        ),
    }


def digest_of(run):
    """The run's digest, or None before it is digested."""
    return RunDigest.get_or_none(RunDigest.run == run)
