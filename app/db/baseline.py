"""The schema m001 creates, frozen: the tables and indexes of llmbench's first schema (commit
1c66739). A fresh database and an old one both start from it and take every later migration,
so both end the same (tests/test_schema.py compares them); models.py says what the tables are
now, this never changes.

The statements are Peewee's for those tables, with the column types each dialect writes
differently filled in from TYPES."""

import re

TYPES = {
    "sqlite": {
        "id": "INTEGER NOT NULL PRIMARY KEY",
        "int": "INTEGER",
        "float": "REAL",
        "timestamp": "DATETIME",
        "boolean": "INTEGER",
    },
    # 64-bit integers and floats, as SQLite's are (connection.PostgresDatabase's field types).
    "postgres": {
        "id": "BIGSERIAL NOT NULL PRIMARY KEY",
        "int": "BIGINT",
        "float": "DOUBLE PRECISION",
        "timestamp": "TIMESTAMP",
        "boolean": "BOOLEAN",
    },
}

_STATEMENTS = (
    """CREATE TABLE "collection" (
        "id" {id},
        "name" VARCHAR(200) NOT NULL,
        "description" TEXT NOT NULL,
        "created_at" {timestamp} NOT NULL
    )""",
    'CREATE UNIQUE INDEX "collection_name" ON "collection" ("name")',
    """CREATE TABLE "task" (
        "id" {id},
        "task_id" VARCHAR(200) NOT NULL,
        "category" VARCHAR(100) NOT NULL,
        "subcategory" VARCHAR(100) NOT NULL,
        "difficulty" VARCHAR(20) NOT NULL,
        "question" TEXT NOT NULL,
        "system_prompt" TEXT,
        "excellent" TEXT NOT NULL,
        "good" TEXT NOT NULL,
        "pass_answer" TEXT NOT NULL,
        "incorrect_direction" TEXT NOT NULL,
        "rubric" TEXT,
        "auto_fail" TEXT,
        "tags" TEXT,
        "vars" TEXT,
        "template_version" VARCHAR(50),
        "created_at" {timestamp} NOT NULL,
        "updated_at" {timestamp} NOT NULL
    )""",
    'CREATE UNIQUE INDEX "task_task_id" ON "task" ("task_id")',
    'CREATE INDEX "task_category" ON "task" ("category")',
    """CREATE TABLE "collectiontask" (
        "id" {id},
        "collection_id" {int} NOT NULL,
        "task_id" {int} NOT NULL,
        FOREIGN KEY ("collection_id") REFERENCES "collection" ("id") ON DELETE CASCADE,
        FOREIGN KEY ("task_id") REFERENCES "task" ("id") ON DELETE CASCADE
    )""",
    'CREATE INDEX "collectiontask_collection_id" ON "collectiontask" ("collection_id")',
    'CREATE INDEX "collectiontask_task_id" ON "collectiontask" ("task_id")',
    'CREATE UNIQUE INDEX "collectiontask_collection_id_task_id"'
    ' ON "collectiontask" ("collection_id", "task_id")',
    """CREATE TABLE "provider" (
        "id" {id},
        "name" VARCHAR(100) NOT NULL,
        "type" VARCHAR(10) NOT NULL,
        "base_url" VARCHAR(500) NOT NULL,
        "models_endpoint" VARCHAR(200) NOT NULL,
        "inference_endpoint" VARCHAR(200) NOT NULL,
        "timeout_seconds" {float} NOT NULL,
        "max_concurrency" {int} NOT NULL,
        "created_at" {timestamp} NOT NULL,
        "updated_at" {timestamp} NOT NULL
    )""",
    'CREATE UNIQUE INDEX "provider_name" ON "provider" ("name")',
    """CREATE TABLE "run" (
        "id" {id},
        "run_id" VARCHAR(200) NOT NULL,
        "name" VARCHAR(200) NOT NULL,
        "judge_provider_id" {int},
        "judge_provider_name" VARCHAR(100) NOT NULL,
        "judge_model" VARCHAR(300) NOT NULL,
        "judge_params" TEXT,
        "status" VARCHAR(20) NOT NULL,
        "phase" VARCHAR(20) NOT NULL,
        "control" VARCHAR(20) NOT NULL,
        "control_reason" TEXT,
        "settings" TEXT,
        "dataset_hash" VARCHAR(64),
        "prompt_hash" VARCHAR(64),
        "source" VARCHAR(20) NOT NULL,
        "created_at" {timestamp} NOT NULL,
        "started_at" {timestamp},
        "finished_at" {timestamp},
        "updated_at" {timestamp} NOT NULL,
        FOREIGN KEY ("judge_provider_id") REFERENCES "provider" ("id") ON DELETE SET NULL
    )""",
    'CREATE UNIQUE INDEX "run_run_id" ON "run" ("run_id")',
    'CREATE INDEX "run_judge_provider_id" ON "run" ("judge_provider_id")',
    'CREATE INDEX "run_status" ON "run" ("status")',
    'CREATE INDEX "run_control" ON "run" ("control")',
    'CREATE INDEX "run_created_at" ON "run" ("created_at")',
    """CREATE TABLE "runtarget" (
        "id" {id},
        "run_id" {int} NOT NULL,
        "provider_id" {int},
        "provider_name" VARCHAR(100) NOT NULL,
        "model" VARCHAR(300) NOT NULL,
        "params" TEXT,
        "position" {int} NOT NULL,
        "warmup_ms" {float},
        "load_ms" {float},
        "warmup_error" TEXT,
        FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE,
        FOREIGN KEY ("provider_id") REFERENCES "provider" ("id") ON DELETE SET NULL
    )""",
    'CREATE INDEX "runtarget_run_id" ON "runtarget" ("run_id")',
    'CREATE INDEX "runtarget_provider_id" ON "runtarget" ("provider_id")',
    'CREATE UNIQUE INDEX "runtarget_run_id_provider_id_model"'
    ' ON "runtarget" ("run_id", "provider_id", "model")',
    """CREATE TABLE "item" (
        "id" {id},
        "run_id" {int} NOT NULL,
        "target_id" {int} NOT NULL,
        "task_id" {int},
        "task_key" VARCHAR(200) NOT NULL,
        "category" VARCHAR(100) NOT NULL,
        "subcategory" VARCHAR(100) NOT NULL,
        "difficulty" VARCHAR(20) NOT NULL,
        "question" TEXT NOT NULL,
        "system_prompt" TEXT,
        "excellent" TEXT NOT NULL,
        "good" TEXT NOT NULL,
        "pass_answer" TEXT NOT NULL,
        "incorrect_direction" TEXT NOT NULL,
        "rubric" TEXT,
        "auto_fail_rules" TEXT,
        "template_version" VARCHAR(50),
        "status" VARCHAR(20) NOT NULL,
        "attempts" {int} NOT NULL,
        "answer_attempts" {int} NOT NULL,
        "first_attempt_at" {timestamp},
        "last_attempt_at" {timestamp},
        "next_retry_at" {timestamp},
        "request_json" TEXT,
        "response_raw" TEXT,
        "answer" TEXT,
        "finish_reason" VARCHAR(50),
        "time_taken_ms" {float},
        "ttft_ms" {float},
        "prompt_ms" {float},
        "decode_ms" {float},
        "load_ms" {float},
        "prompt_tokens" {int},
        "tokens_generated" {int},
        "tokens_per_second" {float},
        "tps_source" VARCHAR(30),
        "tokens_estimated" {boolean} NOT NULL,
        "cost_usd" {float},
        "cost_source" VARCHAR(30),
        "context_hash" VARCHAR(64),
        "answered_at" {timestamp},
        "judge_request_json" TEXT,
        "judge_raw" TEXT,
        "judge_ms" {float},
        "evaluation_score" {float},
        "evaluation_reason" TEXT,
        "rubric_scores" TEXT,
        "auto_fail" {boolean},
        "judged_at" {timestamp},
        "error_stage" VARCHAR(20),
        "error_msg" TEXT,
        "created_at" {timestamp} NOT NULL,
        "updated_at" {timestamp} NOT NULL,
        FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE,
        FOREIGN KEY ("target_id") REFERENCES "runtarget" ("id") ON DELETE CASCADE,
        FOREIGN KEY ("task_id") REFERENCES "task" ("id") ON DELETE SET NULL
    )""",
    'CREATE INDEX "item_run_id" ON "item" ("run_id")',
    'CREATE INDEX "item_target_id" ON "item" ("target_id")',
    'CREATE INDEX "item_task_id" ON "item" ("task_id")',
    'CREATE INDEX "item_context_hash" ON "item" ("context_hash")',
    'CREATE INDEX "item_run_id_status_target_id_next_retry_at"'
    ' ON "item" ("run_id", "status", "target_id", "next_retry_at")',
    'CREATE INDEX "item_run_id_target_id_task_key" ON "item" ("run_id", "target_id", "task_key")',
    'CREATE INDEX "item_run_id_evaluation_score" ON "item" ("run_id", "evaluation_score")',
    'CREATE INDEX "item_run_id_time_taken_ms" ON "item" ("run_id", "time_taken_ms")',
    'CREATE INDEX "item_run_id_tokens_per_second" ON "item" ("run_id", "tokens_per_second")',
    'CREATE INDEX "item_run_id_category" ON "item" ("run_id", "category")',
    """CREATE TABLE "lease" (
        "id" {id},
        "name" VARCHAR(50) NOT NULL,
        "holder" VARCHAR(200) NOT NULL,
        "acquired_at" {timestamp} NOT NULL,
        "heartbeat_at" {timestamp} NOT NULL,
        "expires_at" {timestamp} NOT NULL
    )""",
    'CREATE UNIQUE INDEX "lease_name" ON "lease" ("name")',
    """CREATE TABLE "price" (
        "id" {id},
        "provider_name" VARCHAR(100) NOT NULL,
        "model" VARCHAR(300) NOT NULL,
        "input_per_1m" {float} NOT NULL,
        "output_per_1m" {float} NOT NULL,
        "updated_at" {timestamp} NOT NULL
    )""",
    'CREATE UNIQUE INDEX "price_provider_name_model" ON "price" ("provider_name", "model")',
    """CREATE TABLE "providerheader" (
        "id" {id},
        "provider_id" {int} NOT NULL,
        "key" VARCHAR(100) NOT NULL,
        "value" TEXT NOT NULL,
        "is_secret" {boolean} NOT NULL,
        FOREIGN KEY ("provider_id") REFERENCES "provider" ("id") ON DELETE CASCADE
    )""",
    'CREATE INDEX "providerheader_provider_id" ON "providerheader" ("provider_id")',
    'CREATE UNIQUE INDEX "providerheader_provider_id_key"'
    ' ON "providerheader" ("provider_id", "key")',
    """CREATE TABLE "runcollection" (
        "id" {id},
        "run_id" {int} NOT NULL,
        "collection_id" {int},
        "collection_name" VARCHAR(200) NOT NULL,
        FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE,
        FOREIGN KEY ("collection_id") REFERENCES "collection" ("id") ON DELETE SET NULL
    )""",
    'CREATE INDEX "runcollection_run_id" ON "runcollection" ("run_id")',
    'CREATE INDEX "runcollection_collection_id" ON "runcollection" ("collection_id")',
    """CREATE TABLE "runlog" (
        "id" {id},
        "run_id" {int} NOT NULL,
        "created_at" {timestamp} NOT NULL,
        "level" VARCHAR(10) NOT NULL,
        "event" VARCHAR(40) NOT NULL,
        "message" TEXT NOT NULL,
        "data" TEXT,
        FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE
    )""",
    'CREATE INDEX "runlog_run_id" ON "runlog" ("run_id")',
    'CREATE INDEX "runlog_run_id_id" ON "runlog" ("run_id", "id")',
)


def statements(dialect):
    """m001's CREATE statements for "sqlite" or "postgres", in order (a table before the tables
    that refer to it)."""
    types = TYPES[dialect]
    return [_one_line(sql.format(**types)) for sql in _STATEMENTS]


def _one_line(sql):
    """The statement on one line, as Peewee wrote it (SQLite keeps a CREATE's text)."""
    sql = re.sub(r"\(\s+", "(", sql)
    sql = re.sub(r",?\s+\)$", ")", sql)
    return re.sub(r"\s+", " ", sql)
