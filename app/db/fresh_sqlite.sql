-- A new SQLite database's schema after the migrations below, made in one step
-- (app/db/fresh.py, migrations.apply). Generated, not edited: python -m tests.fresh_sqlite
-- migration: m001_initial
-- migration: m002_item_progress_indexes
-- migration: m003_item_judge_cost
-- migration: m004_item_updated_at_index
-- migration: m005_item_claimed_until
-- migration: m010_outage
-- migration: m011_item_answer_cut
-- migration: m012_item_judge_history
-- migration: m014_run_target_label
-- migration: m015_ratings
-- migration: m016_judge_jobs
-- migration: m017_votes
-- migration: m018_templates_and_queue
-- migration: m019_item_repeats
-- migration: m020_trends_and_alerts
-- migration: m021_system_samples
-- migration: m022_item_reused_from
-- migration: m023_run_outputs
-- migration: m024_item_claim_indexes
-- migration: m025_item_counts
-- migration: m026_item_sort_indexes
-- migration: m027_claims_across_processes
-- migration: m028_item_difficulty_index
-- migration: m029_item_target_score_index
-- migration: m030_redundant_indexes
-- migration: m031_item_count_writes
-- migration: m032_item_counts_on_postgres
-- migration: m033_pg_indexes_in_id_order
-- migration: m034_pg_run_target_statistics
-- migration: m035_pg_double_precision
-- migration: m036_checks_and_tools
-- migration: m037_alert_metric
-- migration: m038_answer_timing
-- migration: m039_load_steps
-- migration: m040_run_speed
-- migration: m041_accounts
-- migration: m042_labels_by_person
-- migration: m043_kept_aggregates
-- migration: m044_run_records
-- migration: m045_item_figures
-- migration: m047_pending_items
-- migration: m048_item_answered_task

CREATE TABLE "account" ("id" INTEGER NOT NULL PRIMARY KEY, "name" VARCHAR(100) NOT NULL, "role" VARCHAR(10) NOT NULL, "password_hash" VARCHAR(300) NOT NULL, "session_version" INTEGER NOT NULL, "created_at" DATETIME NOT NULL, "updated_at" DATETIME NOT NULL);

CREATE TABLE "alert" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" INTEGER NOT NULL, "template_id" INTEGER, "series" VARCHAR(400) NOT NULL, "provider_name" VARCHAR(100) NOT NULL, "model" VARCHAR(300) NOT NULL, "against" VARCHAR(20) NOT NULL, "against_run_id" INTEGER, "n" INTEGER NOT NULL, "mean_diff" REAL NOT NULL, "drop" REAL NOT NULL, "metric" VARCHAR(20) NOT NULL, "ci_low" REAL, "ci_high" REAL, "wilcoxon_p" REAL, "sign_p" REAL, "threshold" REAL NOT NULL, "message" TEXT NOT NULL, "state" VARCHAR(20) NOT NULL, "created_at" DATETIME NOT NULL, "dismissed_at" DATETIME, "webhook_state" VARCHAR(20), "webhook_attempts" INTEGER NOT NULL, "webhook_next_at" DATETIME, "webhook_claimed_until" DATETIME, "webhook_error" TEXT, "webhook_sent_at" DATETIME, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE, FOREIGN KEY ("template_id") REFERENCES "template" ("id") ON DELETE SET NULL, FOREIGN KEY ("against_run_id") REFERENCES "run" ("id") ON DELETE SET NULL);

CREATE TABLE "apitoken" ("id" INTEGER NOT NULL PRIMARY KEY, "name" VARCHAR(100) NOT NULL, "role" VARCHAR(10) NOT NULL, "token_hash" VARCHAR(64) NOT NULL, "created_at" DATETIME NOT NULL, "last_used_at" DATETIME);

CREATE TABLE "auditentry" ("id" INTEGER NOT NULL PRIMARY KEY, "at" DATETIME NOT NULL, "actor" VARCHAR(200) NOT NULL, "action" VARCHAR(50) NOT NULL, "subject" VARCHAR(300) NOT NULL, "details" TEXT);

CREATE TABLE "baseline" ("id" INTEGER NOT NULL PRIMARY KEY, "collection_id" INTEGER NOT NULL, "run_id" INTEGER NOT NULL, "pinned_at" DATETIME NOT NULL, FOREIGN KEY ("collection_id") REFERENCES "collection" ("id") ON DELETE CASCADE, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE);

CREATE TABLE "collection" ("id" INTEGER NOT NULL PRIMARY KEY, "name" VARCHAR(200) NOT NULL, "description" TEXT NOT NULL, "created_at" DATETIME NOT NULL);

CREATE TABLE "collectiontask" ("id" INTEGER NOT NULL PRIMARY KEY, "collection_id" INTEGER NOT NULL, "task_id" INTEGER NOT NULL, FOREIGN KEY ("collection_id") REFERENCES "collection" ("id") ON DELETE CASCADE, FOREIGN KEY ("task_id") REFERENCES "task" ("id") ON DELETE CASCADE);

CREATE TABLE "item" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" INTEGER NOT NULL, "target_id" INTEGER NOT NULL, "task_id" INTEGER, "task_key" VARCHAR(200) NOT NULL, "category" VARCHAR(100) NOT NULL, "subcategory" VARCHAR(100) NOT NULL, "difficulty" VARCHAR(20) NOT NULL, "question" TEXT NOT NULL, "system_prompt" TEXT, "excellent" TEXT NOT NULL, "good" TEXT NOT NULL, "pass_answer" TEXT NOT NULL, "incorrect_direction" TEXT NOT NULL, "rubric" TEXT, "auto_fail_rules" TEXT, "template_version" VARCHAR(50), "status" VARCHAR(20) NOT NULL, "attempts" INTEGER NOT NULL, "answer_attempts" INTEGER NOT NULL, "first_attempt_at" DATETIME, "last_attempt_at" DATETIME, "next_retry_at" DATETIME, "request_json" TEXT, "response_raw" TEXT, "answer" TEXT, "finish_reason" VARCHAR(50), "time_taken_ms" REAL, "ttft_ms" REAL, "prompt_ms" REAL, "decode_ms" REAL, "load_ms" REAL, "prompt_tokens" INTEGER, "tokens_generated" INTEGER, "tokens_per_second" REAL, "tps_source" VARCHAR(30), "tokens_estimated" INTEGER NOT NULL, "cost_usd" REAL, "cost_source" VARCHAR(30), "context_hash" VARCHAR(64), "answered_at" DATETIME, "judge_request_json" TEXT, "judge_raw" TEXT, "judge_ms" REAL, "evaluation_score" REAL, "evaluation_reason" TEXT, "rubric_scores" TEXT, "auto_fail" INTEGER, "judged_at" DATETIME, "error_stage" VARCHAR(20), "error_msg" TEXT, "created_at" DATETIME NOT NULL, "updated_at" DATETIME NOT NULL, "judge_cost_usd" REAL, "claimed_until" DATETIME, "answer_cut" INTEGER NOT NULL, "judge_history" TEXT, "repeat" INTEGER NOT NULL, "seed" INTEGER, "judge_scores" TEXT, "answer_reused_from" INTEGER, "judgement_reused_from" INTEGER, "claimed_by" VARCHAR(200), "checks" TEXT, "tools" TEXT, "check_results" TEXT, "check_score" REAL, "tool_calls" TEXT, "auto_fail_reason" TEXT, "first_answer_ms" REAL, "last_token_ms" REAL, "sent_ts" REAL, "chunks" INTEGER, "reasoning_tokens" INTEGER, "itl_hist" BLOB, "queue_ms" REAL, step INTEGER NOT NULL DEFAULT 0, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE, FOREIGN KEY ("target_id") REFERENCES "runtarget" ("id") ON DELETE CASCADE, FOREIGN KEY ("task_id") REFERENCES "task" ("id") ON DELETE SET NULL);

CREATE TABLE "item_count" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" INTEGER NOT NULL, "target_id" INTEGER NOT NULL, "status" VARCHAR(20) NOT NULL, "stage" VARCHAR(20) NOT NULL, "n" INTEGER NOT NULL, "answer_ms" REAL NOT NULL, "answer_ms_n" INTEGER NOT NULL, "judge_ms" REAL NOT NULL, "judge_ms_n" INTEGER NOT NULL, "prompt_tokens" INTEGER NOT NULL, "tokens_generated" INTEGER NOT NULL, "cost_usd" REAL NOT NULL, "judge_cost_usd" REAL NOT NULL, "score" REAL NOT NULL, "score_n" INTEGER NOT NULL);

CREATE TABLE "judgecall" ("id" INTEGER NOT NULL PRIMARY KEY, "job_id" INTEGER NOT NULL, "run_id" INTEGER NOT NULL, "status" VARCHAR(20) NOT NULL, "attempts" INTEGER NOT NULL, "first_attempt_at" DATETIME, "last_attempt_at" DATETIME, "next_retry_at" DATETIME, "claimed_until" DATETIME, "claimed_by" VARCHAR(200), "item_id" INTEGER NOT NULL, "other_item_id" INTEGER, "level" VARCHAR(20), "verdict" VARCHAR(10), "score" REAL, "reason" TEXT, "request_json" TEXT, "raw" TEXT, "ms" REAL, "cost_usd" REAL, "error_msg" TEXT, "created_at" DATETIME NOT NULL, "updated_at" DATETIME NOT NULL, FOREIGN KEY ("job_id") REFERENCES "judgejob" ("id") ON DELETE CASCADE, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE, FOREIGN KEY ("item_id") REFERENCES "item" ("id") ON DELETE CASCADE, FOREIGN KEY ("other_item_id") REFERENCES "item" ("id") ON DELETE CASCADE);

CREATE TABLE "judgejob" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" INTEGER NOT NULL, "kind" VARCHAR(20) NOT NULL, "judge_provider_id" INTEGER, "judge_provider_name" VARCHAR(100) NOT NULL, "judge_model" VARCHAR(300) NOT NULL, "judge_params" TEXT, "target_a_id" INTEGER, "target_b_id" INTEGER, "created_at" DATETIME NOT NULL, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE, FOREIGN KEY ("judge_provider_id") REFERENCES "provider" ("id") ON DELETE SET NULL, FOREIGN KEY ("target_a_id") REFERENCES "runtarget" ("id") ON DELETE CASCADE, FOREIGN KEY ("target_b_id") REFERENCES "runtarget" ("id") ON DELETE CASCADE);

CREATE TABLE "labelqueue" ("id" INTEGER NOT NULL PRIMARY KEY, "person" VARCHAR(420) NOT NULL, "seed" INTEGER NOT NULL, "created_at" DATETIME NOT NULL);

CREATE TABLE "lease" ("id" INTEGER NOT NULL PRIMARY KEY, "name" VARCHAR(50) NOT NULL, "holder" VARCHAR(200) NOT NULL, "acquired_at" DATETIME NOT NULL, "heartbeat_at" DATETIME NOT NULL, "expires_at" DATETIME NOT NULL);

CREATE TABLE "outage" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" INTEGER NOT NULL, "provider_id" INTEGER NOT NULL, "provider_name" VARCHAR(100) NOT NULL, "error" VARCHAR(100) NOT NULL, "message" TEXT NOT NULL, "since" DATETIME NOT NULL, "last_try_at" DATETIME NOT NULL, "next_try_at" DATETIME NOT NULL, "probes" INTEGER NOT NULL, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE);

CREATE TABLE "pairtoken" ("id" INTEGER NOT NULL PRIMARY KEY, "token" VARCHAR(64) NOT NULL, "voter" VARCHAR(420) NOT NULL, "left_item_id" INTEGER NOT NULL, "right_item_id" INTEGER NOT NULL, "shown_at" DATETIME NOT NULL, "vote_id" INTEGER, FOREIGN KEY ("left_item_id") REFERENCES "item" ("id") ON DELETE CASCADE, FOREIGN KEY ("right_item_id") REFERENCES "item" ("id") ON DELETE CASCADE, FOREIGN KEY ("vote_id") REFERENCES "vote" ("id") ON DELETE SET NULL);

CREATE TABLE "pendingitems" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" INTEGER NOT NULL, "tasks" TEXT NOT NULL, "target" INTEGER NOT NULL, "next_task" INTEGER NOT NULL, "remaining" INTEGER NOT NULL, "per_target" INTEGER NOT NULL, "created_at" DATETIME NOT NULL, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE);

CREATE TABLE "price" ("id" INTEGER NOT NULL PRIMARY KEY, "provider_name" VARCHAR(100) NOT NULL, "model" VARCHAR(300) NOT NULL, "input_per_1m" REAL NOT NULL, "output_per_1m" REAL NOT NULL, "updated_at" DATETIME NOT NULL);

CREATE TABLE "provider" ("id" INTEGER NOT NULL PRIMARY KEY, "name" VARCHAR(100) NOT NULL, "type" VARCHAR(10) NOT NULL, "base_url" VARCHAR(500) NOT NULL, "models_endpoint" VARCHAR(200) NOT NULL, "inference_endpoint" VARCHAR(200) NOT NULL, "timeout_seconds" REAL NOT NULL, "max_concurrency" INTEGER NOT NULL, "created_at" DATETIME NOT NULL, "updated_at" DATETIME NOT NULL);

CREATE TABLE "providerheader" ("id" INTEGER NOT NULL PRIMARY KEY, "provider_id" INTEGER NOT NULL, "key" VARCHAR(100) NOT NULL, "value" TEXT NOT NULL, "is_secret" INTEGER NOT NULL, FOREIGN KEY ("provider_id") REFERENCES "provider" ("id") ON DELETE CASCADE);

CREATE TABLE "rating" ("id" INTEGER NOT NULL PRIMARY KEY, "item_id" INTEGER NOT NULL, "run_id" INTEGER NOT NULL, "rating" INTEGER, "tags" TEXT, "notes" TEXT NOT NULL, "created_at" DATETIME NOT NULL, "updated_at" DATETIME NOT NULL, "rater" VARCHAR(420) NOT NULL DEFAULT 'human', FOREIGN KEY ("item_id") REFERENCES "item" ("id") ON DELETE CASCADE, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE);

CREATE TABLE "ratinghistory" ("id" INTEGER NOT NULL PRIMARY KEY, "rating_id" INTEGER NOT NULL, "item_id" INTEGER NOT NULL, "rater" VARCHAR(420) NOT NULL, "changed_by" VARCHAR(420) NOT NULL, "changed_at" DATETIME NOT NULL, "action" VARCHAR(10) NOT NULL, "old_rating" INTEGER, "old_tags" TEXT, "old_notes" TEXT NOT NULL, FOREIGN KEY ("item_id") REFERENCES "item" ("id") ON DELETE CASCADE);

CREATE TABLE "ratingtag" ("id" INTEGER NOT NULL PRIMARY KEY, "rating_id" INTEGER NOT NULL, "item_id" INTEGER NOT NULL, "tag" VARCHAR(100) NOT NULL, FOREIGN KEY ("rating_id") REFERENCES "rating" ("id") ON DELETE CASCADE, FOREIGN KEY ("item_id") REFERENCES "item" ("id") ON DELETE CASCADE);

CREATE TABLE "run" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" VARCHAR(200) NOT NULL, "name" VARCHAR(200) NOT NULL, "judge_provider_id" INTEGER, "judge_provider_name" VARCHAR(100) NOT NULL, "judge_model" VARCHAR(300) NOT NULL, "judge_params" TEXT, "status" VARCHAR(20) NOT NULL, "phase" VARCHAR(20) NOT NULL, "control" VARCHAR(20) NOT NULL, "control_reason" TEXT, "settings" TEXT, "dataset_hash" VARCHAR(64), "prompt_hash" VARCHAR(64), "source" VARCHAR(20) NOT NULL, "created_at" DATETIME NOT NULL, "started_at" DATETIME, "finished_at" DATETIME, "updated_at" DATETIME NOT NULL, "template_id" INTEGER REFERENCES "template" ("id") ON DELETE SET NULL, "triggered_by" VARCHAR(50), "trigger_note" TEXT, "queued_at" DATETIME, "outputs" TEXT, tool_version TEXT, command_line TEXT, config_given TEXT, FOREIGN KEY ("judge_provider_id") REFERENCES "provider" ("id") ON DELETE SET NULL);

CREATE TABLE "runaggregate" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" INTEGER NOT NULL, "target_id" INTEGER NOT NULL, "series" VARCHAR(400) NOT NULL, "provider_name" VARCHAR(100) NOT NULL, "model" VARCHAR(300) NOT NULL, "category" VARCHAR(100) NOT NULL, "finished_at" DATETIME NOT NULL, "judge_key" VARCHAR(64) NOT NULL, "judge_label" VARCHAR(400) NOT NULL, "tasks_key" VARCHAR(64), "items" INTEGER NOT NULL, "n" INTEGER NOT NULL, "tasks" INTEGER NOT NULL, "failed" INTEGER NOT NULL, "score" REAL, "ci_low" REAL, "ci_high" REAL, "tokens_per_second" REAL, "ttft_p50_ms" REAL, "time_p50_ms" REAL, "cost_usd" REAL, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE, FOREIGN KEY ("target_id") REFERENCES "runtarget" ("id") ON DELETE CASCADE);

CREATE TABLE "runcollection" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" INTEGER NOT NULL, "collection_id" INTEGER, "collection_name" VARCHAR(200) NOT NULL, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE, FOREIGN KEY ("collection_id") REFERENCES "collection" ("id") ON DELETE SET NULL);

CREATE TABLE "rundigest" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" INTEGER NOT NULL, "finished_at" DATETIME NOT NULL, "judge_key" VARCHAR(64) NOT NULL, "judge_label" VARCHAR(400) NOT NULL, "tasks_key" VARCHAR(64), "task_count" INTEGER NOT NULL, "repeats" INTEGER NOT NULL, "system_peaks" TEXT, "created_at" DATETIME NOT NULL, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE);

CREATE TABLE "runfigures" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" INTEGER NOT NULL, "name" VARCHAR(100) NOT NULL, "stamp" VARCHAR(64) NOT NULL, "figures" TEXT NOT NULL, "computed_at" DATETIME NOT NULL, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE);

CREATE TABLE "runlog" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" INTEGER NOT NULL, "created_at" DATETIME NOT NULL, "level" VARCHAR(10) NOT NULL, "event" VARCHAR(40) NOT NULL, "message" TEXT NOT NULL, "data" TEXT, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE);

CREATE TABLE "runspeed" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" INTEGER NOT NULL, "stamp" VARCHAR(64) NOT NULL, "figures" TEXT NOT NULL, "computed_at" DATETIME NOT NULL, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE);

CREATE TABLE "runtarget" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" INTEGER NOT NULL, "provider_id" INTEGER, "provider_name" VARCHAR(100) NOT NULL, "model" VARCHAR(300) NOT NULL, "params" TEXT, "position" INTEGER NOT NULL, "warmup_ms" REAL, "load_ms" REAL, "warmup_error" TEXT, "label" VARCHAR(300) NOT NULL, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE, FOREIGN KEY ("provider_id") REFERENCES "provider" ("id") ON DELETE SET NULL);

CREATE TABLE "samplechunk" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" INTEGER NOT NULL, "seq" INTEGER NOT NULL, "t_first" REAL NOT NULL, "t_last" REAL NOT NULL, "count" INTEGER NOT NULL, "rows" TEXT NOT NULL, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE);

CREATE TABLE "task" ("id" INTEGER NOT NULL PRIMARY KEY, "task_id" VARCHAR(200) NOT NULL, "category" VARCHAR(100) NOT NULL, "subcategory" VARCHAR(100) NOT NULL, "difficulty" VARCHAR(20) NOT NULL, "question" TEXT NOT NULL, "system_prompt" TEXT, "excellent" TEXT NOT NULL, "good" TEXT NOT NULL, "pass_answer" TEXT NOT NULL, "incorrect_direction" TEXT NOT NULL, "rubric" TEXT, "auto_fail" TEXT, "tags" TEXT, "vars" TEXT, "template_version" VARCHAR(50), "created_at" DATETIME NOT NULL, "updated_at" DATETIME NOT NULL, "checks" TEXT, "tools" TEXT);

CREATE TABLE "template" ("id" INTEGER NOT NULL PRIMARY KEY, "name" VARCHAR(200) NOT NULL, "description" TEXT NOT NULL, "spec" TEXT NOT NULL, "regression_threshold" REAL NOT NULL, "webhook_url" TEXT, "cron" VARCHAR(100), "timezone" VARCHAR(64) NOT NULL, "schedule_enabled" INTEGER NOT NULL, "next_fire_at" DATETIME, "last_fired_at" DATETIME, "last_error" TEXT, "created_at" DATETIME NOT NULL, "updated_at" DATETIME NOT NULL);

CREATE TABLE "vote" ("id" INTEGER NOT NULL PRIMARY KEY, "left_item_id" INTEGER NOT NULL, "right_item_id" INTEGER NOT NULL, "item_low" INTEGER NOT NULL, "item_high" INTEGER NOT NULL, "left_target_id" INTEGER NOT NULL, "right_target_id" INTEGER NOT NULL, "task_key" VARCHAR(200) NOT NULL, "winner" VARCHAR(10) NOT NULL, "winner_target_id" INTEGER, "source" VARCHAR(10) NOT NULL, "voter" VARCHAR(420) NOT NULL, "inconsistent" INTEGER NOT NULL, "job_id" INTEGER, "reason" TEXT, "created_at" DATETIME NOT NULL, FOREIGN KEY ("left_item_id") REFERENCES "item" ("id") ON DELETE CASCADE, FOREIGN KEY ("right_item_id") REFERENCES "item" ("id") ON DELETE CASCADE, FOREIGN KEY ("left_target_id") REFERENCES "runtarget" ("id") ON DELETE CASCADE, FOREIGN KEY ("right_target_id") REFERENCES "runtarget" ("id") ON DELETE CASCADE, FOREIGN KEY ("winner_target_id") REFERENCES "runtarget" ("id") ON DELETE CASCADE, FOREIGN KEY ("job_id") REFERENCES "judgejob" ("id") ON DELETE SET NULL);

CREATE TABLE "votehistory" ("id" INTEGER NOT NULL PRIMARY KEY, "vote_id" INTEGER NOT NULL, "item_low" INTEGER NOT NULL, "item_high" INTEGER NOT NULL, "voter" VARCHAR(420) NOT NULL, "changed_by" VARCHAR(420) NOT NULL, "changed_at" DATETIME NOT NULL, "action" VARCHAR(10) NOT NULL, "old_winner" VARCHAR(10) NOT NULL, "old_left_item" INTEGER NOT NULL, "old_right_item" INTEGER NOT NULL);

CREATE UNIQUE INDEX "account_name" ON "account" ("name");

CREATE INDEX "alert_against_run_id" ON "alert" ("against_run_id");

CREATE INDEX "alert_run_id" ON "alert" ("run_id");

CREATE UNIQUE INDEX "alert_run_id_series_against_metric" ON "alert" ("run_id", "series", "against", "metric");

CREATE INDEX "alert_state" ON "alert" ("state");

CREATE INDEX "alert_template_id" ON "alert" ("template_id");

CREATE UNIQUE INDEX "apitoken_name" ON "apitoken" ("name");

CREATE UNIQUE INDEX "apitoken_token_hash" ON "apitoken" ("token_hash");

CREATE INDEX "auditentry_at" ON "auditentry" ("at");

CREATE UNIQUE INDEX "baseline_collection_id" ON "baseline" ("collection_id");

CREATE INDEX "baseline_run_id" ON "baseline" ("run_id");

CREATE UNIQUE INDEX "collection_name" ON "collection" ("name");

CREATE INDEX "collectiontask_collection_id" ON "collectiontask" ("collection_id");

CREATE UNIQUE INDEX "collectiontask_collection_id_task_id" ON "collectiontask" ("collection_id", "task_id");

CREATE INDEX "collectiontask_task_id" ON "collectiontask" ("task_id");

CREATE INDEX item_answered_at ON item (run_id, answered_at) WHERE answered_at IS NOT NULL;

CREATE INDEX item_answered_task ON item (run_id, target_id, task_key, answered_at) WHERE answered_at IS NOT NULL;

CREATE INDEX item_claim_judge ON item (run_id) WHERE status = 'WAITING_FOR_JUDGE';

CREATE INDEX item_claim_new ON item (run_id, target_id) WHERE status = 'NEW';

CREATE INDEX item_claimed_until ON item (run_id, claimed_until) WHERE claimed_until IS NOT NULL;

CREATE INDEX "item_context_hash" ON "item" ("context_hash");

CREATE INDEX item_figures ON item (run_id, status, error_stage, target_id, category, difficulty, tps_source, evaluation_score, time_taken_ms, ttft_ms, tokens_per_second, cost_usd, prompt_tokens, tokens_generated, answered_at);

CREATE INDEX item_judged_at ON item (run_id, judged_at) WHERE judged_at IS NOT NULL;

CREATE INDEX item_next_retry_at ON item (run_id, next_retry_at) WHERE next_retry_at IS NOT NULL;

CREATE INDEX "item_run_id" ON "item" ("run_id");

CREATE INDEX "item_run_id_category" ON "item" ("run_id", "category");

CREATE INDEX item_run_id_category_task_key ON item (run_id, category, task_key);

CREATE INDEX item_run_id_cost_usd ON item (run_id, cost_usd);

CREATE INDEX item_run_id_difficulty_task_key ON item (run_id, difficulty, task_key);

CREATE INDEX "item_run_id_evaluation_score" ON "item" ("run_id", "evaluation_score");

CREATE INDEX item_run_id_status ON item (run_id, status);

CREATE INDEX item_run_id_target_id_evaluation_score ON item (run_id, target_id, evaluation_score);

CREATE INDEX "item_run_id_target_id_task_key" ON "item" ("run_id", "target_id", "task_key");

CREATE INDEX item_run_id_task_key ON item (run_id, task_key);

CREATE INDEX "item_run_id_time_taken_ms" ON "item" ("run_id", "time_taken_ms");

CREATE INDEX item_run_id_tokens_generated ON item (run_id, tokens_generated);

CREATE INDEX "item_run_id_tokens_per_second" ON "item" ("run_id", "tokens_per_second");

CREATE INDEX item_run_id_ttft_ms ON item (run_id, ttft_ms);

CREATE INDEX item_run_id_updated_at_tried ON item (run_id, updated_at) WHERE last_attempt_at IS NOT NULL;

CREATE INDEX item_target_answered_at ON item (run_id, target_id, answered_at) WHERE answered_at IS NOT NULL;

CREATE INDEX "item_target_id" ON "item" ("target_id");

CREATE INDEX "item_task_id" ON "item" ("task_id");

CREATE UNIQUE INDEX "itemcount_run_id_target_id_status_stage" ON "item_count" ("run_id", "target_id", "status", "stage");

CREATE INDEX "judgecall_item_id" ON "judgecall" ("item_id");

CREATE INDEX "judgecall_job_id" ON "judgecall" ("job_id");

CREATE INDEX "judgecall_job_id_status" ON "judgecall" ("job_id", "status");

CREATE INDEX "judgecall_other_item_id" ON "judgecall" ("other_item_id");

CREATE INDEX "judgecall_run_id" ON "judgecall" ("run_id");

CREATE INDEX "judgecall_run_id_status_job_id_next_retry_at" ON "judgecall" ("run_id", "status", "job_id", "next_retry_at");

CREATE INDEX "judgejob_judge_provider_id" ON "judgejob" ("judge_provider_id");

CREATE INDEX "judgejob_run_id" ON "judgejob" ("run_id");

CREATE INDEX "judgejob_target_a_id" ON "judgejob" ("target_a_id");

CREATE INDEX "judgejob_target_b_id" ON "judgejob" ("target_b_id");

CREATE UNIQUE INDEX "labelqueue_person" ON "labelqueue" ("person");

CREATE UNIQUE INDEX "lease_name" ON "lease" ("name");

CREATE INDEX "outage_run_id" ON "outage" ("run_id");

CREATE UNIQUE INDEX "outage_run_id_provider_id" ON "outage" ("run_id", "provider_id");

CREATE INDEX "pairtoken_left_item_id" ON "pairtoken" ("left_item_id");

CREATE INDEX "pairtoken_right_item_id" ON "pairtoken" ("right_item_id");

CREATE UNIQUE INDEX "pairtoken_token" ON "pairtoken" ("token");

CREATE INDEX "pairtoken_vote_id" ON "pairtoken" ("vote_id");

CREATE INDEX "pairtoken_voter_left_item_id_right_item_id" ON "pairtoken" ("voter", "left_item_id", "right_item_id");

CREATE UNIQUE INDEX "pendingitems_run_id" ON "pendingitems" ("run_id");

CREATE UNIQUE INDEX "price_provider_name_model" ON "price" ("provider_name", "model");

CREATE UNIQUE INDEX "provider_name" ON "provider" ("name");

CREATE INDEX "providerheader_provider_id" ON "providerheader" ("provider_id");

CREATE UNIQUE INDEX "providerheader_provider_id_key" ON "providerheader" ("provider_id", "key");

CREATE UNIQUE INDEX "rating_item_id_rater" ON "rating" ("item_id", "rater");

CREATE INDEX "rating_item_id_rating" ON "rating" ("item_id", "rating");

CREATE INDEX "rating_run_id" ON "rating" ("run_id");

CREATE INDEX "rating_run_id_rating" ON "rating" ("run_id", "rating");

CREATE INDEX "ratinghistory_item_id" ON "ratinghistory" ("item_id");

CREATE INDEX "ratingtag_item_id" ON "ratingtag" ("item_id");

CREATE INDEX "ratingtag_rating_id" ON "ratingtag" ("rating_id");

CREATE UNIQUE INDEX "ratingtag_rating_id_tag" ON "ratingtag" ("rating_id", "tag");

CREATE INDEX "ratingtag_tag_item_id" ON "ratingtag" ("tag", "item_id");

CREATE INDEX "run_control" ON "run" ("control");

CREATE INDEX "run_created_at" ON "run" ("created_at");

CREATE INDEX "run_judge_provider_id" ON "run" ("judge_provider_id");

CREATE UNIQUE INDEX "run_run_id" ON "run" ("run_id");

CREATE INDEX "run_status" ON "run" ("status");

CREATE INDEX "run_template_id" ON "run" ("template_id");

CREATE INDEX "runaggregate_category_finished_at" ON "runaggregate" ("category", "finished_at");

CREATE INDEX "runaggregate_run_id" ON "runaggregate" ("run_id");

CREATE INDEX "runaggregate_run_id_category" ON "runaggregate" ("run_id", "category");

CREATE INDEX "runaggregate_target_id" ON "runaggregate" ("target_id");

CREATE INDEX "runcollection_collection_id" ON "runcollection" ("collection_id");

CREATE INDEX "runcollection_run_id" ON "runcollection" ("run_id");

CREATE INDEX "rundigest_finished_at" ON "rundigest" ("finished_at");

CREATE UNIQUE INDEX "rundigest_run_id" ON "rundigest" ("run_id");

CREATE UNIQUE INDEX "runfigures_run_id_name" ON "runfigures" ("run_id", "name");

CREATE INDEX "runlog_run_id_id" ON "runlog" ("run_id", "id");

CREATE UNIQUE INDEX "runspeed_run_id" ON "runspeed" ("run_id");

CREATE INDEX "runtarget_provider_id" ON "runtarget" ("provider_id");

CREATE INDEX "runtarget_run_id" ON "runtarget" ("run_id");

CREATE UNIQUE INDEX runtarget_run_id_label ON runtarget (run_id, label);

CREATE INDEX "samplechunk_run_id" ON "samplechunk" ("run_id");

CREATE UNIQUE INDEX "samplechunk_run_id_seq" ON "samplechunk" ("run_id", "seq");

CREATE INDEX "task_category" ON "task" ("category");

CREATE UNIQUE INDEX "task_task_id" ON "task" ("task_id");

CREATE UNIQUE INDEX "template_name" ON "template" ("name");

CREATE INDEX "template_next_fire_at" ON "template" ("next_fire_at");

CREATE UNIQUE INDEX "vote_item_low_item_high_voter" ON "vote" ("item_low", "item_high", "voter");

CREATE INDEX "vote_job_id" ON "vote" ("job_id");

CREATE INDEX "vote_left_item_id" ON "vote" ("left_item_id");

CREATE INDEX "vote_left_target_id" ON "vote" ("left_target_id");

CREATE INDEX "vote_left_target_id_right_target_id_source_winner" ON "vote" ("left_target_id", "right_target_id", "source", "winner");

CREATE INDEX "vote_right_item_id" ON "vote" ("right_item_id");

CREATE INDEX "vote_right_target_id" ON "vote" ("right_target_id");

CREATE INDEX "vote_right_target_id_source" ON "vote" ("right_target_id", "source");

CREATE INDEX "vote_winner_target_id" ON "vote" ("winner_target_id");

CREATE INDEX "votehistory_voter_changed_at" ON "votehistory" ("voter", "changed_at");

CREATE TRIGGER item_count_change AFTER UPDATE OF time_taken_ms, judge_ms, prompt_tokens, tokens_generated, cost_usd, judge_cost_usd, evaluation_score ON item WHEN NOT (OLD.run_id IS NOT NEW.run_id OR OLD.target_id IS NOT NEW.target_id OR OLD.status IS NOT NEW.status OR COALESCE(OLD.error_stage, '') IS NOT COALESCE(NEW.error_stage, '')) AND (OLD.time_taken_ms IS NOT NEW.time_taken_ms OR OLD.judge_ms IS NOT NEW.judge_ms OR OLD.prompt_tokens IS NOT NEW.prompt_tokens OR OLD.tokens_generated IS NOT NEW.tokens_generated OR OLD.cost_usd IS NOT NEW.cost_usd OR OLD.judge_cost_usd IS NOT NEW.judge_cost_usd OR OLD.evaluation_score IS NOT NEW.evaluation_score) BEGIN UPDATE item_count SET answer_ms = answer_ms + (COALESCE(NEW.time_taken_ms, 0)) - (COALESCE(OLD.time_taken_ms, 0)), answer_ms_n = answer_ms_n + ((NEW.time_taken_ms IS NOT NULL)) - ((OLD.time_taken_ms IS NOT NULL)), judge_ms = judge_ms + (COALESCE(NEW.judge_ms, 0)) - (COALESCE(OLD.judge_ms, 0)), judge_ms_n = judge_ms_n + ((NEW.judge_ms IS NOT NULL)) - ((OLD.judge_ms IS NOT NULL)), prompt_tokens = prompt_tokens + (COALESCE(NEW.prompt_tokens, 0)) - (COALESCE(OLD.prompt_tokens, 0)), tokens_generated = tokens_generated + (COALESCE(NEW.tokens_generated, 0)) - (COALESCE(OLD.tokens_generated, 0)), cost_usd = cost_usd + (COALESCE(NEW.cost_usd, 0)) - (COALESCE(OLD.cost_usd, 0)), judge_cost_usd = judge_cost_usd + (COALESCE(NEW.judge_cost_usd, 0)) - (COALESCE(OLD.judge_cost_usd, 0)), score = score + (COALESCE(NEW.evaluation_score, 0)) - (COALESCE(OLD.evaluation_score, 0)), score_n = score_n + ((NEW.evaluation_score IS NOT NULL)) - ((OLD.evaluation_score IS NOT NULL)) WHERE run_id = NEW.run_id AND target_id = NEW.target_id AND status = NEW.status AND stage = COALESCE(NEW.error_stage, ''); END;

CREATE TRIGGER item_count_delete AFTER DELETE ON item BEGIN UPDATE item_count SET n = n - 1, answer_ms = answer_ms - COALESCE(OLD.time_taken_ms, 0), answer_ms_n = answer_ms_n - (OLD.time_taken_ms IS NOT NULL), judge_ms = judge_ms - COALESCE(OLD.judge_ms, 0), judge_ms_n = judge_ms_n - (OLD.judge_ms IS NOT NULL), prompt_tokens = prompt_tokens - COALESCE(OLD.prompt_tokens, 0), tokens_generated = tokens_generated - COALESCE(OLD.tokens_generated, 0), cost_usd = cost_usd - COALESCE(OLD.cost_usd, 0), judge_cost_usd = judge_cost_usd - COALESCE(OLD.judge_cost_usd, 0), score = score - COALESCE(OLD.evaluation_score, 0), score_n = score_n - (OLD.evaluation_score IS NOT NULL) WHERE run_id = OLD.run_id AND target_id = OLD.target_id AND status = OLD.status AND stage = COALESCE(OLD.error_stage, ''); END;

CREATE TRIGGER item_count_insert AFTER INSERT ON item BEGIN INSERT INTO item_count (run_id, target_id, status, stage, n, answer_ms, answer_ms_n, judge_ms, judge_ms_n, prompt_tokens, tokens_generated, cost_usd, judge_cost_usd, score, score_n) VALUES (NEW.run_id, NEW.target_id, NEW.status, COALESCE(NEW.error_stage, ''), 1, COALESCE(NEW.time_taken_ms, 0), (NEW.time_taken_ms IS NOT NULL), COALESCE(NEW.judge_ms, 0), (NEW.judge_ms IS NOT NULL), COALESCE(NEW.prompt_tokens, 0), COALESCE(NEW.tokens_generated, 0), COALESCE(NEW.cost_usd, 0), COALESCE(NEW.judge_cost_usd, 0), COALESCE(NEW.evaluation_score, 0), (NEW.evaluation_score IS NOT NULL)) ON CONFLICT (run_id, target_id, status, stage) DO UPDATE SET n = n + excluded.n, answer_ms = answer_ms + excluded.answer_ms, answer_ms_n = answer_ms_n + excluded.answer_ms_n, judge_ms = judge_ms + excluded.judge_ms, judge_ms_n = judge_ms_n + excluded.judge_ms_n, prompt_tokens = prompt_tokens + excluded.prompt_tokens, tokens_generated = tokens_generated + excluded.tokens_generated, cost_usd = cost_usd + excluded.cost_usd, judge_cost_usd = judge_cost_usd + excluded.judge_cost_usd, score = score + excluded.score, score_n = score_n + excluded.score_n; END;

CREATE TRIGGER item_count_move AFTER UPDATE OF run_id, target_id, status, error_stage, time_taken_ms, judge_ms, prompt_tokens, tokens_generated, cost_usd, judge_cost_usd, evaluation_score ON item WHEN OLD.run_id IS NOT NEW.run_id OR OLD.target_id IS NOT NEW.target_id OR OLD.status IS NOT NEW.status OR COALESCE(OLD.error_stage, '') IS NOT COALESCE(NEW.error_stage, '') BEGIN UPDATE item_count SET n = n - 1, answer_ms = answer_ms - COALESCE(OLD.time_taken_ms, 0), answer_ms_n = answer_ms_n - (OLD.time_taken_ms IS NOT NULL), judge_ms = judge_ms - COALESCE(OLD.judge_ms, 0), judge_ms_n = judge_ms_n - (OLD.judge_ms IS NOT NULL), prompt_tokens = prompt_tokens - COALESCE(OLD.prompt_tokens, 0), tokens_generated = tokens_generated - COALESCE(OLD.tokens_generated, 0), cost_usd = cost_usd - COALESCE(OLD.cost_usd, 0), judge_cost_usd = judge_cost_usd - COALESCE(OLD.judge_cost_usd, 0), score = score - COALESCE(OLD.evaluation_score, 0), score_n = score_n - (OLD.evaluation_score IS NOT NULL) WHERE run_id = OLD.run_id AND target_id = OLD.target_id AND status = OLD.status AND stage = COALESCE(OLD.error_stage, ''); UPDATE item_count SET n = n + 1, answer_ms = answer_ms + COALESCE(NEW.time_taken_ms, 0), answer_ms_n = answer_ms_n + (NEW.time_taken_ms IS NOT NULL), judge_ms = judge_ms + COALESCE(NEW.judge_ms, 0), judge_ms_n = judge_ms_n + (NEW.judge_ms IS NOT NULL), prompt_tokens = prompt_tokens + COALESCE(NEW.prompt_tokens, 0), tokens_generated = tokens_generated + COALESCE(NEW.tokens_generated, 0), cost_usd = cost_usd + COALESCE(NEW.cost_usd, 0), judge_cost_usd = judge_cost_usd + COALESCE(NEW.judge_cost_usd, 0), score = score + COALESCE(NEW.evaluation_score, 0), score_n = score_n + (NEW.evaluation_score IS NOT NULL) WHERE run_id = NEW.run_id AND target_id = NEW.target_id AND status = NEW.status AND stage = COALESCE(NEW.error_stage, ''); INSERT INTO item_count (run_id, target_id, status, stage, n, answer_ms, answer_ms_n, judge_ms, judge_ms_n, prompt_tokens, tokens_generated, cost_usd, judge_cost_usd, score, score_n) SELECT NEW.run_id, NEW.target_id, NEW.status, COALESCE(NEW.error_stage, ''), 1, COALESCE(NEW.time_taken_ms, 0), (NEW.time_taken_ms IS NOT NULL), COALESCE(NEW.judge_ms, 0), (NEW.judge_ms IS NOT NULL), COALESCE(NEW.prompt_tokens, 0), COALESCE(NEW.tokens_generated, 0), COALESCE(NEW.cost_usd, 0), COALESCE(NEW.judge_cost_usd, 0), COALESCE(NEW.evaluation_score, 0), (NEW.evaluation_score IS NOT NULL) WHERE NOT EXISTS (SELECT 1 FROM item_count WHERE run_id = NEW.run_id AND target_id = NEW.target_id AND status = NEW.status AND stage = COALESCE(NEW.error_stage, '')); END;

CREATE TRIGGER item_count_run_delete AFTER DELETE ON run BEGIN DELETE FROM item_count WHERE run_id = OLD.id; END;
