"""Named, ordered, add-only schema migrations, recorded in `_migrations` by name.

A fresh database and an old one take the same path: m001 creates the frozen first schema
(baseline.py), and every later migration brings it one step closer to models.py and ddl.py.
tests/test_schema.py checks that the path ends where models.py says, and that a database of
the first schema ends the same; docs/schema.sql shows where it ends.

Every migration is idempotent (IF NOT EXISTS, a column added only when missing): a database
made before m001 was frozen got its tables as models.py declared them on the day, so some of
what a later migration adds may already be there.
"""

import contextlib
import logging
import sqlite3
from pathlib import Path

from peewee import BlobField
from peewee import BooleanField
from peewee import CharField
from peewee import DatabaseError
from peewee import DateTimeField
from peewee import FloatField
from peewee import ForeignKeyField
from peewee import IntegerField
from peewee import TextField

from ..clock import utcnow
from ..errors import LlmbenchError
from . import baseline
from . import ddl
from .connection import database
from .connection import init_db
from .models import ITEM_FIGURES_COLUMNS
from .models import Account
from .models import Alert
from .models import ApiToken
from .models import AuditEntry
from .models import Baseline
from .models import ItemCount
from .models import JSONField
from .models import JudgeCall
from .models import JudgeJob
from .models import LabelQueue
from .models import Outage
from .models import PairToken
from .models import PendingItems
from .models import Rating
from .models import RatingHistory
from .models import RatingTag
from .models import RunAggregate
from .models import RunDigest
from .models import RunFigures
from .models import RunSpeed
from .models import RunTarget
from .models import SampleChunk
from .models import Template
from .models import Vote
from .models import VoteHistory
from .urls import parse

log = logging.getLogger(__name__)

# In order. The numbers 006-009 and 013 belong to no migration and never did: branches worked
# on at the same time took blocks of numbers (010-012, 014-017, 018-021, 022-023) and these
# were left over. The ledger records names, so a gap means nothing.
MIGRATIONS = []


def migration(fn):
    MIGRATIONS.append(fn)
    return fn


def _dialect(db):
    return "postgres" if getattr(db, "is_postgres", False) else "sqlite"


def _migrator(db):
    """The dialect's schema migrator (SQLite or PostgreSQL) for the database behind the proxy."""
    # Lazy: playhouse.migrate (with its CockroachDB and PostgreSQL extras, ~2 % of a 10-task
    # `validate`) only for a migration that runs; a database already up to date needs none.
    from playhouse.migrate import SchemaMigrator

    return SchemaMigrator.from_database(db)


def migrate(*operations):
    """Run the migrator's operations (playhouse.migrate.migrate, imported as _migrator's)."""
    from playhouse.migrate import migrate as run

    run(*operations)


def _columns(db, table):
    return {c.name for c in db.get_columns(table)}


def _add_missing_columns(db, table, columns):
    """Add the (name, field) columns `table` lacks."""
    have = _columns(db, table)
    operations = [
        _migrator(db).add_column(table, name, field) for name, field in columns if name not in have
    ]
    if operations:
        migrate(*operations)


@migration
def m001_initial(db):
    # The first schema, as it was released: baseline.py, never models.py.
    for sql in baseline.statements(_dialect(db)):
        db.execute_sql(sql)


@migration
def m002_item_progress_indexes(db):
    # The live view's "latest answered/judged items" sorts (m030 replaces both).
    for column in ("answered_at", "judged_at"):
        db.execute_sql(
            f"CREATE INDEX IF NOT EXISTS item_run_id_{column} ON item (run_id, {column})"
        )


@migration
def m003_item_judge_cost(db):
    # The run budget counts the judge's calls too (maxBudgetUsd); nullable: items judged before
    # it have no judge cost.
    _add_missing_columns(db, "item", [("judge_cost_usd", FloatField(null=True))])


@migration
def m004_item_updated_at_index(db):
    # The live view's latest items sorted by updated_at (m030 replaces it).
    db.execute_sql("CREATE INDEX IF NOT EXISTS item_run_id_updated_at ON item (run_id, updated_at)")


@migration
def m005_item_claimed_until(db):
    # "In flight" has its own column; next_retry_at means only "retry after". A claim live when
    # this runs moves its deadline over.
    if "claimed_until" in _columns(db, "item"):
        return
    migrate(_migrator(db).add_column("item", "claimed_until", DateTimeField(null=True)))
    db.execute_sql(
        "UPDATE item SET claimed_until = next_retry_at, next_retry_at = NULL "
        "WHERE status IN ('NEW', 'WAITING_FOR_JUDGE') AND attempts > 0 "
        "AND next_retry_at IS NOT NULL AND error_msg IS NULL"
    )


@migration
def m010_outage(db):
    # The per-provider circuit breaker's open outages (engine/breaker.py).
    db.create_tables([Outage], safe=True)


@migration
def m011_item_answer_cut(db):
    # An answer cut at the size cap (MAX_ANSWER_CHARS) says so.
    _add_missing_columns(db, "item", [("answer_cut", BooleanField(default=False))])


@migration
def m012_item_judge_history(db):
    # Re-judging a completed item keeps the judgement it replaces.
    _add_missing_columns(db, "item", [("judge_history", JSONField(null=True))])


@migration
def m014_run_target_label(db):
    # A run may hold the same model twice with different params: each target has a label,
    # unique in its run, instead of (provider, model) being unique. Existing targets get their
    # default label; a clash (one model on two providers) gets the provider in front.
    if "label" in _columns(db, "runtarget"):
        return
    migrate(_migrator(db).add_column("runtarget", "label", CharField(max_length=300, default="")))
    rows = db.execute_sql(
        "SELECT id, run_id, provider_name, model, params FROM runtarget "
        "ORDER BY run_id, position, id"
    ).fetchall()
    taken = set()
    for pk, run_id, provider_name, model, params in rows:
        label = RunTarget.default_label(model, RunTarget.params.python_value(params))
        if (run_id, label) in taken:
            label = f"{provider_name}/{label}"
        taken.add((run_id, label))
        db.execute_sql("UPDATE runtarget SET label = ? WHERE id = ?", (label, pk))
    db.execute_sql("DROP INDEX IF EXISTS runtarget_run_id_provider_id_model")
    db.execute_sql(
        "CREATE UNIQUE INDEX IF NOT EXISTS runtarget_run_id_label ON runtarget (run_id, label)"
    )


@migration
def m015_ratings(db):
    # People's Likert ratings with tags and notes.
    db.create_tables([Rating, RatingTag], safe=True)


@migration
def m016_judge_jobs(db):
    # Judge calls beside a run's items (pairwise comparisons, the reference check).
    db.create_tables([JudgeJob, JudgeCall], safe=True)


@migration
def m017_votes(db):
    # Pairwise votes, by people and judges.
    db.create_tables([Vote], safe=True)


@migration
def m018_templates_and_queue(db):
    # Templates (saved run specs, schedules, alert settings) and where a run came from; the
    # queued state lives in run.control ("queued"), so no column is needed for it.
    db.create_tables([Template], safe=True)
    _add_missing_columns(
        db,
        "run",
        [
            (
                "template_id",
                ForeignKeyField(Template, null=True, on_delete="SET NULL", field=Template.id),
            ),
            ("triggered_by", CharField(max_length=50, null=True)),
            ("trigger_note", TextField(null=True)),
            ("queued_at", DateTimeField(null=True)),
        ],
    )
    db.execute_sql('CREATE INDEX IF NOT EXISTS "run_template_id" ON "run" ("template_id")')


@migration
def m019_item_repeats(db):
    # Repeats: the K-th answer to a task (own seed) and every score of repeated judgements.
    # Existing items are repeat 0 with no seed of their own: what they were.
    _add_missing_columns(
        db,
        "item",
        [
            ("repeat", IntegerField(default=0)),
            ("seed", IntegerField(null=True)),
            ("judge_scores", JSONField(null=True)),
        ],
    )


@migration
def m020_trends_and_alerts(db):
    # Per-run aggregates (Trends reads these, never the items), baselines and alerts. Runs
    # finished before it get their aggregates from the next digest pass (schedules/digest.py).
    db.create_tables([Baseline, RunDigest, RunAggregate, Alert], safe=True)


@migration
def m021_system_samples(db):
    # System metrics sampled during runs (sysmetrics/store.py).
    db.create_tables([SampleChunk], safe=True)


@migration
def m022_item_reused_from(db):
    # `llmbench run --reuse` copies an earlier answer / judgement into a new item and says from
    # which item; nullable (nothing reused before).
    _add_missing_columns(
        db,
        "item",
        [
            ("answer_reused_from", IntegerField(null=True)),
            ("judgement_reused_from", IntegerField(null=True)),
        ],
    )


@migration
def m023_run_outputs(db):
    # Where the CLI writes a run's reports, so `llmbench resume` writes them too; nullable (runs
    # from the web app have none).
    _add_missing_columns(db, "run", [("outputs", TextField(null=True))])


@migration
def m024_item_claim_indexes(db):
    # Claims in O(log N): partial indexes on the items still to be taken, in id order
    # (engine/claims.py names them with INDEXED BY). Same names and WHERE as models.py.
    db.execute_sql(
        "CREATE INDEX IF NOT EXISTS item_claim_new ON item (run_id, target_id) WHERE status = 'NEW'"
    )
    db.execute_sql(
        "CREATE INDEX IF NOT EXISTS item_claim_judge ON item (run_id) "
        "WHERE status = 'WAITING_FOR_JUDGE'"
    )
    db.execute_sql(
        "CREATE INDEX IF NOT EXISTS item_claimed_until ON item (run_id, claimed_until) "
        "WHERE claimed_until IS NOT NULL"
    )


@migration
def m025_item_counts(db):
    # Counts that are kept, not counted: item_count and, on SQLite, the triggers that keep it
    # (ddl.py), rebuilt from the items.
    db.create_tables([ItemCount], safe=True)
    if getattr(db, "is_postgres", False):
        # PostgreSQL's triggers are m032's: until then the table stays empty rather than holding
        # counts nothing keeps up to date.
        db.execute_sql("DELETE FROM item_count")
        return
    for sql in ddl.ITEM_COUNT_TRIGGERS:
        db.execute_sql(sql)
    db.execute_sql("DELETE FROM item_count")
    db.execute_sql(ddl.ITEM_COUNT_RECOUNT)


# The results table's sorts; same names as models.py (Peewee's item_run_id_<columns>).
RESULTS_SORT_INDEXES = (
    ("task_key",),
    ("category", "task_key"),
    ("status",),
    ("ttft_ms",),
    ("tokens_generated",),
    ("cost_usd",),
    ("target_id", "answered_at"),
)


@migration
def m026_item_sort_indexes(db):
    # Results pages by index: every sort the table offers on an item column reads an index of
    # the run's items in that order, so a page is a seek and a short walk, not a sort of the
    # whole run.
    for columns in RESULTS_SORT_INDEXES:
        name = "item_run_id_" + "_".join(columns)
        db.execute_sql(f"CREATE INDEX IF NOT EXISTS {name} ON item (run_id, {', '.join(columns)})")
    # The live view's latest items: only the items tried at least once (models.py).
    db.execute_sql(
        "CREATE INDEX IF NOT EXISTS item_run_id_updated_at_tried ON item (run_id, updated_at) "
        "WHERE last_attempt_at IS NOT NULL"
    )


@migration
def m027_claims_across_processes(db):
    # `llmbench worker` processes claim beside the orchestrator (engine/remote.py). A claim
    # names its holder, so an orchestrator taking over a dead one's lease gives back only the
    # dead one's claims (claims.release_all). PostgreSQL's claims read ddl.PG_CLAIM_INDEXES.
    _add_missing_columns(db, "item", [("claimed_by", CharField(max_length=200, null=True))])
    _add_missing_columns(db, "judgecall", [("claimed_by", CharField(max_length=200, null=True))])
    if getattr(db, "is_postgres", False):
        for sql in ddl.PG_CLAIM_INDEXES:
            db.execute_sql(sql)


@migration
def m028_item_difficulty_index(db):
    # The results table's difficulty sort reads one difficulty value at a time in task order
    # (results/keyset.py), and the difficulty filter seeks its value. Same name as models.py.
    db.execute_sql(
        "CREATE INDEX IF NOT EXISTS item_run_id_difficulty_task_key "
        "ON item (run_id, difficulty, task_key)"
    )


@migration
def m029_item_target_score_index(db):
    # The results table's model filter with a score range: its count (and a score sort of one
    # model) seeks each target's scores. Same name as models.py.
    db.execute_sql(
        "CREATE INDEX IF NOT EXISTS item_run_id_target_id_evaluation_score "
        "ON item (run_id, target_id, evaluation_score)"
    )


# Indexes that no query needs, or that another index serves: each one would cost every answer
# and judgement a page or two (an UPDATE maintains every index whose columns it sets, an INSERT
# every index; bench/bench_item_writes.py). The run log's (run_id, id) serves what its (run_id)
# would; the live view reads updated_at through item_run_id_updated_at_tried; claims seek
# item_claim_new / item_claim_judge (any_claimable too: SQLite matches the bound status to their
# WHERE); the backoffs' next wake reads item_next_retry_at. (item's (run_id) and (run_id,
# category) stay: they end with the rowid, so they read in id order, and no answer or judgement
# writes them.)
REDUNDANT_INDEXES = (
    "runlog_run_id",
    "item_run_id_updated_at",
    "item_run_id_status_target_id_next_retry_at",
    "item_run_id_answered_at",
    "item_run_id_target_id_answered_at",
    "item_run_id_judged_at",
)
# (name, columns, the column that must be set): same as models.py.
PARTIAL_TIME_INDEXES = (
    ("item_answered_at", "run_id, answered_at", "answered_at"),
    ("item_target_answered_at", "run_id, target_id, answered_at", "answered_at"),
    ("item_judged_at", "run_id, judged_at", "judged_at"),
    ("item_next_retry_at", "run_id, next_retry_at", "next_retry_at"),
)
# On PostgreSQL, ddl.PG_CLAIM_INDEXES begin with the columns of these: the longer ones serve all.
PG_REDUNDANT_INDEXES = ("item_claim_new", "item_claim_judge")


@migration
def m030_redundant_indexes(db):
    # Fewer pages written per call: drop REDUNDANT_INDEXES and add the partial ones.
    names = REDUNDANT_INDEXES
    if getattr(db, "is_postgres", False):
        names += PG_REDUNDANT_INDEXES
    for name in names:
        db.execute_sql(f"DROP INDEX IF EXISTS {name}")
    for name, columns, column in PARTIAL_TIME_INDEXES:
        db.execute_sql(
            f"CREATE INDEX IF NOT EXISTS {name} ON item ({columns}) WHERE {column} IS NOT NULL"
        )


@migration
def m031_item_count_writes(db):
    # item_count is derived: dropped and made again as models.py has it (no foreign key, no index
    # of its own on run_id: the unique key begins with it), then recounted, with SQLite's
    # cheaper update triggers (ddl.ITEM_COUNT_WRITES). PostgreSQL: the table only (run alone
    # after m032, the DROP fails: m032's view reads the table).
    db.execute_sql("DROP TABLE IF EXISTS item_count")
    db.create_tables([ItemCount])
    if getattr(db, "is_postgres", False):
        return
    db.execute_sql("DROP TRIGGER IF EXISTS item_count_update")
    for sql in ddl.ITEM_COUNT_WRITES:
        db.execute_sql(sql)
    db.execute_sql(ddl.ITEM_COUNT_RECOUNT)


@migration
def m032_item_counts_on_postgres(db):
    # PostgreSQL only: its kept counts (ddl.PG_ITEM_COUNT_DELTAS). Rebuilt from the items in the
    # transaction that makes the triggers (which holds off every writer of item until it
    # commits), so no change falls between the recount and the first delta.
    if not getattr(db, "is_postgres", False):
        return
    for sql in ddl.PG_ITEM_COUNT_DELTAS:
        db.execute_sql(sql)
    db.execute_sql("DELETE FROM item_count_delta")
    db.execute_sql("DELETE FROM item_count")
    db.execute_sql(ddl.PG_ITEM_COUNT_RECOUNT)


@migration
def m033_pg_indexes_in_id_order(db):
    # PostgreSQL only: ddl.PG_ID_ORDER_INDEXES, made again where they exist, in the migration's
    # transaction: DROP INDEX locks the item table, so its readers and writers wait until the
    # last one is built (CREATE INDEX CONCURRENTLY would not lock it, but cannot run in a
    # transaction).
    if not getattr(db, "is_postgres", False):
        return
    for name, columns in ddl.PG_ID_ORDER_INDEXES:
        db.execute_sql(f"DROP INDEX IF EXISTS {name}")
        db.execute_sql(f"CREATE INDEX {name} ON item ({columns}, id)")


@migration
def m034_pg_run_target_statistics(db):
    # PostgreSQL only: ddl.PG_STATISTICS. ANALYZE fills them now rather than at autovacuum's
    # next pass (0.8 s at 1.1 million items).
    if not getattr(db, "is_postgres", False):
        return
    db.execute_sql(ddl.PG_STATISTICS)
    db.execute_sql("ANALYZE item")


@migration
def m035_pg_double_precision(db):
    # PostgreSQL only: every float column DOUBLE PRECISION (connection.PostgresDatabase), as a
    # fresh database has them; a database whose tables were made with REAL ones (4-byte: a
    # cost of 0.03 read back as 0.0299999993) gets them widened. No-op where none is REAL.
    if not getattr(db, "is_postgres", False):
        return
    narrow = db.execute_sql(
        "SELECT c.table_name, c.column_name FROM information_schema.columns c "
        "JOIN information_schema.tables t ON t.table_schema = c.table_schema "
        "AND t.table_name = c.table_name WHERE c.table_schema = 'public' "
        "AND t.table_type = 'BASE TABLE' AND c.data_type = 'real' "
        "ORDER BY c.table_name, c.ordinal_position"
    ).fetchall()
    for table, column in narrow:
        db.execute_sql(f'ALTER TABLE "{table}" ALTER COLUMN "{column}" TYPE DOUBLE PRECISION')


@migration
def m036_checks_and_tools(db):
    # A task's checks (rules that score an answer without a judge) and the tools it offers the
    # model; an item keeps both as they were at the run's start, what the checks found, their
    # combined score, the tool calls the answer made, and why it auto-failed.
    _add_missing_columns(
        db, "task", [("checks", TextField(null=True)), ("tools", TextField(null=True))]
    )
    _add_missing_columns(
        db,
        "item",
        [
            ("checks", TextField(null=True)),
            ("tools", TextField(null=True)),
            ("check_results", TextField(null=True)),
            ("check_score", FloatField(null=True)),
            ("tool_calls", TextField(null=True)),
            ("auto_fail_reason", TextField(null=True)),
        ],
    )


@migration
def m037_alert_metric(db):
    # An alert says which number dropped: "score" (a paired drop with its CI and tests) or
    # "composite" (the change alone, no CI: its interval columns are empty). Unique per run,
    # series, comparison and metric, so a run can have both against the same baseline.
    _add_missing_columns(db, "alert", [("metric", CharField(max_length=20, default="score"))])
    migrator = _migrator(db)
    # Found by columns, not names: a database may already have the new shape.
    unique = {tuple(i.columns): i.name for i in db.get_indexes("alert") if i.unique}
    new = ("run_id", "series", "against", "metric")
    old = unique.get(("run_id", "series", "against"))
    migrate(
        migrator.drop_not_null("alert", "ci_low"),
        migrator.drop_not_null("alert", "ci_high"),
        *([migrator.drop_index("alert", old)] if old else []),
        *([] if new in unique else [migrator.add_index("alert", new, unique=True)]),
    )


@migration
def m038_answer_timing(db):
    # A streamed answer's timing as a load tester reports it: first answer token, last token,
    # when it was sent, token events, reasoning tokens, the token gaps (a packed histogram) and
    # the queue estimate.
    _add_missing_columns(
        db,
        "item",
        [
            ("first_answer_ms", FloatField(null=True)),
            ("last_token_ms", FloatField(null=True)),
            ("sent_ts", FloatField(null=True)),
            ("chunks", IntegerField(null=True)),
            ("reasoning_tokens", IntegerField(null=True)),
            ("itl_hist", BlobField(null=True)),
            ("queue_ms", FloatField(null=True)),
        ],
    )


@migration
def m039_load_steps(db):
    # Load steps: an item's step (0 when the run has none). One ALTER with its default, not the
    # migrator's add-then-set-NOT-NULL: on SQLite that rebuilds the table, and a rebuilt item
    # table loses the triggers that keep item_count.
    if "step" not in _columns(db, "item"):
        kind = "BIGINT" if getattr(db, "is_postgres", False) else "INTEGER"
        db.execute_sql(f"ALTER TABLE item ADD COLUMN step {kind} NOT NULL DEFAULT 0")


@migration
def m040_run_speed(db):
    # A run's speed figures kept with the stamp of the items they came from (results/speed.py):
    # a 100 000-item run's speed page reads one row, not every item. A new table only; runs
    # from before get theirs on their next view (or digest).
    db.create_tables([RunSpeed], safe=True)


@migration
def m041_accounts(db):
    # Accounts, tokens for machines and the audit log (issue 30): new tables only; a database
    # with none of them stays open to loopback as before.
    db.create_tables([Account, ApiToken, AuditEntry], safe=True)


@migration
def m042_labels_by_person(db):
    # Each person's labels: a rating says who gave it ("human", or "human:<account>" once there
    # are accounts), one rating per item and rater. A raw ALTER with its default and a raw
    # index swap, not the migrator: on SQLite it would rebuild the rating table (no triggers on
    # it, but ratingtag's rows point at its ids and must keep them). Then the history of every
    # change, the pair tokens the A/B page hands out, and each person's queue order.
    if "rater" not in _columns(db, "rating"):
        db.execute_sql("ALTER TABLE rating ADD COLUMN rater VARCHAR(420) NOT NULL DEFAULT 'human'")
    db.execute_sql("DROP INDEX IF EXISTS rating_item_id")
    db.execute_sql(
        "CREATE UNIQUE INDEX IF NOT EXISTS rating_item_id_rater ON rating (item_id, rater)"
    )
    db.create_tables([RatingHistory, VoteHistory, PairToken, LabelQueue], safe=True)


@migration
def m043_kept_aggregates(db):
    # The figures a run's results page works out from every item, kept with the stamp of what
    # they came from (results/kept.py): a 100 000-item run's page reads a few rows, not every
    # item four times. A new table only; runs from before get theirs on their next view.
    db.create_tables([RunFigures], safe=True)


@migration
def m044_run_records(db):
    # Each run's record for an audit: the llmbench version that made it, the command line and
    # the config as given (secrets masked). Nullable TEXT, one raw ALTER each: nothing rebuilt.
    have = _columns(db, "run")
    for name in ("tool_version", "command_line", "config_given"):
        if name not in have:
            db.execute_sql(f"ALTER TABLE run ADD COLUMN {name} TEXT")


@migration
def m045_item_figures(db):
    # The results page's figures from one covering index (models.ITEM_FIGURES_COLUMNS): its
    # first view of a 100 000-item run read every wide item row four times. A new index only:
    # CREATE INDEX does not rebuild the item table (its item_count triggers stay).
    db.execute_sql(f"CREATE INDEX IF NOT EXISTS item_figures ON item ({ITEM_FIGURES_COLUMNS})")


@migration
def m047_pending_items(db):
    # The items a big run has still to make (runs/creation.py): the engine starts on the first
    # tasks' items and makes the rest as it goes. A new table only; nothing rebuilt.
    db.create_tables([PendingItems], safe=True)


@migration
def m048_item_answered_task(db):
    # The A/B page's pairs from an index alone (models.py: item_answered_task): each view read
    # every pair's two item rows. A new index only: CREATE INDEX does not rebuild the item table.
    db.execute_sql(
        "CREATE INDEX IF NOT EXISTS item_answered_task "
        "ON item (run_id, target_id, task_key, answered_at) WHERE answered_at IS NOT NULL"
    )


def applied(db):
    """Names of the migrations already applied, in order."""
    return [row[0] for row in db.execute_sql("SELECT name FROM _migrations ORDER BY id")]


def schema_version(db):
    return len(applied(db))


def apply(db):
    """Apply every migration not yet recorded; each in its own transaction."""
    with db.atomic("IMMEDIATE"):  # two processes starting at once: one creates it
        db.execute_sql(ddl.LEDGER[_dialect(db)])
    done = set(applied(db))
    for fn in MIGRATIONS:
        if fn.__name__ in done:
            continue
        with _without_cascades(db), db.atomic("IMMEDIATE"):
            # Another process may have applied it while we waited for the lock.
            if fn.__name__ in set(applied(db)):
                continue
            fn(db)
            db.execute_sql(
                "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)",
                (fn.__name__, utcnow().isoformat()),
            )
        log.info("applied migration %s", fn.__name__)


@contextlib.contextmanager
def _without_cascades(db):
    """SQLite: foreign keys off while a migration runs. Peewee's SQLite migrator adds a NOT NULL
    column by rebuilding the table (a copy, then DROP TABLE and a rename), and a DROP TABLE with
    foreign keys on deletes every row that refers to the table first (ON DELETE CASCADE: a
    run's items with its targets). The pragma takes only outside a transaction."""
    if getattr(db, "is_postgres", False):
        yield
        return
    (enforced,) = db.execute_sql("PRAGMA foreign_keys").fetchone()
    db.execute_sql("PRAGMA foreign_keys = OFF")
    try:
        yield
    finally:
        db.execute_sql(f"PRAGMA foreign_keys = {int(enforced)}")


class DatabaseUnusable(LlmbenchError):
    """A database file we cannot use as it is: which file, why, and what to do (`fix`)."""

    def __init__(self, path, cause, fix):
        super().__init__(f"cannot open the database {path}: {cause}.\nFix: {fix}")
        self.path, self.cause, self.fix = path, cause, fix


LEFT_ALONE = "The file was left as it is."
# SQLite's result codes (sqlite3's sqlite_errorname) -> what the file's owner reads and does.
_CAUSES = {
    "SQLITE_NOTADB": (
        "it is not a SQLite database (damaged, or another kind of file)",
        "restore it from a backup, or set LLMBENCH_DB to another path (a new one starts empty). "
        + LEFT_ALONE,
    ),
    "SQLITE_CORRUPT": (
        "the SQLite file is damaged (database disk image is malformed)",
        "restore it from a backup, or set LLMBENCH_DB to another path (a new one starts empty). "
        + LEFT_ALONE,
    ),
    "SQLITE_BUSY": (
        "another program holds a lock on it (still locked after waiting 10 s)",
        "stop the process holding it (another llmbench serve or run, a sqlite3 shell with an "
        "open transaction) and start again. " + LEFT_ALONE,
    ),
    "SQLITE_CANTOPEN": (
        "the file cannot be opened",
        "check that its folder exists and that this user may read and write both",
    ),
    "SQLITE_READONLY": (
        "the file is read-only for this user",
        "give this user write access to the file and its folder, or set LLMBENCH_DB to "
        "another path",
    ),
}


def _error_name(exc):
    """SQLite's result code of a sqlite3 or peewee error (peewee raises its own while handling
    sqlite3's: that one is its __context__)."""
    for err in (exc, exc.__cause__, exc.__context__):
        name = getattr(err, "sqlite_errorname", None)
        if name:  # the primary code of an extended one: SQLITE_BUSY of SQLITE_BUSY_RECOVERY
            return "_".join(name.split("_")[:2])
    return None


def unusable(path, exc):
    """The DatabaseUnusable for a SQLite error met opening `path`, or None when it is another."""
    known = _CAUSES.get(_error_name(exc))
    if known is None:
        return None
    cause, fix = known
    return DatabaseUnusable(path, cause, fix)


def check_file(path):
    """Refuse, before anything is written, a SQLite file that is not ours: damaged, locked, or
    another program's database (its tables and none of ours). A missing or empty file is fine
    (it becomes a new database).

    Plain sqlite3, no pragmas: init_db's would switch a foreign file to WAL, changing it."""
    if not Path(path).is_file() or Path(path).stat().st_size == 0:
        return
    try:
        connection = sqlite3.connect(path, timeout=10)
        try:
            tables = [
                row[0]
                for row in connection.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
                )
            ]
        finally:
            connection.close()
    except sqlite3.DatabaseError as exc:
        error = unusable(path, exc)
        if error is None:
            raise
        raise error from exc
    if tables and "_migrations" not in tables:
        shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
        raise DatabaseUnusable(
            path,
            f"it is another program's SQLite database (tables {shown}; none of llmbench's)",
            "set LLMBENCH_DB to llmbench's database, or to a new path to start an empty one. "
            + LEFT_ALONE,
        )


def open_db(path, cache_mib=None):
    """Bind the database to `path` and bring its schema up to date; returns the database.
    `cache_mib`: each SQLite connection's page cache (db.init_db). A SQLite file we cannot use
    raises DatabaseUnusable."""
    target = parse(path)
    local = not target.is_postgres and target.path != ":memory:"
    if local:
        check_file(target.path)
    init_db(path, cache_mib)
    try:
        with database.connection_context():
            apply(database)
    except DatabaseError as exc:
        error = unusable(target.path, exc) if local else None
        if error is None:
            raise
        raise error from exc
    return database
