"""Peewee models: the whole data model, with the few query expressions that belong to one model
(Item.in_flight). Queries that join models live in the package that needs them."""

import json

from peewee import SQL
from peewee import BlobField
from peewee import BooleanField
from peewee import CharField
from peewee import DateTimeField
from peewee import FloatField
from peewee import ForeignKeyField
from peewee import IntegerField
from peewee import Model
from peewee import TextField

from ..clock import utcnow
from .connection import database

DIFFICULTIES = ("easy", "medium", "hard")

# Item statuses, exactly these five (PRODUCT.md).
NEW = "NEW"
WAITING_FOR_JUDGE = "WAITING_FOR_JUDGE"
COMPLETED = "COMPLETED"
FAILED = "FAILED"
CANT_BE_FINISHED = "CANT_BE_FINISHED"
ITEM_STATUSES = (NEW, WAITING_FOR_JUDGE, COMPLETED, FAILED, CANT_BE_FINISHED)

# Run status (persisted) and phase.
PENDING = "PENDING"
FINISHED = "FINISHED"
BENCHMARKING = "BENCHMARKING"
JUDGING = "JUDGING"

# What the person asked the run to do; survives restarts. Shown state is derived in runs/state.py.
CONTROL_RUNNING = "running"
CONTROL_PAUSED = "paused"
CONTROL_STOPPED = "stopped"
# Waiting for the engine to be free (a scheduled, triggered or "queue it" run).
CONTROL_QUEUED = "queued"


# json.dumps with options builds a new encoder for every value (half the cost of a short one,
# and a recorded answer stores several); one encoder, the same options, the same text.
_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True)
_JSON_TEXT = _ENCODER.encode
# encode() still makes its C encoder anew for every value (two thirds of a short list's cost):
# one made once, the same options, for acyclic_json_text. It keeps no circular-reference
# markers (those a failed value left behind would refuse a later one).
_C_ENCODER = (
    json.encoder.c_make_encoder(
        None,
        _ENCODER.default,
        json.encoder.encode_basestring,
        None,
        _ENCODER.key_separator,
        _ENCODER.item_separator,
        True,
        False,
        True,
    )
    if json.encoder.c_make_encoder is not None
    else None
)


def acyclic_json_text(value):
    """JSONField's text for a value known to hold no cycle (a checked task's lists and
    mappings, made by the task store's cleaners): the same text as db_value, made cheaper."""
    if _C_ENCODER is None or value.__class__ is str:
        return _JSON_TEXT(value)
    return "".join(_C_ENCODER(value, 0))


class JSONField(TextField):
    """JSON stored as text; None stays NULL."""

    def db_value(self, value):
        return None if value is None else _JSON_TEXT(value)

    def python_value(self, value):
        return None if value is None else json.loads(value)


class BaseModel(Model):
    class Meta:
        database = database


class Provider(BaseModel):
    name = CharField(max_length=100, unique=True)
    type = CharField(max_length=10)
    base_url = CharField(max_length=500)
    models_endpoint = CharField(max_length=200)
    inference_endpoint = CharField(max_length=200)
    timeout_seconds = FloatField(default=300.0)
    max_concurrency = IntegerField(default=1)
    created_at = DateTimeField(default=utcnow)
    updated_at = DateTimeField(default=utcnow)


class ProviderHeader(BaseModel):
    provider = ForeignKeyField(Provider, backref="headers", on_delete="CASCADE")
    key = CharField(max_length=100)
    # Plain text when not secret; base64(nonce + AES-GCM ciphertext) when secret (crypto.py).
    value = TextField()
    is_secret = BooleanField(default=False)

    class Meta:
        indexes = ((("provider", "key"), True),)


class Task(BaseModel):
    task_id = CharField(max_length=200, unique=True)
    category = CharField(max_length=100, index=True)
    subcategory = CharField(max_length=100, default="")
    difficulty = CharField(max_length=20, default="medium")
    question = TextField()
    system_prompt = TextField(null=True)
    excellent = TextField(default="")
    good = TextField(default="")
    pass_answer = TextField(default="")
    incorrect_direction = TextField(default="")
    rubric = JSONField(null=True)  # [{"id", "text", "weight", "max_score"}]
    auto_fail = JSONField(null=True)  # ["rule text", ...]
    tags = JSONField(null=True)  # ["tag", ...]
    vars = JSONField(null=True)  # {"name": "value"} for {name} in the question
    # [{type, value, weight, threshold, gate, ...}]: rules that score an answer without a judge
    # (scoring/checks/spec.py reads them).
    checks = JSONField(null=True)
    tools = JSONField(null=True)  # [OpenAI function schema]: the tools offered to the model
    template_version = CharField(max_length=50, null=True)
    created_at = DateTimeField(default=utcnow)
    updated_at = DateTimeField(default=utcnow)


class Collection(BaseModel):
    name = CharField(max_length=200, unique=True)
    description = TextField(default="")
    created_at = DateTimeField(default=utcnow)


class CollectionTask(BaseModel):
    collection = ForeignKeyField(Collection, backref="memberships", on_delete="CASCADE")
    task = ForeignKeyField(Task, backref="memberships", on_delete="CASCADE")

    class Meta:
        indexes = ((("collection", "task"), True),)


class Template(BaseModel):
    """A saved run spec that can be started, triggered from outside or scheduled (cron)."""

    name = CharField(max_length=200, unique=True)
    description = TextField(default="")
    spec = JSONField()  # the run spec in the API's shape (runs/spec.py checks it)
    regression_threshold = FloatField(default=5.0)  # score points
    # Encrypted (crypto.py, AAD template:<id>:webhook): webhook URLs often carry a token.
    webhook_url = TextField(null=True)
    cron = CharField(max_length=100, null=True)
    timezone = CharField(max_length=64, default="UTC")
    schedule_enabled = BooleanField(default=False)
    # The next fire time (UTC). Firing moves it forward in one compare-and-set UPDATE, so a
    # fire time is claimed once, across restarts and processes (schedules/firing.py).
    next_fire_at = DateTimeField(null=True, index=True)
    last_fired_at = DateTimeField(null=True)  # the fire time claimed last
    last_error = TextField(null=True)  # why the last fire could not start a run
    created_at = DateTimeField(default=utcnow)
    updated_at = DateTimeField(default=utcnow)


class Run(BaseModel):
    run_id = CharField(max_length=200, unique=True)
    name = CharField(max_length=200, default="")
    judge_provider = ForeignKeyField(Provider, null=True, on_delete="SET NULL")
    judge_provider_name = CharField(max_length=100)  # kept if the provider is deleted
    judge_model = CharField(max_length=300)
    judge_params = JSONField(null=True)
    status = CharField(max_length=20, default=PENDING, index=True)  # PENDING | FINISHED
    phase = CharField(max_length=20, default=BENCHMARKING)
    control = CharField(max_length=20, default=CONTROL_RUNNING, index=True)
    control_reason = TextField(null=True)  # why it is paused/stopped (crash, budget, person)
    settings = JSONField(null=True)  # max_attempts, max_budget_usd, ... for this run
    dataset_hash = CharField(max_length=64, null=True)
    prompt_hash = CharField(max_length=64, null=True)
    source = CharField(max_length=20, default="web")  # web | api | cli | template
    # Where `llmbench run` writes this run's reports ({outDir, junit, passScore}), so
    # `llmbench resume` writes them too. Set by the CLI only; never from a form or the API.
    outputs = JSONField(null=True)
    # The template it came from, who started it and why (triggeredBy).
    template = ForeignKeyField(Template, null=True, on_delete="SET NULL", backref="runs")
    triggered_by = CharField(max_length=50, null=True)  # manual | scheduled | post-finetune ...
    trigger_note = TextField(null=True)
    queued_at = DateTimeField(null=True)
    created_at = DateTimeField(default=utcnow, index=True)
    started_at = DateTimeField(null=True)
    finished_at = DateTimeField(null=True)
    updated_at = DateTimeField(default=utcnow)
    # Its record (runs/records.py): the llmbench version, and for a CLI run the command line
    # and the config as given, secrets masked.
    tool_version = TextField(null=True)
    command_line = TextField(null=True)
    config_given = TextField(null=True)


class RunTarget(BaseModel):
    run = ForeignKeyField(Run, backref="targets", on_delete="CASCADE")
    provider = ForeignKeyField(Provider, null=True, on_delete="SET NULL")
    provider_name = CharField(max_length=100)
    model = CharField(max_length=300)
    params = JSONField(null=True)  # temperature, top_p, max_tokens, seed, stop
    position = IntegerField(default=0)
    warmup_ms = FloatField(null=True)
    load_ms = FloatField(null=True)
    warmup_error = TextField(null=True)
    # What people read wherever the target is named; the same model may be a target twice
    # with different params (compares parameter profiles), so the label is the key.
    label = CharField(max_length=300, default="")

    @staticmethod
    def default_label(model, params):
        """'model' alone, or 'model · temperature 0.2 · max_tokens 256' for a target's params."""
        parts = [model]
        for name, value in sorted((params or {}).items()):
            if value in (None, "", []):
                continue
            if isinstance(value, list):
                shown = ", ".join(map(str, value))
            elif isinstance(value, int | float) and not isinstance(value, bool):
                # 0.2 stays 0.2, 1.0 reads 1, a seed keeps every digit.
                shown = str(int(value)) if float(value).is_integer() else repr(float(value))
            else:
                shown = str(value)
            parts.append(f"{name} {shown}")
        return " · ".join(parts)

    def save(self, *args, **kwargs):
        """Rows made outside create_run (tests, tools) get the default label."""
        if not self.label:
            self.label = self.default_label(self.model, self.params)
        return super().save(*args, **kwargs)

    class Meta:
        indexes = ((("run", "label"), True),)


class RunCollection(BaseModel):
    run = ForeignKeyField(Run, backref="run_collections", on_delete="CASCADE")
    collection = ForeignKeyField(Collection, null=True, on_delete="SET NULL")
    collection_name = CharField(max_length=200)


class Item(BaseModel):
    # Its index (run_id) begins every other index of the run's items but is kept: SQLite ends it
    # with the rowid, so it alone reads a run's items in id order (the API's item pages, the
    # Evaluate queue's next card, the labels export). Never written by an answer or judgement.
    run = ForeignKeyField(Run, backref="items", on_delete="CASCADE")
    target = ForeignKeyField(RunTarget, backref="items", on_delete="CASCADE")
    task = ForeignKeyField(Task, null=True, on_delete="SET NULL")
    # Snapshot of the task as it was when the run started.
    task_key = CharField(max_length=200)
    category = CharField(max_length=100, default="")
    subcategory = CharField(max_length=100, default="")
    difficulty = CharField(max_length=20, default="")
    question = TextField()
    system_prompt = TextField(null=True)
    excellent = TextField(default="")
    good = TextField(default="")
    pass_answer = TextField(default="")
    incorrect_direction = TextField(default="")
    rubric = JSONField(null=True)
    auto_fail_rules = JSONField(null=True)
    checks = JSONField(null=True)
    tools = JSONField(null=True)
    template_version = CharField(max_length=50, null=True)
    # Repeats (settings.repeats): the K-th answer to the same task and target, with its
    # own seed when K > 1; judge_scores holds every score of settings.judgeRepeats judgements.
    repeat = IntegerField(default=0)
    # Load steps (settings.load): the step this answer belongs to, 0 for the first (or only)
    # one; each step re-asks the same tasks at its own load and keeps its answers apart.
    step = IntegerField(default=0, constraints=[SQL("DEFAULT 0")])  # as m039 added it
    seed = IntegerField(null=True)
    judge_scores = JSONField(null=True)
    # Claiming: no IN_PROGRESS status, these columns instead.
    status = CharField(max_length=20, default=NEW)
    attempts = IntegerField(default=0)
    answer_attempts = IntegerField(default=0)
    first_attempt_at = DateTimeField(null=True)
    last_attempt_at = DateTimeField(null=True)
    next_retry_at = DateTimeField(null=True)  # a failed attempt's backoff: not before then
    # Set while an orchestrator works on the item (its request is out), cleared by every
    # outcome; past it, a crashed holder's claim is claimable again.
    claimed_until = DateTimeField(null=True)
    # Who holds the claim (an orchestrator's lease holder or a `llmbench worker`'s id):
    # an orchestrator taking over a dead one's lease gives back only that holder's claims.
    claimed_by = CharField(max_length=200, null=True)
    # The answer.
    request_json = JSONField(null=True)
    response_raw = TextField(null=True)
    answer = TextField(null=True)
    finish_reason = CharField(max_length=50, null=True)
    # The answer passed the size cap (MAX_ANSWER_CHARS); the rest was not read or kept.
    answer_cut = BooleanField(default=False)
    time_taken_ms = FloatField(null=True)
    ttft_ms = FloatField(null=True)  # sent -> the first token on any channel (streamed)
    # The stream's timing beside it (streamed answers only): sent -> the first answer token and
    # -> the last token; when it was sent (Unix seconds, for a run's throughput and timeline);
    # the events that carried tokens; reasoning tokens apart from the answer's; the gaps between
    # tokens as a packed histogram (app/latency.py; None: one chunk, ITL not measurable); and
    # the time the request waited before the server worked on it, where the server says.
    first_answer_ms = FloatField(null=True)
    last_token_ms = FloatField(null=True)
    sent_ts = FloatField(null=True)
    chunks = IntegerField(null=True)
    reasoning_tokens = IntegerField(null=True)
    itl_hist = BlobField(null=True)
    queue_ms = FloatField(null=True)
    prompt_ms = FloatField(null=True)
    decode_ms = FloatField(null=True)
    load_ms = FloatField(null=True)
    prompt_tokens = IntegerField(null=True)
    tokens_generated = IntegerField(null=True)
    tokens_per_second = FloatField(null=True)
    tps_source = CharField(max_length=30, null=True)  # ollama.eval, llamacpp.timings, ...
    tokens_estimated = BooleanField(default=False)
    cost_usd = FloatField(null=True)
    cost_source = CharField(max_length=30, null=True)  # provider | price_table
    context_hash = CharField(max_length=64, null=True, index=True)
    answered_at = DateTimeField(null=True)
    # The judgement.
    judge_request_json = JSONField(null=True)
    judge_raw = TextField(null=True)
    judge_ms = FloatField(null=True)
    judge_cost_usd = FloatField(null=True)  # the judge's call(s), repair included
    evaluation_score = FloatField(null=True)
    evaluation_reason = TextField(null=True)
    rubric_scores = JSONField(null=True)
    auto_fail = BooleanField(null=True)
    auto_fail_reason = TextField(null=True)  # the rule or check that failed it, in words
    # What the task's checks found ([{type, score, passed, reason, gate}]) and their combined
    # score, kept beside the judge's (evaluation_score is the item's one score).
    check_results = JSONField(null=True)
    check_score = FloatField(null=True)
    tool_calls = JSONField(null=True)  # [{name, arguments}] the answer called
    judged_at = DateTimeField(null=True)
    # Earlier judgements of the item, oldest first, kept when a person re-judges it
    # ({score, reason, rubricScores, autoFail, judgeModel, judgedAt, replacedAt, judgeRaw}).
    judge_history = JSONField(null=True)
    # `llmbench run --reuse` took the answer / the judgement from this earlier item (same
    # context hash; runs/reuse.py). A reused item has no speed figures of its own.
    answer_reused_from = IntegerField(null=True)
    judgement_reused_from = IntegerField(null=True)
    # Failure: which stage failed (answer | judge | warmup) and why.
    error_stage = CharField(max_length=20, null=True)
    error_msg = TextField(null=True)
    created_at = DateTimeField(default=utcnow)
    updated_at = DateTimeField(default=utcnow)

    @classmethod
    def in_flight(cls, now):
        """WHERE an orchestrator holds a live claim on the item (its request is out)."""
        return cls.claimed_until.is_null(False) & (cls.claimed_until > now)

    # Every index here is written by each answer or judgement that changes one of its columns
    # (SQLite maintains an index whose columns an UPDATE sets): keep only those a query needs,
    # and no index that begins another with the same WHERE unless its id order is read
    # (tests/test_indexes.py). The time indexes are partial (below): only the items with the
    # time set are in them.
    class Meta:
        indexes = (
            (("run", "target", "task_key"), False),
            (("run", "evaluation_score"), False),
            (("run", "time_taken_ms"), False),
            (("run", "tokens_per_second"), False),
            # (run, category) then id: the Evaluate queue's category filter in item order.
            (("run", "category"), False),
            # The results table's other sorts, read in index order (results/table.py).
            (("run", "task_key"), False),
            (("run", "category", "task_key"), False),
            (("run", "status"), False),
            (("run", "ttft_ms"), False),
            (("run", "tokens_generated"), False),
            (("run", "cost_usd"), False),
            # The results table's difficulty sort, one difficulty value at a time.
            (("run", "difficulty", "task_key"), False),
            # A model filter with a score range, counted (and sorted by score) by index.
            (("run", "target", "evaluation_score"), False),
        )


# The claims (engine/claims.py) seek their next item in O(log N). Partial indexes hold only
# the items still to be taken, in id order (the rowid ends every SQLite index), so a claim reads
# the first entry instead of walking the run's done items; settled items leave them.
Item.add_index(
    Item.index(Item.run, Item.target, name="item_claim_new", where=SQL("status = 'NEW'"))
)
Item.add_index(
    Item.index(Item.run, name="item_claim_judge", where=SQL("status = 'WAITING_FOR_JUDGE'"))
)
# The live view's latest items (runs/live.latest_items): only items tried at least once.
Item.add_index(
    Item.index(
        Item.run,
        Item.updated_at,
        name="item_run_id_updated_at_tried",
        where=SQL("last_attempt_at IS NOT NULL"),
    )
)
# The backoffs by deadline (next_wake): only items waiting to retry are in it, so an answer
# or judgement (which leaves next_retry_at NULL) writes nothing to it.
Item.add_index(
    Item.index(
        Item.run,
        Item.next_retry_at,
        name="item_next_retry_at",
        where=SQL("next_retry_at IS NOT NULL"),
    )
)
# The latest answers and judgements (runs/progress.py's rates and each target's pace,
# runs/watch.latest_scores, results/system.py's throughput, the Evaluate queue's answered items):
# only the items answered / judged are in them, so an answer or judgement adds one entry and
# takes none out (an index of every item moved it out of the NULLs: a second page per call).
Item.add_index(
    Item.index(
        Item.run, Item.answered_at, name="item_answered_at", where=SQL("answered_at IS NOT NULL")
    )
)
Item.add_index(
    Item.index(
        Item.run,
        Item.target,
        Item.answered_at,
        name="item_target_answered_at",
        where=SQL("answered_at IS NOT NULL"),
    )
)
Item.add_index(
    Item.index(Item.run, Item.judged_at, name="item_judged_at", where=SQL("judged_at IS NOT NULL"))
)
# The A/B pairs of two targets (ratings/pair_queue.py): each answered item of A by task, then B's
# answer to the task sought by (run, target, task), from this index alone (the table's rows of a
# 1M-item run are gigabytes read at random). Only answered items: an answer adds one entry.
Item.add_index(
    Item.index(
        Item.run,
        Item.target,
        Item.task_key,
        Item.answered_at,  # in it, so the join's own condition is read from it too
        name="item_answered_task",
        where=SQL("answered_at IS NOT NULL"),
    )
)
# The claims in flight by deadline (next_wake): only claimed items are in it.
Item.add_index(
    Item.index(
        Item.run,
        Item.claimed_until,
        name="item_claimed_until",
        where=SQL("claimed_until IS NOT NULL"),
    )
)
# What a run's results page works out from every item (averages, the scores' histogram for the
# CI and the breakdowns: results/averages.py item_groups; the answer times, the throughput),
# read from this index alone: narrow entries in key order, not every wide item row (answers,
# reasons) and a sort. Its first columns in item_groups' GROUP BY order, so the groups stream
# out of it. Status and stage first: a count of one kind of failure (retries.py, the report)
# would otherwise read all of a run's entries here, the planner preferring an index that
# covers them to item_run_id_status, which does not (that one stays: its entries end with the
# id, the status sort's order). An answer or a judgement moves the item's entry, as it does
# in several others.
ITEM_FIGURES_COLUMNS = (
    "run_id, status, error_stage, target_id, category, difficulty, tps_source, "
    "evaluation_score, time_taken_ms, ttft_ms, tokens_per_second, cost_usd, prompt_tokens, "
    "tokens_generated, answered_at"
)
Item.add_index(
    Item.index(
        *(getattr(Item, c.removesuffix("_id")) for c in ITEM_FIGURES_COLUMNS.split(", ")),
        name="item_figures",
    )
)


class ItemCount(BaseModel):
    """A run's items counted per (target, status, failed stage), with the sums the live view,
    progress, history and /api/runs show. Kept by triggers on `item` in the same transaction
    that changes an item (ddl.py: SQLite's add to these rows; PostgreSQL's append deltas that
    runs/counts.fold folds in), so a poll reads a few rows instead of counting 100 000 items;
    runs/counts.py reads them and can recount.

    No foreign key on run_id (an INSERT checking one would make every recorded answer keep a
    statement journal, ddl.ITEM_COUNT_WRITES); a deleted run's rows go with a trigger instead."""

    run = IntegerField(column_name="run_id")
    target_id = IntegerField()
    status = CharField(max_length=20)
    stage = CharField(max_length=20, default="")  # the item's error_stage, '' when none
    n = IntegerField(default=0)
    answer_ms = FloatField(default=0.0)  # sum of time_taken_ms
    answer_ms_n = IntegerField(default=0)  # items with a time_taken_ms
    judge_ms = FloatField(default=0.0)
    judge_ms_n = IntegerField(default=0)
    prompt_tokens = IntegerField(default=0)
    tokens_generated = IntegerField(default=0)
    cost_usd = FloatField(default=0.0)
    judge_cost_usd = FloatField(default=0.0)
    score = FloatField(default=0.0)  # sum of evaluation_score
    score_n = IntegerField(default=0)

    class Meta:
        table_name = "item_count"
        indexes = ((("run", "target_id", "status", "stage"), True),)


class ItemCountNow(ItemCount):
    """PostgreSQL only, read only: the view (ddl.PG_ITEM_COUNT_DELTAS) of item_count plus the deltas
    its triggers appended since the last fold (runs/counts.fold), one row per key. Not a
    table, so not in ALL_MODELS."""

    class Meta:
        table_name = "item_count_now"
        primary_key = False  # a view of sums: no id


class RunLog(BaseModel):
    """Append-only run log."""

    # No (run) index of its own beside (run, id): every answer and judgement appends a line,
    # and each index is one more page written per call.
    run = ForeignKeyField(Run, backref="logs", on_delete="CASCADE", index=False)
    created_at = DateTimeField(default=utcnow)
    level = CharField(max_length=10, default="INFO")
    event = CharField(max_length=40, default="INFO")
    message = TextField()
    data = JSONField(null=True)

    class Meta:
        indexes = ((("run", "id"), False),)


ORCHESTRATOR_LEASE = "orchestrator"  # the name of the one orchestrator lease row


class Lease(BaseModel):
    """One row per lease name: who runs the orchestrator for this database, until when."""

    name = CharField(max_length=50, unique=True)
    holder = CharField(max_length=200)
    acquired_at = DateTimeField(default=utcnow)
    heartbeat_at = DateTimeField(default=utcnow)
    expires_at = DateTimeField()


class Outage(BaseModel):
    """A model server a run cannot reach now (engine/breaker.py): its targets wait.

    One row per (run, provider) while the breaker is open; deleted when the server answers
    again or the person continues the run. Kept in the database so the live view shows it and
    a restart keeps counting from when the outage began.
    """

    run = ForeignKeyField(Run, backref="outages", on_delete="CASCADE")
    provider_id = IntegerField()  # no foreign key: a deleted provider ends its targets anyway
    provider_name = CharField(max_length=100)
    error = CharField(max_length=100)  # short: connection refused | host name not found | ...
    message = TextField(default="")  # the full error, secrets masked
    since = DateTimeField()
    last_try_at = DateTimeField()
    next_try_at = DateTimeField()
    probes = IntegerField(default=1)  # failed tries since `since` (the probe backoff)

    class Meta:
        indexes = ((("run", "provider_id"), True),)


class Price(BaseModel):
    """Price table: USD per 1M tokens for a provider+model."""

    provider_name = CharField(max_length=100)
    model = CharField(max_length=300)
    input_per_1m = FloatField(default=0.0)
    output_per_1m = FloatField(default=0.0)
    updated_at = DateTimeField(default=utcnow)

    class Meta:
        indexes = ((("provider_name", "model"), True),)


class Baseline(BaseModel):
    """The run pinned as a collection's baseline (current vs previous vs baseline)."""

    collection = ForeignKeyField(Collection, unique=True, on_delete="CASCADE")
    run = ForeignKeyField(Run, on_delete="CASCADE")
    pinned_at = DateTimeField(default=utcnow)


class RunDigest(BaseModel):
    """What a finished run is compared by, stored once when it finishes (schedules/digest.py)."""

    run = ForeignKeyField(Run, unique=True, on_delete="CASCADE")
    finished_at = DateTimeField(index=True)
    judge_key = CharField(max_length=64)  # judge provider, model, params and prompt
    judge_label = CharField(max_length=400)
    tasks_key = CharField(max_length=64, null=True)  # the run's dataset hash
    task_count = IntegerField(default=0)
    repeats = IntegerField(default=1)
    system_peaks = JSONField(null=True)  # sysmetrics/series.py peaks()
    created_at = DateTimeField(default=utcnow)


class RunAggregate(BaseModel):
    """Per finished run, target and category ("" = all tasks): the numbers Trends draws."""

    run = ForeignKeyField(Run, on_delete="CASCADE")
    target = ForeignKeyField(RunTarget, on_delete="CASCADE")
    series = CharField(max_length=400)  # provider/model: one line per series on Trends
    provider_name = CharField(max_length=100)
    model = CharField(max_length=300)
    category = CharField(max_length=100, default="")
    finished_at = DateTimeField()
    judge_key = CharField(max_length=64)
    judge_label = CharField(max_length=400)
    tasks_key = CharField(max_length=64, null=True)
    items = IntegerField(default=0)
    n = IntegerField(default=0)  # scored answers
    tasks = IntegerField(default=0)  # scored tasks (the bootstrap's clusters)
    failed = IntegerField(default=0)
    score = FloatField(null=True)
    ci_low = FloatField(null=True)
    ci_high = FloatField(null=True)
    tokens_per_second = FloatField(null=True)
    ttft_p50_ms = FloatField(null=True)
    time_p50_ms = FloatField(null=True)
    cost_usd = FloatField(null=True)

    class Meta:
        indexes = ((("category", "finished_at"), False), (("run", "category"), False))


class RunSpeed(BaseModel):
    """A run's speed figures (results/speed.run_speed) as last worked out, with the stamp of the
    items they were worked out from: read back while the stamp holds, so a finished run's speed
    page reads one row instead of every item, in any process. Derived: dropping a row costs one
    computation, nothing else."""

    run = ForeignKeyField(Run, unique=True, on_delete="CASCADE")
    # results/speed._stamp: a hash of the run's latest item change and its kept item counts.
    stamp = CharField(max_length=64)
    figures = TextField()  # run_speed's JSON, keys in the order it gives them
    computed_at = DateTimeField(default=utcnow)


class RunFigures(BaseModel):
    """Figures the results page works out from every item of a run (the averages with their
    CIs, the category and difficulty breakdowns, the answer times of the composite, the
    throughput), one row per run and kind (`name`), each as last worked out with the stamp of
    what it came from (results/kept.py): read back while the stamp holds, so a finished run's
    page reads a few rows instead of every item, in any process. Derived: dropping a row costs
    one computation, nothing else."""

    # No index of its own: (run, name) below serves a run's rows.
    run = ForeignKeyField(Run, on_delete="CASCADE", index=False)
    name = CharField(max_length=100)
    # results/kept.stamp: a hash of the code, the run's settings and targets, its latest item
    # change and its kept item counts.
    stamp = CharField(max_length=64)
    figures = TextField()  # the figures as JSON
    computed_at = DateTimeField(default=utcnow)

    class Meta:
        indexes = ((("run", "name"), True),)


ALERT_OPEN = "open"
ALERT_DISMISSED = "dismissed"


class Alert(BaseModel):
    """A statistically backed regression of one target against the previous run or baseline."""

    run = ForeignKeyField(Run, on_delete="CASCADE", backref="alerts")
    template = ForeignKeyField(Template, null=True, on_delete="SET NULL")
    series = CharField(max_length=400)
    provider_name = CharField(max_length=100)
    model = CharField(max_length=300)
    against = CharField(max_length=20)  # previous | baseline
    against_run = ForeignKeyField(Run, null=True, on_delete="SET NULL", backref="alerts_against")
    n = IntegerField()
    mean_diff = FloatField()
    drop = FloatField()
    # "score": a paired drop (CI, tests); "composite": the change alone, no CI (both None).
    metric = CharField(max_length=20, default="score")
    ci_low = FloatField(null=True)
    ci_high = FloatField(null=True)
    wilcoxon_p = FloatField(null=True)
    sign_p = FloatField(null=True)
    threshold = FloatField()
    message = TextField()
    state = CharField(max_length=20, default=ALERT_OPEN, index=True)
    created_at = DateTimeField(default=utcnow)
    dismissed_at = DateTimeField(null=True)
    # The webhook POST: pending -> sent | failed, retried with backoff (schedules/webhooks.py).
    webhook_state = CharField(max_length=20, null=True)
    webhook_attempts = IntegerField(default=0)
    webhook_next_at = DateTimeField(null=True)
    webhook_claimed_until = DateTimeField(null=True)
    webhook_error = TextField(null=True)
    webhook_sent_at = DateTimeField(null=True)

    class Meta:
        indexes = ((("run", "series", "against", "metric"), True),)


class SampleChunk(BaseModel):
    """System metrics of a run: up to sysmetrics/store.py CHUNK compact rows per row."""

    run = ForeignKeyField(Run, on_delete="CASCADE")
    seq = IntegerField()
    t_first = FloatField()
    t_last = FloatField()
    count = IntegerField(default=0)
    rows = TextField()  # a JSON array of sysmetrics/series.py rows

    class Meta:
        indexes = ((("run", "seq"), True),)


# Pairwise verdicts: which side won, as shown (left/right), or a tie.
LEFT = "LEFT"
RIGHT = "RIGHT"
TIE = "TIE"
WINNERS = (LEFT, RIGHT, TIE)
HUMAN = "human"  # a vote's or rating's source when a person gave it
JUDGE = "judge"


class Rating(BaseModel):
    """A person's Likert 1-5 on one item, with tags and notes (one row per item and rater)."""

    # Indexed with the rater below (one rating per item and person: m042).
    item = ForeignKeyField(Item, index=False, backref="ratings", on_delete="CASCADE")
    # The item's run, kept here so a run's progress ("37 of 240 rated") is one index count.
    run = ForeignKeyField(Run, backref="ratings", on_delete="CASCADE")
    rating = IntegerField(null=True)  # 1..5; None while only tags or notes are given
    tags = JSONField(null=True)  # ["tag", ...], also one RatingTag row each (filter, autocomplete)
    notes = TextField(default="")
    created_at = DateTimeField(default=utcnow)
    updated_at = DateTimeField(default=utcnow)
    # Who rated: "human" (no accounts) or "human:<account name>" (m042, added by a raw ALTER).
    rater = CharField(max_length=420, default=HUMAN, constraints=[SQL("DEFAULT 'human'")])

    class Meta:
        # "Not rated yet" probes a rating per item, a run's progress counts its ratings: both
        # answered from an index alone.
        indexes = (
            (("item", "rating"), False),
            (("run", "rating"), False),
            (("item", "rater"), True),
        )


class RatingTag(BaseModel):
    """One tag of a rating: the Evaluate page filters and autocompletes from these rows."""

    rating = ForeignKeyField(Rating, backref="tag_rows", on_delete="CASCADE")
    item = ForeignKeyField(Item, on_delete="CASCADE")
    tag = CharField(max_length=100)

    class Meta:
        indexes = ((("rating", "tag"), True), (("tag", "item"), False))


class JudgeJob(BaseModel):
    """Judge calls beside a run's items: pairwise comparisons or a reference check.

    The calls belong to `run`: they are claimed, retried, paused, stopped and paid for as the
    run's own work (engine/calls.py), so a job on a finished run reopens it.
    """

    run = ForeignKeyField(Run, backref="judge_jobs", on_delete="CASCADE")
    kind = CharField(max_length=20)  # pairwise | reference
    judge_provider = ForeignKeyField(Provider, null=True, on_delete="SET NULL")
    judge_provider_name = CharField(max_length=100)
    judge_model = CharField(max_length=300)
    judge_params = JSONField(null=True)
    # Pairwise: the two targets compared (target_a of `run`, target_b of the same or another run).
    target_a = ForeignKeyField(RunTarget, null=True, on_delete="CASCADE", backref="jobs_as_a")
    target_b = ForeignKeyField(RunTarget, null=True, on_delete="CASCADE", backref="jobs_as_b")
    created_at = DateTimeField(default=utcnow)


class JudgeCall(BaseModel):
    """One judge call of a job, claimable like an item (attempts, backoff, claimed_until)."""

    job = ForeignKeyField(JudgeJob, backref="calls", on_delete="CASCADE")
    run = ForeignKeyField(Run, on_delete="CASCADE")  # the job's run: the claim checks its control
    status = CharField(max_length=20, default=NEW)  # NEW -> COMPLETED | FAILED
    attempts = IntegerField(default=0)
    first_attempt_at = DateTimeField(null=True)
    last_attempt_at = DateTimeField(null=True)
    next_retry_at = DateTimeField(null=True)
    claimed_until = DateTimeField(null=True)
    claimed_by = CharField(max_length=200, null=True)  # as Item.claimed_by
    # Reference check: the task's snapshot (an item of it) and which reference is scored.
    # Pairwise: `item` is shown first (A, left) and `other_item` second (B, right).
    item = ForeignKeyField(Item, on_delete="CASCADE", backref="judge_calls")
    other_item = ForeignKeyField(Item, null=True, on_delete="CASCADE", backref="judge_calls_b")
    level = CharField(max_length=20, null=True)  # excellent | good | pass
    verdict = CharField(max_length=10, null=True)  # LEFT | RIGHT | TIE, as the judge saw them
    score = FloatField(null=True)
    reason = TextField(null=True)
    request_json = JSONField(null=True)
    raw = TextField(null=True)
    ms = FloatField(null=True)
    cost_usd = FloatField(null=True)
    error_msg = TextField(null=True)
    created_at = DateTimeField(default=utcnow)
    updated_at = DateTimeField(default=utcnow)

    class Meta:
        indexes = ((("run", "status", "job", "next_retry_at"), False), (("job", "status"), False))


class Vote(BaseModel):
    """A pairwise verdict on two items answering the same task, by a person or a judge."""

    left_item = ForeignKeyField(Item, on_delete="CASCADE", backref="votes_left")
    right_item = ForeignKeyField(Item, on_delete="CASCADE", backref="votes_right")
    # The pair whatever the sides: one vote per pair and voter (a double key press stores one).
    item_low = IntegerField()
    item_high = IntegerField()
    left_target = ForeignKeyField(RunTarget, on_delete="CASCADE", backref="votes_left")
    right_target = ForeignKeyField(RunTarget, on_delete="CASCADE", backref="votes_right")
    task_key = CharField(max_length=200)
    winner = CharField(max_length=10)  # LEFT | RIGHT | TIE
    winner_target = ForeignKeyField(RunTarget, null=True, on_delete="CASCADE", backref="wins")
    source = CharField(max_length=10)  # human | judge
    voter = CharField(max_length=420)  # "human", or "judge:<provider>/<model>"
    inconsistent = BooleanField(default=False)  # a judge's two orders disagreed: counted a tie
    job = ForeignKeyField(JudgeJob, null=True, on_delete="SET NULL")
    reason = TextField(null=True)
    created_at = DateTimeField(default=utcnow)

    class Meta:
        indexes = (
            (("item_low", "item_high", "voter"), True),
            # The leaderboard counts votes per (left, right, winner): answered from this index.
            (("left_target", "right_target", "source", "winner"), False),
            (("right_target", "source"), False),
        )


# An account's role, least to most (PRODUCT: Account): each can do all the ones before it can.
ROLES = ("viewer", "rater", "runner", "admin")


class Account(BaseModel):
    """A person who signs in: a unique name, a role and a password hash (app/accounts)."""

    name = CharField(max_length=100, unique=True)
    role = CharField(max_length=10)
    # "scrypt$n$r$p$salt$hash" (accounts/passwords.py); "!" for an account that cannot sign in
    # with a password (one a company proxy created).
    password_hash = CharField(max_length=300)
    # Each session carries the version it began under: bumped on logout and password change,
    # it ends every session made before.
    session_version = IntegerField(default=1)
    created_at = DateTimeField(default=utcnow)
    updated_at = DateTimeField(default=utcnow)


class ApiToken(BaseModel):
    """A token for machines: a name, a role and the sha256 of the token (shown once)."""

    name = CharField(max_length=100, unique=True)
    role = CharField(max_length=10)
    token_hash = CharField(max_length=64, unique=True)
    created_at = DateTimeField(default=utcnow)
    last_used_at = DateTimeField(null=True)


class AuditEntry(BaseModel):
    """Who did what to what: started, paused, stopped, deleted or changed (never a secret's
    value). `actor` is "account:<name>", "token:<name>", "cli" or "local"."""

    at = DateTimeField(default=utcnow, index=True)
    actor = CharField(max_length=200)
    action = CharField(max_length=50)
    subject = CharField(max_length=300)
    details = JSONField(null=True)


class RatingHistory(BaseModel):
    """A rating as it was before a change or a removal: who changed it, when, the old value.
    Plain ids, no foreign key to the rating: the history outlives a cleared rating."""

    rating_id = IntegerField()
    item = ForeignKeyField(Item, on_delete="CASCADE")
    rater = CharField(max_length=420)  # whose rating it is
    changed_by = CharField(max_length=420)  # who changed it (an import, a person)
    changed_at = DateTimeField(default=utcnow)
    action = CharField(max_length=10)  # change | clear
    old_rating = IntegerField(null=True)
    old_tags = JSONField(null=True)
    old_notes = TextField(default="")


class VoteHistory(BaseModel):
    """A vote as it was before a change or an undo (who, when, the old winner)."""

    vote_id = IntegerField()
    item_low = IntegerField()
    item_high = IntegerField()
    voter = CharField(max_length=420)
    changed_by = CharField(max_length=420)
    changed_at = DateTimeField(default=utcnow)
    action = CharField(max_length=10)  # change | undo
    old_winner = CharField(max_length=10)
    old_left_item = IntegerField()
    old_right_item = IntegerField()

    class Meta:
        indexes = ((("voter", "changed_at"), False),)


class PairToken(BaseModel):
    """A pair the A/B page showed to one person: a vote must carry its token, so a vote is for
    a pair that person saw, and a second vote with it answers with the first (a double key
    press)."""

    token = CharField(max_length=64, unique=True)
    voter = CharField(max_length=420)
    left_item = ForeignKeyField(Item, on_delete="CASCADE", backref="+")
    right_item = ForeignKeyField(Item, on_delete="CASCADE", backref="+")
    shown_at = DateTimeField(default=utcnow)
    vote = ForeignKeyField(Vote, null=True, on_delete="SET NULL", backref="+")

    class Meta:
        indexes = ((("voter", "left_item", "right_item"), False),)


class LabelQueue(BaseModel):
    """One person's queue order: the number that shuffles their Evaluate and A/B queues, kept
    so the order stays the same from card to card and visit to visit."""

    person = CharField(max_length=420, unique=True)
    seed = IntegerField()
    created_at = DateTimeField(default=utcnow)


class PendingItems(BaseModel):
    """The items a run has still to make (runs/creation.py): a big run starts on its first
    tasks and the engine makes the rest as it claims them, so the first call does not wait for
    every item. `tasks` is the run's task pks in its order (kept: a collection may change
    before a crashed run is continued); the cursor is the target (by position) and the index
    in `tasks` of the next task to make items for. Written in the same transaction as each
    batch of items, so a crash leaves a run that goes on where it stopped, each item once;
    deleted when the last item is made. Readers count `remaining` as NEW (runs/counts.py)."""

    run = ForeignKeyField(Run, unique=True, on_delete="CASCADE")
    tasks = JSONField()
    target = IntegerField(default=0)
    next_task = IntegerField(default=0)
    remaining = IntegerField()  # items still to make, over every target
    per_target = IntegerField()  # items each target gets (tasks x repeats)
    created_at = DateTimeField(default=utcnow)


ALL_MODELS = [
    Provider,
    ProviderHeader,
    Task,
    Collection,
    CollectionTask,
    Run,
    RunTarget,
    RunCollection,
    Item,
    ItemCount,
    RunLog,
    Lease,
    Price,
    Outage,
    Template,
    Baseline,
    RunDigest,
    RunAggregate,
    RunSpeed,
    Alert,
    SampleChunk,
    Rating,
    RatingTag,
    JudgeJob,
    JudgeCall,
    Vote,
    Account,
    ApiToken,
    AuditEntry,
    RatingHistory,
    VoteHistory,
    PairToken,
    LabelQueue,
    RunFigures,
    PendingItems,
]
