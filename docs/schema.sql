-- llmbench's database schema: what a fresh database holds after every migration.
-- Generated, not edited: python -m tests.schema_doc > docs/schema.sql

-- SQLite

CREATE TABLE _migrations (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
);
CREATE TABLE account (
    id INTEGER PRIMARY KEY,
    name VARCHAR(100) NOT NULL,
    role VARCHAR(10) NOT NULL,
    password_hash VARCHAR(300) NOT NULL,
    session_version INTEGER NOT NULL,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE TABLE alert (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    template_id INTEGER,
    series VARCHAR(400) NOT NULL,
    provider_name VARCHAR(100) NOT NULL,
    model VARCHAR(300) NOT NULL,
    against VARCHAR(20) NOT NULL,
    against_run_id INTEGER,
    n INTEGER NOT NULL,
    mean_diff REAL NOT NULL,
    drop REAL NOT NULL,
    metric VARCHAR(20) NOT NULL,
    ci_low REAL,
    ci_high REAL,
    wilcoxon_p REAL,
    sign_p REAL,
    threshold REAL NOT NULL,
    message TEXT NOT NULL,
    state VARCHAR(20) NOT NULL,
    created_at DATETIME NOT NULL,
    dismissed_at DATETIME,
    webhook_state VARCHAR(20),
    webhook_attempts INTEGER NOT NULL,
    webhook_next_at DATETIME,
    webhook_claimed_until DATETIME,
    webhook_error TEXT,
    webhook_sent_at DATETIME,
    FOREIGN KEY (against_run_id) REFERENCES run(id) ON DELETE SET NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE,
    FOREIGN KEY (template_id) REFERENCES template(id) ON DELETE SET NULL
);
CREATE TABLE apitoken (
    id INTEGER PRIMARY KEY,
    name VARCHAR(100) NOT NULL,
    role VARCHAR(10) NOT NULL,
    token_hash VARCHAR(64) NOT NULL,
    created_at DATETIME NOT NULL,
    last_used_at DATETIME
);
CREATE TABLE auditentry (
    id INTEGER PRIMARY KEY,
    at DATETIME NOT NULL,
    actor VARCHAR(200) NOT NULL,
    action VARCHAR(50) NOT NULL,
    subject VARCHAR(300) NOT NULL,
    details TEXT
);
CREATE TABLE baseline (
    id INTEGER PRIMARY KEY,
    collection_id INTEGER NOT NULL,
    run_id INTEGER NOT NULL,
    pinned_at DATETIME NOT NULL,
    FOREIGN KEY (collection_id) REFERENCES collection(id) ON DELETE CASCADE,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE collection (
    id INTEGER PRIMARY KEY,
    name VARCHAR(200) NOT NULL,
    description TEXT NOT NULL,
    created_at DATETIME NOT NULL
);
CREATE TABLE collectiontask (
    id INTEGER PRIMARY KEY,
    collection_id INTEGER NOT NULL,
    task_id INTEGER NOT NULL,
    FOREIGN KEY (collection_id) REFERENCES collection(id) ON DELETE CASCADE,
    FOREIGN KEY (task_id) REFERENCES task(id) ON DELETE CASCADE
);
CREATE TABLE item (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    target_id INTEGER NOT NULL,
    task_id INTEGER,
    task_key VARCHAR(200) NOT NULL,
    category VARCHAR(100) NOT NULL,
    subcategory VARCHAR(100) NOT NULL,
    difficulty VARCHAR(20) NOT NULL,
    question TEXT NOT NULL,
    system_prompt TEXT,
    excellent TEXT NOT NULL,
    good TEXT NOT NULL,
    pass_answer TEXT NOT NULL,
    incorrect_direction TEXT NOT NULL,
    rubric TEXT,
    auto_fail_rules TEXT,
    template_version VARCHAR(50),
    status VARCHAR(20) NOT NULL,
    attempts INTEGER NOT NULL,
    answer_attempts INTEGER NOT NULL,
    first_attempt_at DATETIME,
    last_attempt_at DATETIME,
    next_retry_at DATETIME,
    request_json TEXT,
    response_raw TEXT,
    answer TEXT,
    finish_reason VARCHAR(50),
    time_taken_ms REAL,
    ttft_ms REAL,
    prompt_ms REAL,
    decode_ms REAL,
    load_ms REAL,
    prompt_tokens INTEGER,
    tokens_generated INTEGER,
    tokens_per_second REAL,
    tps_source VARCHAR(30),
    tokens_estimated INTEGER NOT NULL,
    cost_usd REAL,
    cost_source VARCHAR(30),
    context_hash VARCHAR(64),
    answered_at DATETIME,
    judge_request_json TEXT,
    judge_raw TEXT,
    judge_ms REAL,
    evaluation_score REAL,
    evaluation_reason TEXT,
    rubric_scores TEXT,
    auto_fail INTEGER,
    judged_at DATETIME,
    error_stage VARCHAR(20),
    error_msg TEXT,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    judge_cost_usd REAL,
    claimed_until DATETIME,
    answer_cut INTEGER NOT NULL,
    judge_history TEXT,
    repeat INTEGER NOT NULL,
    seed INTEGER,
    judge_scores TEXT,
    answer_reused_from INTEGER,
    judgement_reused_from INTEGER,
    claimed_by VARCHAR(200),
    checks TEXT,
    tools TEXT,
    check_results TEXT,
    check_score REAL,
    tool_calls TEXT,
    auto_fail_reason TEXT,
    first_answer_ms REAL,
    last_token_ms REAL,
    sent_ts REAL,
    chunks INTEGER,
    reasoning_tokens INTEGER,
    itl_hist BLOB,
    queue_ms REAL,
    step INTEGER NOT NULL DEFAULT 0,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE,
    FOREIGN KEY (target_id) REFERENCES runtarget(id) ON DELETE CASCADE,
    FOREIGN KEY (task_id) REFERENCES task(id) ON DELETE SET NULL
);
CREATE TABLE item_count (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    target_id INTEGER NOT NULL,
    status VARCHAR(20) NOT NULL,
    stage VARCHAR(20) NOT NULL,
    n INTEGER NOT NULL,
    answer_ms REAL NOT NULL,
    answer_ms_n INTEGER NOT NULL,
    judge_ms REAL NOT NULL,
    judge_ms_n INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    tokens_generated INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    judge_cost_usd REAL NOT NULL,
    score REAL NOT NULL,
    score_n INTEGER NOT NULL
);
CREATE TABLE judgecall (
    id INTEGER PRIMARY KEY,
    job_id INTEGER NOT NULL,
    run_id INTEGER NOT NULL,
    status VARCHAR(20) NOT NULL,
    attempts INTEGER NOT NULL,
    first_attempt_at DATETIME,
    last_attempt_at DATETIME,
    next_retry_at DATETIME,
    claimed_until DATETIME,
    claimed_by VARCHAR(200),
    item_id INTEGER NOT NULL,
    other_item_id INTEGER,
    level VARCHAR(20),
    verdict VARCHAR(10),
    score REAL,
    reason TEXT,
    request_json TEXT,
    raw TEXT,
    ms REAL,
    cost_usd REAL,
    error_msg TEXT,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    FOREIGN KEY (item_id) REFERENCES item(id) ON DELETE CASCADE,
    FOREIGN KEY (job_id) REFERENCES judgejob(id) ON DELETE CASCADE,
    FOREIGN KEY (other_item_id) REFERENCES item(id) ON DELETE CASCADE,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE judgejob (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    kind VARCHAR(20) NOT NULL,
    judge_provider_id INTEGER,
    judge_provider_name VARCHAR(100) NOT NULL,
    judge_model VARCHAR(300) NOT NULL,
    judge_params TEXT,
    target_a_id INTEGER,
    target_b_id INTEGER,
    created_at DATETIME NOT NULL,
    FOREIGN KEY (judge_provider_id) REFERENCES provider(id) ON DELETE SET NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE,
    FOREIGN KEY (target_a_id) REFERENCES runtarget(id) ON DELETE CASCADE,
    FOREIGN KEY (target_b_id) REFERENCES runtarget(id) ON DELETE CASCADE
);
CREATE TABLE labelqueue (
    id INTEGER PRIMARY KEY,
    person VARCHAR(420) NOT NULL,
    seed INTEGER NOT NULL,
    created_at DATETIME NOT NULL
);
CREATE TABLE lease (
    id INTEGER PRIMARY KEY,
    name VARCHAR(50) NOT NULL,
    holder VARCHAR(200) NOT NULL,
    acquired_at DATETIME NOT NULL,
    heartbeat_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL
);
CREATE TABLE outage (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    provider_id INTEGER NOT NULL,
    provider_name VARCHAR(100) NOT NULL,
    error VARCHAR(100) NOT NULL,
    message TEXT NOT NULL,
    since DATETIME NOT NULL,
    last_try_at DATETIME NOT NULL,
    next_try_at DATETIME NOT NULL,
    probes INTEGER NOT NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE pairtoken (
    id INTEGER PRIMARY KEY,
    token VARCHAR(64) NOT NULL,
    voter VARCHAR(420) NOT NULL,
    left_item_id INTEGER NOT NULL,
    right_item_id INTEGER NOT NULL,
    shown_at DATETIME NOT NULL,
    vote_id INTEGER,
    FOREIGN KEY (left_item_id) REFERENCES item(id) ON DELETE CASCADE,
    FOREIGN KEY (right_item_id) REFERENCES item(id) ON DELETE CASCADE,
    FOREIGN KEY (vote_id) REFERENCES vote(id) ON DELETE SET NULL
);
CREATE TABLE pendingitems (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    tasks TEXT NOT NULL,
    target INTEGER NOT NULL,
    next_task INTEGER NOT NULL,
    remaining INTEGER NOT NULL,
    per_target INTEGER NOT NULL,
    created_at DATETIME NOT NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE price (
    id INTEGER PRIMARY KEY,
    provider_name VARCHAR(100) NOT NULL,
    model VARCHAR(300) NOT NULL,
    input_per_1m REAL NOT NULL,
    output_per_1m REAL NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE TABLE provider (
    id INTEGER PRIMARY KEY,
    name VARCHAR(100) NOT NULL,
    type VARCHAR(10) NOT NULL,
    base_url VARCHAR(500) NOT NULL,
    models_endpoint VARCHAR(200) NOT NULL,
    inference_endpoint VARCHAR(200) NOT NULL,
    timeout_seconds REAL NOT NULL,
    max_concurrency INTEGER NOT NULL,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE TABLE providerheader (
    id INTEGER PRIMARY KEY,
    provider_id INTEGER NOT NULL,
    key VARCHAR(100) NOT NULL,
    value TEXT NOT NULL,
    is_secret INTEGER NOT NULL,
    FOREIGN KEY (provider_id) REFERENCES provider(id) ON DELETE CASCADE
);
CREATE TABLE rating (
    id INTEGER PRIMARY KEY,
    item_id INTEGER NOT NULL,
    run_id INTEGER NOT NULL,
    rating INTEGER,
    tags TEXT,
    notes TEXT NOT NULL,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    rater VARCHAR(420) NOT NULL DEFAULT 'human',
    FOREIGN KEY (item_id) REFERENCES item(id) ON DELETE CASCADE,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE ratinghistory (
    id INTEGER PRIMARY KEY,
    rating_id INTEGER NOT NULL,
    item_id INTEGER NOT NULL,
    rater VARCHAR(420) NOT NULL,
    changed_by VARCHAR(420) NOT NULL,
    changed_at DATETIME NOT NULL,
    action VARCHAR(10) NOT NULL,
    old_rating INTEGER,
    old_tags TEXT,
    old_notes TEXT NOT NULL,
    FOREIGN KEY (item_id) REFERENCES item(id) ON DELETE CASCADE
);
CREATE TABLE ratingtag (
    id INTEGER PRIMARY KEY,
    rating_id INTEGER NOT NULL,
    item_id INTEGER NOT NULL,
    tag VARCHAR(100) NOT NULL,
    FOREIGN KEY (item_id) REFERENCES item(id) ON DELETE CASCADE,
    FOREIGN KEY (rating_id) REFERENCES rating(id) ON DELETE CASCADE
);
CREATE TABLE run (
    id INTEGER PRIMARY KEY,
    run_id VARCHAR(200) NOT NULL,
    name VARCHAR(200) NOT NULL,
    judge_provider_id INTEGER,
    judge_provider_name VARCHAR(100) NOT NULL,
    judge_model VARCHAR(300) NOT NULL,
    judge_params TEXT,
    status VARCHAR(20) NOT NULL,
    phase VARCHAR(20) NOT NULL,
    control VARCHAR(20) NOT NULL,
    control_reason TEXT,
    settings TEXT,
    dataset_hash VARCHAR(64),
    prompt_hash VARCHAR(64),
    source VARCHAR(20) NOT NULL,
    created_at DATETIME NOT NULL,
    started_at DATETIME,
    finished_at DATETIME,
    updated_at DATETIME NOT NULL,
    template_id INTEGER,
    triggered_by VARCHAR(50),
    trigger_note TEXT,
    queued_at DATETIME,
    outputs TEXT,
    tool_version TEXT,
    command_line TEXT,
    config_given TEXT,
    FOREIGN KEY (judge_provider_id) REFERENCES provider(id) ON DELETE SET NULL,
    FOREIGN KEY (template_id) REFERENCES template(id) ON DELETE SET NULL
);
CREATE TABLE runaggregate (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    target_id INTEGER NOT NULL,
    series VARCHAR(400) NOT NULL,
    provider_name VARCHAR(100) NOT NULL,
    model VARCHAR(300) NOT NULL,
    category VARCHAR(100) NOT NULL,
    finished_at DATETIME NOT NULL,
    judge_key VARCHAR(64) NOT NULL,
    judge_label VARCHAR(400) NOT NULL,
    tasks_key VARCHAR(64),
    items INTEGER NOT NULL,
    n INTEGER NOT NULL,
    tasks INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    score REAL,
    ci_low REAL,
    ci_high REAL,
    tokens_per_second REAL,
    ttft_p50_ms REAL,
    time_p50_ms REAL,
    cost_usd REAL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE,
    FOREIGN KEY (target_id) REFERENCES runtarget(id) ON DELETE CASCADE
);
CREATE TABLE runcollection (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    collection_id INTEGER,
    collection_name VARCHAR(200) NOT NULL,
    FOREIGN KEY (collection_id) REFERENCES collection(id) ON DELETE SET NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE rundigest (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    finished_at DATETIME NOT NULL,
    judge_key VARCHAR(64) NOT NULL,
    judge_label VARCHAR(400) NOT NULL,
    tasks_key VARCHAR(64),
    task_count INTEGER NOT NULL,
    repeats INTEGER NOT NULL,
    system_peaks TEXT,
    created_at DATETIME NOT NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE runfigures (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    name VARCHAR(100) NOT NULL,
    stamp VARCHAR(64) NOT NULL,
    figures TEXT NOT NULL,
    computed_at DATETIME NOT NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE runlog (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    created_at DATETIME NOT NULL,
    level VARCHAR(10) NOT NULL,
    event VARCHAR(40) NOT NULL,
    message TEXT NOT NULL,
    data TEXT,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE runspeed (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    stamp VARCHAR(64) NOT NULL,
    figures TEXT NOT NULL,
    computed_at DATETIME NOT NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE runtarget (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    provider_id INTEGER,
    provider_name VARCHAR(100) NOT NULL,
    model VARCHAR(300) NOT NULL,
    params TEXT,
    position INTEGER NOT NULL,
    warmup_ms REAL,
    load_ms REAL,
    warmup_error TEXT,
    label VARCHAR(300) NOT NULL,
    FOREIGN KEY (provider_id) REFERENCES provider(id) ON DELETE SET NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE samplechunk (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    t_first REAL NOT NULL,
    t_last REAL NOT NULL,
    count INTEGER NOT NULL,
    rows TEXT NOT NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE task (
    id INTEGER PRIMARY KEY,
    task_id VARCHAR(200) NOT NULL,
    category VARCHAR(100) NOT NULL,
    subcategory VARCHAR(100) NOT NULL,
    difficulty VARCHAR(20) NOT NULL,
    question TEXT NOT NULL,
    system_prompt TEXT,
    excellent TEXT NOT NULL,
    good TEXT NOT NULL,
    pass_answer TEXT NOT NULL,
    incorrect_direction TEXT NOT NULL,
    rubric TEXT,
    auto_fail TEXT,
    tags TEXT,
    vars TEXT,
    template_version VARCHAR(50),
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    checks TEXT,
    tools TEXT
);
CREATE TABLE template (
    id INTEGER PRIMARY KEY,
    name VARCHAR(200) NOT NULL,
    description TEXT NOT NULL,
    spec TEXT NOT NULL,
    regression_threshold REAL NOT NULL,
    webhook_url TEXT,
    cron VARCHAR(100),
    timezone VARCHAR(64) NOT NULL,
    schedule_enabled INTEGER NOT NULL,
    next_fire_at DATETIME,
    last_fired_at DATETIME,
    last_error TEXT,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE TABLE vote (
    id INTEGER PRIMARY KEY,
    left_item_id INTEGER NOT NULL,
    right_item_id INTEGER NOT NULL,
    item_low INTEGER NOT NULL,
    item_high INTEGER NOT NULL,
    left_target_id INTEGER NOT NULL,
    right_target_id INTEGER NOT NULL,
    task_key VARCHAR(200) NOT NULL,
    winner VARCHAR(10) NOT NULL,
    winner_target_id INTEGER,
    source VARCHAR(10) NOT NULL,
    voter VARCHAR(420) NOT NULL,
    inconsistent INTEGER NOT NULL,
    job_id INTEGER,
    reason TEXT,
    created_at DATETIME NOT NULL,
    FOREIGN KEY (job_id) REFERENCES judgejob(id) ON DELETE SET NULL,
    FOREIGN KEY (left_item_id) REFERENCES item(id) ON DELETE CASCADE,
    FOREIGN KEY (left_target_id) REFERENCES runtarget(id) ON DELETE CASCADE,
    FOREIGN KEY (right_item_id) REFERENCES item(id) ON DELETE CASCADE,
    FOREIGN KEY (right_target_id) REFERENCES runtarget(id) ON DELETE CASCADE,
    FOREIGN KEY (winner_target_id) REFERENCES runtarget(id) ON DELETE CASCADE
);
CREATE TABLE votehistory (
    id INTEGER PRIMARY KEY,
    vote_id INTEGER NOT NULL,
    item_low INTEGER NOT NULL,
    item_high INTEGER NOT NULL,
    voter VARCHAR(420) NOT NULL,
    changed_by VARCHAR(420) NOT NULL,
    changed_at DATETIME NOT NULL,
    action VARCHAR(10) NOT NULL,
    old_winner VARCHAR(10) NOT NULL,
    old_left_item INTEGER NOT NULL,
    old_right_item INTEGER NOT NULL
);

CREATE UNIQUE INDEX account_name ON account (name);
CREATE INDEX alert_against_run_id ON alert (against_run_id);
CREATE INDEX alert_run_id ON alert (run_id);
CREATE UNIQUE INDEX alert_run_id_series_against_metric ON alert (run_id, series, against, metric);
CREATE INDEX alert_state ON alert (state);
CREATE INDEX alert_template_id ON alert (template_id);
CREATE UNIQUE INDEX apitoken_name ON apitoken (name);
CREATE UNIQUE INDEX apitoken_token_hash ON apitoken (token_hash);
CREATE INDEX auditentry_at ON auditentry (at);
CREATE UNIQUE INDEX baseline_collection_id ON baseline (collection_id);
CREATE INDEX baseline_run_id ON baseline (run_id);
CREATE UNIQUE INDEX collection_name ON collection (name);
CREATE INDEX collectiontask_collection_id ON collectiontask (collection_id);
CREATE UNIQUE INDEX collectiontask_collection_id_task_id ON collectiontask (collection_id, task_id);
CREATE INDEX collectiontask_task_id ON collectiontask (task_id);
CREATE INDEX item_answered_at ON item (run_id, answered_at) WHERE answered_at IS NOT NULL;
CREATE INDEX item_answered_task ON item (run_id, target_id, task_key, answered_at) WHERE answered_at IS NOT NULL;
CREATE INDEX item_claim_judge ON item (run_id) WHERE status = 'WAITING_FOR_JUDGE';
CREATE INDEX item_claim_new ON item (run_id, target_id) WHERE status = 'NEW';
CREATE INDEX item_claimed_until ON item (run_id, claimed_until) WHERE claimed_until IS NOT NULL;
CREATE INDEX item_context_hash ON item (context_hash);
CREATE INDEX item_figures ON item (run_id, status, error_stage, target_id, category, difficulty, tps_source, evaluation_score, time_taken_ms, ttft_ms, tokens_per_second, cost_usd, prompt_tokens, tokens_generated, answered_at);
CREATE INDEX item_judged_at ON item (run_id, judged_at) WHERE judged_at IS NOT NULL;
CREATE INDEX item_next_retry_at ON item (run_id, next_retry_at) WHERE next_retry_at IS NOT NULL;
CREATE INDEX item_run_id ON item (run_id);
CREATE INDEX item_run_id_category ON item (run_id, category);
CREATE INDEX item_run_id_category_task_key ON item (run_id, category, task_key);
CREATE INDEX item_run_id_cost_usd ON item (run_id, cost_usd);
CREATE INDEX item_run_id_difficulty_task_key ON item (run_id, difficulty, task_key);
CREATE INDEX item_run_id_evaluation_score ON item (run_id, evaluation_score);
CREATE INDEX item_run_id_status ON item (run_id, status);
CREATE INDEX item_run_id_target_id_evaluation_score ON item (run_id, target_id, evaluation_score);
CREATE INDEX item_run_id_target_id_task_key ON item (run_id, target_id, task_key);
CREATE INDEX item_run_id_task_key ON item (run_id, task_key);
CREATE INDEX item_run_id_time_taken_ms ON item (run_id, time_taken_ms);
CREATE INDEX item_run_id_tokens_generated ON item (run_id, tokens_generated);
CREATE INDEX item_run_id_tokens_per_second ON item (run_id, tokens_per_second);
CREATE INDEX item_run_id_ttft_ms ON item (run_id, ttft_ms);
CREATE INDEX item_run_id_updated_at_tried ON item (run_id, updated_at) WHERE last_attempt_at IS NOT NULL;
CREATE INDEX item_target_answered_at ON item (run_id, target_id, answered_at) WHERE answered_at IS NOT NULL;
CREATE INDEX item_target_id ON item (target_id);
CREATE INDEX item_task_id ON item (task_id);
CREATE UNIQUE INDEX itemcount_run_id_target_id_status_stage ON item_count (run_id, target_id, status, stage);
CREATE INDEX judgecall_item_id ON judgecall (item_id);
CREATE INDEX judgecall_job_id ON judgecall (job_id);
CREATE INDEX judgecall_job_id_status ON judgecall (job_id, status);
CREATE INDEX judgecall_other_item_id ON judgecall (other_item_id);
CREATE INDEX judgecall_run_id ON judgecall (run_id);
CREATE INDEX judgecall_run_id_status_job_id_next_retry_at ON judgecall (run_id, status, job_id, next_retry_at);
CREATE INDEX judgejob_judge_provider_id ON judgejob (judge_provider_id);
CREATE INDEX judgejob_run_id ON judgejob (run_id);
CREATE INDEX judgejob_target_a_id ON judgejob (target_a_id);
CREATE INDEX judgejob_target_b_id ON judgejob (target_b_id);
CREATE UNIQUE INDEX labelqueue_person ON labelqueue (person);
CREATE UNIQUE INDEX lease_name ON lease (name);
CREATE INDEX outage_run_id ON outage (run_id);
CREATE UNIQUE INDEX outage_run_id_provider_id ON outage (run_id, provider_id);
CREATE INDEX pairtoken_left_item_id ON pairtoken (left_item_id);
CREATE INDEX pairtoken_right_item_id ON pairtoken (right_item_id);
CREATE UNIQUE INDEX pairtoken_token ON pairtoken (token);
CREATE INDEX pairtoken_vote_id ON pairtoken (vote_id);
CREATE INDEX pairtoken_voter_left_item_id_right_item_id ON pairtoken (voter, left_item_id, right_item_id);
CREATE UNIQUE INDEX pendingitems_run_id ON pendingitems (run_id);
CREATE UNIQUE INDEX price_provider_name_model ON price (provider_name, model);
CREATE UNIQUE INDEX provider_name ON provider (name);
CREATE INDEX providerheader_provider_id ON providerheader (provider_id);
CREATE UNIQUE INDEX providerheader_provider_id_key ON providerheader (provider_id, key);
CREATE UNIQUE INDEX rating_item_id_rater ON rating (item_id, rater);
CREATE INDEX rating_item_id_rating ON rating (item_id, rating);
CREATE INDEX rating_run_id ON rating (run_id);
CREATE INDEX rating_run_id_rating ON rating (run_id, rating);
CREATE INDEX ratinghistory_item_id ON ratinghistory (item_id);
CREATE INDEX ratingtag_item_id ON ratingtag (item_id);
CREATE INDEX ratingtag_rating_id ON ratingtag (rating_id);
CREATE UNIQUE INDEX ratingtag_rating_id_tag ON ratingtag (rating_id, tag);
CREATE INDEX ratingtag_tag_item_id ON ratingtag (tag, item_id);
CREATE INDEX run_control ON run (control);
CREATE INDEX run_created_at ON run (created_at);
CREATE INDEX run_judge_provider_id ON run (judge_provider_id);
CREATE UNIQUE INDEX run_run_id ON run (run_id);
CREATE INDEX run_status ON run (status);
CREATE INDEX run_template_id ON run (template_id);
CREATE INDEX runaggregate_category_finished_at ON runaggregate (category, finished_at);
CREATE INDEX runaggregate_run_id ON runaggregate (run_id);
CREATE INDEX runaggregate_run_id_category ON runaggregate (run_id, category);
CREATE INDEX runaggregate_target_id ON runaggregate (target_id);
CREATE INDEX runcollection_collection_id ON runcollection (collection_id);
CREATE INDEX runcollection_run_id ON runcollection (run_id);
CREATE INDEX rundigest_finished_at ON rundigest (finished_at);
CREATE UNIQUE INDEX rundigest_run_id ON rundigest (run_id);
CREATE UNIQUE INDEX runfigures_run_id_name ON runfigures (run_id, name);
CREATE INDEX runlog_run_id_id ON runlog (run_id, id);
CREATE UNIQUE INDEX runspeed_run_id ON runspeed (run_id);
CREATE INDEX runtarget_provider_id ON runtarget (provider_id);
CREATE INDEX runtarget_run_id ON runtarget (run_id);
CREATE UNIQUE INDEX runtarget_run_id_label ON runtarget (run_id, label);
CREATE INDEX samplechunk_run_id ON samplechunk (run_id);
CREATE UNIQUE INDEX samplechunk_run_id_seq ON samplechunk (run_id, seq);
CREATE UNIQUE INDEX sqlite_autoindex__migrations_1 ON _migrations (name); -- made by its table's UNIQUE
CREATE INDEX task_category ON task (category);
CREATE UNIQUE INDEX task_task_id ON task (task_id);
CREATE UNIQUE INDEX template_name ON template (name);
CREATE INDEX template_next_fire_at ON template (next_fire_at);
CREATE UNIQUE INDEX vote_item_low_item_high_voter ON vote (item_low, item_high, voter);
CREATE INDEX vote_job_id ON vote (job_id);
CREATE INDEX vote_left_item_id ON vote (left_item_id);
CREATE INDEX vote_left_target_id ON vote (left_target_id);
CREATE INDEX vote_left_target_id_right_target_id_source_winner ON vote (left_target_id, right_target_id, source, winner);
CREATE INDEX vote_right_item_id ON vote (right_item_id);
CREATE INDEX vote_right_target_id ON vote (right_target_id);
CREATE INDEX vote_right_target_id_source ON vote (right_target_id, source);
CREATE INDEX vote_winner_target_id ON vote (winner_target_id);
CREATE INDEX votehistory_voter_changed_at ON votehistory (voter, changed_at);

CREATE TRIGGER item_count_change AFTER UPDATE OF time_taken_ms, judge_ms, prompt_tokens, tokens_generated, cost_usd, judge_cost_usd, evaluation_score ON item WHEN NOT (OLD.run_id IS NOT NEW.run_id OR OLD.target_id IS NOT NEW.target_id OR OLD.status IS NOT NEW.status OR COALESCE(OLD.error_stage, '') IS NOT COALESCE(NEW.error_stage, '')) AND (OLD.time_taken_ms IS NOT NEW.time_taken_ms OR OLD.judge_ms IS NOT NEW.judge_ms OR OLD.prompt_tokens IS NOT NEW.prompt_tokens OR OLD.tokens_generated IS NOT NEW.tokens_generated OR OLD.cost_usd IS NOT NEW.cost_usd OR OLD.judge_cost_usd IS NOT NEW.judge_cost_usd OR OLD.evaluation_score IS NOT NEW.evaluation_score) BEGIN UPDATE item_count SET answer_ms = answer_ms + (COALESCE(NEW.time_taken_ms, 0)) - (COALESCE(OLD.time_taken_ms, 0)), answer_ms_n = answer_ms_n + ((NEW.time_taken_ms IS NOT NULL)) - ((OLD.time_taken_ms IS NOT NULL)), judge_ms = judge_ms + (COALESCE(NEW.judge_ms, 0)) - (COALESCE(OLD.judge_ms, 0)), judge_ms_n = judge_ms_n + ((NEW.judge_ms IS NOT NULL)) - ((OLD.judge_ms IS NOT NULL)), prompt_tokens = prompt_tokens + (COALESCE(NEW.prompt_tokens, 0)) - (COALESCE(OLD.prompt_tokens, 0)), tokens_generated = tokens_generated + (COALESCE(NEW.tokens_generated, 0)) - (COALESCE(OLD.tokens_generated, 0)), cost_usd = cost_usd + (COALESCE(NEW.cost_usd, 0)) - (COALESCE(OLD.cost_usd, 0)), judge_cost_usd = judge_cost_usd + (COALESCE(NEW.judge_cost_usd, 0)) - (COALESCE(OLD.judge_cost_usd, 0)), score = score + (COALESCE(NEW.evaluation_score, 0)) - (COALESCE(OLD.evaluation_score, 0)), score_n = score_n + ((NEW.evaluation_score IS NOT NULL)) - ((OLD.evaluation_score IS NOT NULL)) WHERE run_id = NEW.run_id AND target_id = NEW.target_id AND status = NEW.status AND stage = COALESCE(NEW.error_stage, '');
    END;
CREATE TRIGGER item_count_delete AFTER DELETE ON item BEGIN UPDATE item_count SET n = n - 1, answer_ms = answer_ms - COALESCE(OLD.time_taken_ms, 0), answer_ms_n = answer_ms_n - (OLD.time_taken_ms IS NOT NULL), judge_ms = judge_ms - COALESCE(OLD.judge_ms, 0), judge_ms_n = judge_ms_n - (OLD.judge_ms IS NOT NULL), prompt_tokens = prompt_tokens - COALESCE(OLD.prompt_tokens, 0), tokens_generated = tokens_generated - COALESCE(OLD.tokens_generated, 0), cost_usd = cost_usd - COALESCE(OLD.cost_usd, 0), judge_cost_usd = judge_cost_usd - COALESCE(OLD.judge_cost_usd, 0), score = score - COALESCE(OLD.evaluation_score, 0), score_n = score_n - (OLD.evaluation_score IS NOT NULL) WHERE run_id = OLD.run_id AND target_id = OLD.target_id AND status = OLD.status AND stage = COALESCE(OLD.error_stage, '');
    END;
CREATE TRIGGER item_count_insert AFTER INSERT ON item BEGIN INSERT INTO item_count (run_id, target_id, status, stage, n, answer_ms, answer_ms_n, judge_ms, judge_ms_n, prompt_tokens, tokens_generated, cost_usd, judge_cost_usd, score, score_n) VALUES (NEW.run_id, NEW.target_id, NEW.status, COALESCE(NEW.error_stage, ''), 1, COALESCE(NEW.time_taken_ms, 0), (NEW.time_taken_ms IS NOT NULL), COALESCE(NEW.judge_ms, 0), (NEW.judge_ms IS NOT NULL), COALESCE(NEW.prompt_tokens, 0), COALESCE(NEW.tokens_generated, 0), COALESCE(NEW.cost_usd, 0), COALESCE(NEW.judge_cost_usd, 0), COALESCE(NEW.evaluation_score, 0), (NEW.evaluation_score IS NOT NULL)) ON CONFLICT (run_id, target_id, status, stage) DO UPDATE SET n = n + excluded.n, answer_ms = answer_ms + excluded.answer_ms, answer_ms_n = answer_ms_n + excluded.answer_ms_n, judge_ms = judge_ms + excluded.judge_ms, judge_ms_n = judge_ms_n + excluded.judge_ms_n, prompt_tokens = prompt_tokens + excluded.prompt_tokens, tokens_generated = tokens_generated + excluded.tokens_generated, cost_usd = cost_usd + excluded.cost_usd, judge_cost_usd = judge_cost_usd + excluded.judge_cost_usd, score = score + excluded.score, score_n = score_n + excluded.score_n;
    END;
CREATE TRIGGER item_count_move AFTER UPDATE OF run_id, target_id, status, error_stage, time_taken_ms, judge_ms, prompt_tokens, tokens_generated, cost_usd, judge_cost_usd, evaluation_score ON item WHEN OLD.run_id IS NOT NEW.run_id OR OLD.target_id IS NOT NEW.target_id OR OLD.status IS NOT NEW.status OR COALESCE(OLD.error_stage, '') IS NOT COALESCE(NEW.error_stage, '') BEGIN UPDATE item_count SET n = n - 1, answer_ms = answer_ms - COALESCE(OLD.time_taken_ms, 0), answer_ms_n = answer_ms_n - (OLD.time_taken_ms IS NOT NULL), judge_ms = judge_ms - COALESCE(OLD.judge_ms, 0), judge_ms_n = judge_ms_n - (OLD.judge_ms IS NOT NULL), prompt_tokens = prompt_tokens - COALESCE(OLD.prompt_tokens, 0), tokens_generated = tokens_generated - COALESCE(OLD.tokens_generated, 0), cost_usd = cost_usd - COALESCE(OLD.cost_usd, 0), judge_cost_usd = judge_cost_usd - COALESCE(OLD.judge_cost_usd, 0), score = score - COALESCE(OLD.evaluation_score, 0), score_n = score_n - (OLD.evaluation_score IS NOT NULL) WHERE run_id = OLD.run_id AND target_id = OLD.target_id AND status = OLD.status AND stage = COALESCE(OLD.error_stage, '');
    UPDATE item_count SET n = n + 1, answer_ms = answer_ms + COALESCE(NEW.time_taken_ms, 0), answer_ms_n = answer_ms_n + (NEW.time_taken_ms IS NOT NULL), judge_ms = judge_ms + COALESCE(NEW.judge_ms, 0), judge_ms_n = judge_ms_n + (NEW.judge_ms IS NOT NULL), prompt_tokens = prompt_tokens + COALESCE(NEW.prompt_tokens, 0), tokens_generated = tokens_generated + COALESCE(NEW.tokens_generated, 0), cost_usd = cost_usd + COALESCE(NEW.cost_usd, 0), judge_cost_usd = judge_cost_usd + COALESCE(NEW.judge_cost_usd, 0), score = score + COALESCE(NEW.evaluation_score, 0), score_n = score_n + (NEW.evaluation_score IS NOT NULL) WHERE run_id = NEW.run_id AND target_id = NEW.target_id AND status = NEW.status AND stage = COALESCE(NEW.error_stage, '');
    INSERT INTO item_count (run_id, target_id, status, stage, n, answer_ms, answer_ms_n, judge_ms, judge_ms_n, prompt_tokens, tokens_generated, cost_usd, judge_cost_usd, score, score_n) SELECT NEW.run_id, NEW.target_id, NEW.status, COALESCE(NEW.error_stage, ''), 1, COALESCE(NEW.time_taken_ms, 0), (NEW.time_taken_ms IS NOT NULL), COALESCE(NEW.judge_ms, 0), (NEW.judge_ms IS NOT NULL), COALESCE(NEW.prompt_tokens, 0), COALESCE(NEW.tokens_generated, 0), COALESCE(NEW.cost_usd, 0), COALESCE(NEW.judge_cost_usd, 0), COALESCE(NEW.evaluation_score, 0), (NEW.evaluation_score IS NOT NULL) WHERE NOT EXISTS (SELECT 1 FROM item_count WHERE run_id = NEW.run_id AND target_id = NEW.target_id AND status = NEW.status AND stage = COALESCE(NEW.error_stage, ''));
    END;
CREATE TRIGGER item_count_run_delete AFTER DELETE ON run BEGIN DELETE FROM item_count WHERE run_id = OLD.id;
    END;

-- PostgreSQL

CREATE TABLE _migrations (
    id BIGINT PRIMARY KEY DEFAULT nextval('_migrations_id_seq'::regclass),
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
);
CREATE TABLE account (
    id BIGINT PRIMARY KEY DEFAULT nextval('account_id_seq'::regclass),
    name CHARACTER VARYING(100) NOT NULL,
    role CHARACTER VARYING(10) NOT NULL,
    password_hash CHARACTER VARYING(300) NOT NULL,
    session_version BIGINT NOT NULL,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    updated_at TIMESTAMP WITHOUT TIME ZONE NOT NULL
);
CREATE TABLE alert (
    id BIGINT PRIMARY KEY DEFAULT nextval('alert_id_seq'::regclass),
    run_id BIGINT NOT NULL,
    template_id BIGINT,
    series CHARACTER VARYING(400) NOT NULL,
    provider_name CHARACTER VARYING(100) NOT NULL,
    model CHARACTER VARYING(300) NOT NULL,
    against CHARACTER VARYING(20) NOT NULL,
    against_run_id BIGINT,
    n BIGINT NOT NULL,
    mean_diff DOUBLE PRECISION NOT NULL,
    drop DOUBLE PRECISION NOT NULL,
    metric CHARACTER VARYING(20) NOT NULL,
    ci_low DOUBLE PRECISION,
    ci_high DOUBLE PRECISION,
    wilcoxon_p DOUBLE PRECISION,
    sign_p DOUBLE PRECISION,
    threshold DOUBLE PRECISION NOT NULL,
    message TEXT NOT NULL,
    state CHARACTER VARYING(20) NOT NULL,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    dismissed_at TIMESTAMP WITHOUT TIME ZONE,
    webhook_state CHARACTER VARYING(20),
    webhook_attempts BIGINT NOT NULL,
    webhook_next_at TIMESTAMP WITHOUT TIME ZONE,
    webhook_claimed_until TIMESTAMP WITHOUT TIME ZONE,
    webhook_error TEXT,
    webhook_sent_at TIMESTAMP WITHOUT TIME ZONE,
    FOREIGN KEY (against_run_id) REFERENCES run(id) ON DELETE SET NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE,
    FOREIGN KEY (template_id) REFERENCES template(id) ON DELETE SET NULL
);
CREATE TABLE apitoken (
    id BIGINT PRIMARY KEY DEFAULT nextval('apitoken_id_seq'::regclass),
    name CHARACTER VARYING(100) NOT NULL,
    role CHARACTER VARYING(10) NOT NULL,
    token_hash CHARACTER VARYING(64) NOT NULL,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    last_used_at TIMESTAMP WITHOUT TIME ZONE
);
CREATE TABLE auditentry (
    id BIGINT PRIMARY KEY DEFAULT nextval('auditentry_id_seq'::regclass),
    at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    actor CHARACTER VARYING(200) NOT NULL,
    action CHARACTER VARYING(50) NOT NULL,
    subject CHARACTER VARYING(300) NOT NULL,
    details TEXT
);
CREATE TABLE baseline (
    id BIGINT PRIMARY KEY DEFAULT nextval('baseline_id_seq'::regclass),
    collection_id BIGINT NOT NULL,
    run_id BIGINT NOT NULL,
    pinned_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    FOREIGN KEY (collection_id) REFERENCES collection(id) ON DELETE CASCADE,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE collection (
    id BIGINT PRIMARY KEY DEFAULT nextval('collection_id_seq'::regclass),
    name CHARACTER VARYING(200) NOT NULL,
    description TEXT NOT NULL,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL
);
CREATE TABLE collectiontask (
    id BIGINT PRIMARY KEY DEFAULT nextval('collectiontask_id_seq'::regclass),
    collection_id BIGINT NOT NULL,
    task_id BIGINT NOT NULL,
    FOREIGN KEY (collection_id) REFERENCES collection(id) ON DELETE CASCADE,
    FOREIGN KEY (task_id) REFERENCES task(id) ON DELETE CASCADE
);
CREATE TABLE item (
    id BIGINT PRIMARY KEY DEFAULT nextval('item_id_seq'::regclass),
    run_id BIGINT NOT NULL,
    target_id BIGINT NOT NULL,
    task_id BIGINT,
    task_key CHARACTER VARYING(200) NOT NULL,
    category CHARACTER VARYING(100) NOT NULL,
    subcategory CHARACTER VARYING(100) NOT NULL,
    difficulty CHARACTER VARYING(20) NOT NULL,
    question TEXT NOT NULL,
    system_prompt TEXT,
    excellent TEXT NOT NULL,
    good TEXT NOT NULL,
    pass_answer TEXT NOT NULL,
    incorrect_direction TEXT NOT NULL,
    rubric TEXT,
    auto_fail_rules TEXT,
    template_version CHARACTER VARYING(50),
    status CHARACTER VARYING(20) NOT NULL,
    attempts BIGINT NOT NULL,
    answer_attempts BIGINT NOT NULL,
    first_attempt_at TIMESTAMP WITHOUT TIME ZONE,
    last_attempt_at TIMESTAMP WITHOUT TIME ZONE,
    next_retry_at TIMESTAMP WITHOUT TIME ZONE,
    request_json TEXT,
    response_raw TEXT,
    answer TEXT,
    finish_reason CHARACTER VARYING(50),
    time_taken_ms DOUBLE PRECISION,
    ttft_ms DOUBLE PRECISION,
    prompt_ms DOUBLE PRECISION,
    decode_ms DOUBLE PRECISION,
    load_ms DOUBLE PRECISION,
    prompt_tokens BIGINT,
    tokens_generated BIGINT,
    tokens_per_second DOUBLE PRECISION,
    tps_source CHARACTER VARYING(30),
    tokens_estimated BOOLEAN NOT NULL,
    cost_usd DOUBLE PRECISION,
    cost_source CHARACTER VARYING(30),
    context_hash CHARACTER VARYING(64),
    answered_at TIMESTAMP WITHOUT TIME ZONE,
    judge_request_json TEXT,
    judge_raw TEXT,
    judge_ms DOUBLE PRECISION,
    evaluation_score DOUBLE PRECISION,
    evaluation_reason TEXT,
    rubric_scores TEXT,
    auto_fail BOOLEAN,
    judged_at TIMESTAMP WITHOUT TIME ZONE,
    error_stage CHARACTER VARYING(20),
    error_msg TEXT,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    updated_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    judge_cost_usd DOUBLE PRECISION,
    claimed_until TIMESTAMP WITHOUT TIME ZONE,
    answer_cut BOOLEAN NOT NULL,
    judge_history TEXT,
    repeat BIGINT NOT NULL,
    seed BIGINT,
    judge_scores TEXT,
    answer_reused_from BIGINT,
    judgement_reused_from BIGINT,
    claimed_by CHARACTER VARYING(200),
    checks TEXT,
    tools TEXT,
    check_results TEXT,
    check_score DOUBLE PRECISION,
    tool_calls TEXT,
    auto_fail_reason TEXT,
    first_answer_ms DOUBLE PRECISION,
    last_token_ms DOUBLE PRECISION,
    sent_ts DOUBLE PRECISION,
    chunks BIGINT,
    reasoning_tokens BIGINT,
    itl_hist BYTEA,
    queue_ms DOUBLE PRECISION,
    step BIGINT NOT NULL DEFAULT 0,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE,
    FOREIGN KEY (target_id) REFERENCES runtarget(id) ON DELETE CASCADE,
    FOREIGN KEY (task_id) REFERENCES task(id) ON DELETE SET NULL
);
CREATE TABLE item_count (
    id BIGINT PRIMARY KEY DEFAULT nextval('item_count_id_seq'::regclass),
    run_id BIGINT NOT NULL,
    target_id BIGINT NOT NULL,
    status CHARACTER VARYING(20) NOT NULL,
    stage CHARACTER VARYING(20) NOT NULL,
    n BIGINT NOT NULL,
    answer_ms DOUBLE PRECISION NOT NULL,
    answer_ms_n BIGINT NOT NULL,
    judge_ms DOUBLE PRECISION NOT NULL,
    judge_ms_n BIGINT NOT NULL,
    prompt_tokens BIGINT NOT NULL,
    tokens_generated BIGINT NOT NULL,
    cost_usd DOUBLE PRECISION NOT NULL,
    judge_cost_usd DOUBLE PRECISION NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    score_n BIGINT NOT NULL
);
CREATE TABLE item_count_delta (
    run_id BIGINT NOT NULL,
    target_id BIGINT NOT NULL,
    status CHARACTER VARYING(20) NOT NULL,
    stage CHARACTER VARYING(20) NOT NULL,
    n BIGINT NOT NULL,
    answer_ms DOUBLE PRECISION NOT NULL,
    answer_ms_n BIGINT NOT NULL,
    judge_ms DOUBLE PRECISION NOT NULL,
    judge_ms_n BIGINT NOT NULL,
    prompt_tokens BIGINT NOT NULL,
    tokens_generated BIGINT NOT NULL,
    cost_usd DOUBLE PRECISION NOT NULL,
    judge_cost_usd DOUBLE PRECISION NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    score_n BIGINT NOT NULL
);
CREATE TABLE judgecall (
    id BIGINT PRIMARY KEY DEFAULT nextval('judgecall_id_seq'::regclass),
    job_id BIGINT NOT NULL,
    run_id BIGINT NOT NULL,
    status CHARACTER VARYING(20) NOT NULL,
    attempts BIGINT NOT NULL,
    first_attempt_at TIMESTAMP WITHOUT TIME ZONE,
    last_attempt_at TIMESTAMP WITHOUT TIME ZONE,
    next_retry_at TIMESTAMP WITHOUT TIME ZONE,
    claimed_until TIMESTAMP WITHOUT TIME ZONE,
    claimed_by CHARACTER VARYING(200),
    item_id BIGINT NOT NULL,
    other_item_id BIGINT,
    level CHARACTER VARYING(20),
    verdict CHARACTER VARYING(10),
    score DOUBLE PRECISION,
    reason TEXT,
    request_json TEXT,
    raw TEXT,
    ms DOUBLE PRECISION,
    cost_usd DOUBLE PRECISION,
    error_msg TEXT,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    updated_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    FOREIGN KEY (item_id) REFERENCES item(id) ON DELETE CASCADE,
    FOREIGN KEY (job_id) REFERENCES judgejob(id) ON DELETE CASCADE,
    FOREIGN KEY (other_item_id) REFERENCES item(id) ON DELETE CASCADE,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE judgejob (
    id BIGINT PRIMARY KEY DEFAULT nextval('judgejob_id_seq'::regclass),
    run_id BIGINT NOT NULL,
    kind CHARACTER VARYING(20) NOT NULL,
    judge_provider_id BIGINT,
    judge_provider_name CHARACTER VARYING(100) NOT NULL,
    judge_model CHARACTER VARYING(300) NOT NULL,
    judge_params TEXT,
    target_a_id BIGINT,
    target_b_id BIGINT,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    FOREIGN KEY (judge_provider_id) REFERENCES provider(id) ON DELETE SET NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE,
    FOREIGN KEY (target_a_id) REFERENCES runtarget(id) ON DELETE CASCADE,
    FOREIGN KEY (target_b_id) REFERENCES runtarget(id) ON DELETE CASCADE
);
CREATE TABLE labelqueue (
    id BIGINT PRIMARY KEY DEFAULT nextval('labelqueue_id_seq'::regclass),
    person CHARACTER VARYING(420) NOT NULL,
    seed BIGINT NOT NULL,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL
);
CREATE TABLE lease (
    id BIGINT PRIMARY KEY DEFAULT nextval('lease_id_seq'::regclass),
    name CHARACTER VARYING(50) NOT NULL,
    holder CHARACTER VARYING(200) NOT NULL,
    acquired_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    heartbeat_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    expires_at TIMESTAMP WITHOUT TIME ZONE NOT NULL
);
CREATE TABLE outage (
    id BIGINT PRIMARY KEY DEFAULT nextval('outage_id_seq'::regclass),
    run_id BIGINT NOT NULL,
    provider_id BIGINT NOT NULL,
    provider_name CHARACTER VARYING(100) NOT NULL,
    error CHARACTER VARYING(100) NOT NULL,
    message TEXT NOT NULL,
    since TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    last_try_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    next_try_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    probes BIGINT NOT NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE pairtoken (
    id BIGINT PRIMARY KEY DEFAULT nextval('pairtoken_id_seq'::regclass),
    token CHARACTER VARYING(64) NOT NULL,
    voter CHARACTER VARYING(420) NOT NULL,
    left_item_id BIGINT NOT NULL,
    right_item_id BIGINT NOT NULL,
    shown_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    vote_id BIGINT,
    FOREIGN KEY (left_item_id) REFERENCES item(id) ON DELETE CASCADE,
    FOREIGN KEY (right_item_id) REFERENCES item(id) ON DELETE CASCADE,
    FOREIGN KEY (vote_id) REFERENCES vote(id) ON DELETE SET NULL
);
CREATE TABLE pendingitems (
    id BIGINT PRIMARY KEY DEFAULT nextval('pendingitems_id_seq'::regclass),
    run_id BIGINT NOT NULL,
    tasks TEXT NOT NULL,
    target BIGINT NOT NULL,
    next_task BIGINT NOT NULL,
    remaining BIGINT NOT NULL,
    per_target BIGINT NOT NULL,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE price (
    id BIGINT PRIMARY KEY DEFAULT nextval('price_id_seq'::regclass),
    provider_name CHARACTER VARYING(100) NOT NULL,
    model CHARACTER VARYING(300) NOT NULL,
    input_per_1m DOUBLE PRECISION NOT NULL,
    output_per_1m DOUBLE PRECISION NOT NULL,
    updated_at TIMESTAMP WITHOUT TIME ZONE NOT NULL
);
CREATE TABLE provider (
    id BIGINT PRIMARY KEY DEFAULT nextval('provider_id_seq'::regclass),
    name CHARACTER VARYING(100) NOT NULL,
    type CHARACTER VARYING(10) NOT NULL,
    base_url CHARACTER VARYING(500) NOT NULL,
    models_endpoint CHARACTER VARYING(200) NOT NULL,
    inference_endpoint CHARACTER VARYING(200) NOT NULL,
    timeout_seconds DOUBLE PRECISION NOT NULL,
    max_concurrency BIGINT NOT NULL,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    updated_at TIMESTAMP WITHOUT TIME ZONE NOT NULL
);
CREATE TABLE providerheader (
    id BIGINT PRIMARY KEY DEFAULT nextval('providerheader_id_seq'::regclass),
    provider_id BIGINT NOT NULL,
    key CHARACTER VARYING(100) NOT NULL,
    value TEXT NOT NULL,
    is_secret BOOLEAN NOT NULL,
    FOREIGN KEY (provider_id) REFERENCES provider(id) ON DELETE CASCADE
);
CREATE TABLE rating (
    id BIGINT PRIMARY KEY DEFAULT nextval('rating_id_seq'::regclass),
    item_id BIGINT NOT NULL,
    run_id BIGINT NOT NULL,
    rating BIGINT,
    tags TEXT,
    notes TEXT NOT NULL,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    updated_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    rater CHARACTER VARYING(420) NOT NULL DEFAULT 'human'::character varying,
    FOREIGN KEY (item_id) REFERENCES item(id) ON DELETE CASCADE,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE ratinghistory (
    id BIGINT PRIMARY KEY DEFAULT nextval('ratinghistory_id_seq'::regclass),
    rating_id BIGINT NOT NULL,
    item_id BIGINT NOT NULL,
    rater CHARACTER VARYING(420) NOT NULL,
    changed_by CHARACTER VARYING(420) NOT NULL,
    changed_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    action CHARACTER VARYING(10) NOT NULL,
    old_rating BIGINT,
    old_tags TEXT,
    old_notes TEXT NOT NULL,
    FOREIGN KEY (item_id) REFERENCES item(id) ON DELETE CASCADE
);
CREATE TABLE ratingtag (
    id BIGINT PRIMARY KEY DEFAULT nextval('ratingtag_id_seq'::regclass),
    rating_id BIGINT NOT NULL,
    item_id BIGINT NOT NULL,
    tag CHARACTER VARYING(100) NOT NULL,
    FOREIGN KEY (item_id) REFERENCES item(id) ON DELETE CASCADE,
    FOREIGN KEY (rating_id) REFERENCES rating(id) ON DELETE CASCADE
);
CREATE TABLE run (
    id BIGINT PRIMARY KEY DEFAULT nextval('run_id_seq'::regclass),
    run_id CHARACTER VARYING(200) NOT NULL,
    name CHARACTER VARYING(200) NOT NULL,
    judge_provider_id BIGINT,
    judge_provider_name CHARACTER VARYING(100) NOT NULL,
    judge_model CHARACTER VARYING(300) NOT NULL,
    judge_params TEXT,
    status CHARACTER VARYING(20) NOT NULL,
    phase CHARACTER VARYING(20) NOT NULL,
    control CHARACTER VARYING(20) NOT NULL,
    control_reason TEXT,
    settings TEXT,
    dataset_hash CHARACTER VARYING(64),
    prompt_hash CHARACTER VARYING(64),
    source CHARACTER VARYING(20) NOT NULL,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    started_at TIMESTAMP WITHOUT TIME ZONE,
    finished_at TIMESTAMP WITHOUT TIME ZONE,
    updated_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    template_id BIGINT,
    triggered_by CHARACTER VARYING(50),
    trigger_note TEXT,
    queued_at TIMESTAMP WITHOUT TIME ZONE,
    outputs TEXT,
    tool_version TEXT,
    command_line TEXT,
    config_given TEXT,
    FOREIGN KEY (judge_provider_id) REFERENCES provider(id) ON DELETE SET NULL,
    FOREIGN KEY (template_id) REFERENCES template(id) ON DELETE SET NULL
);
CREATE TABLE runaggregate (
    id BIGINT PRIMARY KEY DEFAULT nextval('runaggregate_id_seq'::regclass),
    run_id BIGINT NOT NULL,
    target_id BIGINT NOT NULL,
    series CHARACTER VARYING(400) NOT NULL,
    provider_name CHARACTER VARYING(100) NOT NULL,
    model CHARACTER VARYING(300) NOT NULL,
    category CHARACTER VARYING(100) NOT NULL,
    finished_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    judge_key CHARACTER VARYING(64) NOT NULL,
    judge_label CHARACTER VARYING(400) NOT NULL,
    tasks_key CHARACTER VARYING(64),
    items BIGINT NOT NULL,
    n BIGINT NOT NULL,
    tasks BIGINT NOT NULL,
    failed BIGINT NOT NULL,
    score DOUBLE PRECISION,
    ci_low DOUBLE PRECISION,
    ci_high DOUBLE PRECISION,
    tokens_per_second DOUBLE PRECISION,
    ttft_p50_ms DOUBLE PRECISION,
    time_p50_ms DOUBLE PRECISION,
    cost_usd DOUBLE PRECISION,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE,
    FOREIGN KEY (target_id) REFERENCES runtarget(id) ON DELETE CASCADE
);
CREATE TABLE runcollection (
    id BIGINT PRIMARY KEY DEFAULT nextval('runcollection_id_seq'::regclass),
    run_id BIGINT NOT NULL,
    collection_id BIGINT,
    collection_name CHARACTER VARYING(200) NOT NULL,
    FOREIGN KEY (collection_id) REFERENCES collection(id) ON DELETE SET NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE rundigest (
    id BIGINT PRIMARY KEY DEFAULT nextval('rundigest_id_seq'::regclass),
    run_id BIGINT NOT NULL,
    finished_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    judge_key CHARACTER VARYING(64) NOT NULL,
    judge_label CHARACTER VARYING(400) NOT NULL,
    tasks_key CHARACTER VARYING(64),
    task_count BIGINT NOT NULL,
    repeats BIGINT NOT NULL,
    system_peaks TEXT,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE runfigures (
    id BIGINT PRIMARY KEY DEFAULT nextval('runfigures_id_seq'::regclass),
    run_id BIGINT NOT NULL,
    name CHARACTER VARYING(100) NOT NULL,
    stamp CHARACTER VARYING(64) NOT NULL,
    figures TEXT NOT NULL,
    computed_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE runlog (
    id BIGINT PRIMARY KEY DEFAULT nextval('runlog_id_seq'::regclass),
    run_id BIGINT NOT NULL,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    level CHARACTER VARYING(10) NOT NULL,
    event CHARACTER VARYING(40) NOT NULL,
    message TEXT NOT NULL,
    data TEXT,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE runspeed (
    id BIGINT PRIMARY KEY DEFAULT nextval('runspeed_id_seq'::regclass),
    run_id BIGINT NOT NULL,
    stamp CHARACTER VARYING(64) NOT NULL,
    figures TEXT NOT NULL,
    computed_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE runtarget (
    id BIGINT PRIMARY KEY DEFAULT nextval('runtarget_id_seq'::regclass),
    run_id BIGINT NOT NULL,
    provider_id BIGINT,
    provider_name CHARACTER VARYING(100) NOT NULL,
    model CHARACTER VARYING(300) NOT NULL,
    params TEXT,
    position BIGINT NOT NULL,
    warmup_ms DOUBLE PRECISION,
    load_ms DOUBLE PRECISION,
    warmup_error TEXT,
    label CHARACTER VARYING(300) NOT NULL,
    FOREIGN KEY (provider_id) REFERENCES provider(id) ON DELETE SET NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE samplechunk (
    id BIGINT PRIMARY KEY DEFAULT nextval('samplechunk_id_seq'::regclass),
    run_id BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    t_first DOUBLE PRECISION NOT NULL,
    t_last DOUBLE PRECISION NOT NULL,
    count BIGINT NOT NULL,
    rows TEXT NOT NULL,
    FOREIGN KEY (run_id) REFERENCES run(id) ON DELETE CASCADE
);
CREATE TABLE task (
    id BIGINT PRIMARY KEY DEFAULT nextval('task_id_seq'::regclass),
    task_id CHARACTER VARYING(200) NOT NULL,
    category CHARACTER VARYING(100) NOT NULL,
    subcategory CHARACTER VARYING(100) NOT NULL,
    difficulty CHARACTER VARYING(20) NOT NULL,
    question TEXT NOT NULL,
    system_prompt TEXT,
    excellent TEXT NOT NULL,
    good TEXT NOT NULL,
    pass_answer TEXT NOT NULL,
    incorrect_direction TEXT NOT NULL,
    rubric TEXT,
    auto_fail TEXT,
    tags TEXT,
    vars TEXT,
    template_version CHARACTER VARYING(50),
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    updated_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    checks TEXT,
    tools TEXT
);
CREATE TABLE template (
    id BIGINT PRIMARY KEY DEFAULT nextval('template_id_seq'::regclass),
    name CHARACTER VARYING(200) NOT NULL,
    description TEXT NOT NULL,
    spec TEXT NOT NULL,
    regression_threshold DOUBLE PRECISION NOT NULL,
    webhook_url TEXT,
    cron CHARACTER VARYING(100),
    timezone CHARACTER VARYING(64) NOT NULL,
    schedule_enabled BOOLEAN NOT NULL,
    next_fire_at TIMESTAMP WITHOUT TIME ZONE,
    last_fired_at TIMESTAMP WITHOUT TIME ZONE,
    last_error TEXT,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    updated_at TIMESTAMP WITHOUT TIME ZONE NOT NULL
);
CREATE TABLE vote (
    id BIGINT PRIMARY KEY DEFAULT nextval('vote_id_seq'::regclass),
    left_item_id BIGINT NOT NULL,
    right_item_id BIGINT NOT NULL,
    item_low BIGINT NOT NULL,
    item_high BIGINT NOT NULL,
    left_target_id BIGINT NOT NULL,
    right_target_id BIGINT NOT NULL,
    task_key CHARACTER VARYING(200) NOT NULL,
    winner CHARACTER VARYING(10) NOT NULL,
    winner_target_id BIGINT,
    source CHARACTER VARYING(10) NOT NULL,
    voter CHARACTER VARYING(420) NOT NULL,
    inconsistent BOOLEAN NOT NULL,
    job_id BIGINT,
    reason TEXT,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    FOREIGN KEY (job_id) REFERENCES judgejob(id) ON DELETE SET NULL,
    FOREIGN KEY (left_item_id) REFERENCES item(id) ON DELETE CASCADE,
    FOREIGN KEY (left_target_id) REFERENCES runtarget(id) ON DELETE CASCADE,
    FOREIGN KEY (right_item_id) REFERENCES item(id) ON DELETE CASCADE,
    FOREIGN KEY (right_target_id) REFERENCES runtarget(id) ON DELETE CASCADE,
    FOREIGN KEY (winner_target_id) REFERENCES runtarget(id) ON DELETE CASCADE
);
CREATE TABLE votehistory (
    id BIGINT PRIMARY KEY DEFAULT nextval('votehistory_id_seq'::regclass),
    vote_id BIGINT NOT NULL,
    item_low BIGINT NOT NULL,
    item_high BIGINT NOT NULL,
    voter CHARACTER VARYING(420) NOT NULL,
    changed_by CHARACTER VARYING(420) NOT NULL,
    changed_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    action CHARACTER VARYING(10) NOT NULL,
    old_winner CHARACTER VARYING(10) NOT NULL,
    old_left_item BIGINT NOT NULL,
    old_right_item BIGINT NOT NULL
);

CREATE UNIQUE INDEX _migrations_name_key ON _migrations USING btree (name);
CREATE UNIQUE INDEX _migrations_pkey ON _migrations USING btree (id);
CREATE UNIQUE INDEX account_name ON account USING btree (name);
CREATE UNIQUE INDEX account_pkey ON account USING btree (id);
CREATE INDEX alert_against_run_id ON alert USING btree (against_run_id);
CREATE UNIQUE INDEX alert_pkey ON alert USING btree (id);
CREATE INDEX alert_run_id ON alert USING btree (run_id);
CREATE UNIQUE INDEX alert_run_id_series_against_metric ON alert USING btree (run_id, series, against, metric);
CREATE INDEX alert_state ON alert USING btree (state);
CREATE INDEX alert_template_id ON alert USING btree (template_id);
CREATE UNIQUE INDEX apitoken_name ON apitoken USING btree (name);
CREATE UNIQUE INDEX apitoken_pkey ON apitoken USING btree (id);
CREATE UNIQUE INDEX apitoken_token_hash ON apitoken USING btree (token_hash);
CREATE INDEX auditentry_at ON auditentry USING btree (at);
CREATE UNIQUE INDEX auditentry_pkey ON auditentry USING btree (id);
CREATE UNIQUE INDEX baseline_collection_id ON baseline USING btree (collection_id);
CREATE UNIQUE INDEX baseline_pkey ON baseline USING btree (id);
CREATE INDEX baseline_run_id ON baseline USING btree (run_id);
CREATE UNIQUE INDEX collection_name ON collection USING btree (name);
CREATE UNIQUE INDEX collection_pkey ON collection USING btree (id);
CREATE INDEX collectiontask_collection_id ON collectiontask USING btree (collection_id);
CREATE UNIQUE INDEX collectiontask_collection_id_task_id ON collectiontask USING btree (collection_id, task_id);
CREATE UNIQUE INDEX collectiontask_pkey ON collectiontask USING btree (id);
CREATE INDEX collectiontask_task_id ON collectiontask USING btree (task_id);
CREATE INDEX item_answered_at ON item USING btree (run_id, answered_at) WHERE (answered_at IS NOT NULL);
CREATE INDEX item_answered_task ON item USING btree (run_id, target_id, task_key, answered_at) WHERE (answered_at IS NOT NULL);
CREATE INDEX item_claim_judge_by_id ON item USING btree (run_id, id) WHERE ((status)::text = 'WAITING_FOR_JUDGE'::text);
CREATE INDEX item_claim_new_by_id ON item USING btree (run_id, target_id, id) WHERE ((status)::text = 'NEW'::text);
CREATE INDEX item_claimed_until ON item USING btree (run_id, claimed_until) WHERE (claimed_until IS NOT NULL);
CREATE INDEX item_context_hash ON item USING btree (context_hash);
CREATE INDEX item_count_delta_run_id ON item_count_delta USING btree (run_id);
CREATE UNIQUE INDEX item_count_pkey ON item_count USING btree (id);
CREATE INDEX item_figures ON item USING btree (run_id, status, error_stage, target_id, category, difficulty, tps_source, evaluation_score, time_taken_ms, ttft_ms, tokens_per_second, cost_usd, prompt_tokens, tokens_generated, answered_at);
CREATE INDEX item_judged_at ON item USING btree (run_id, judged_at) WHERE (judged_at IS NOT NULL);
CREATE INDEX item_next_retry_at ON item USING btree (run_id, next_retry_at) WHERE (next_retry_at IS NOT NULL);
CREATE UNIQUE INDEX item_pkey ON item USING btree (id);
CREATE INDEX item_run_id ON item USING btree (run_id, id);
CREATE INDEX item_run_id_category ON item USING btree (run_id, category, id);
CREATE INDEX item_run_id_category_task_key ON item USING btree (run_id, category, task_key, id);
CREATE INDEX item_run_id_cost_usd ON item USING btree (run_id, cost_usd, id);
CREATE INDEX item_run_id_difficulty_task_key ON item USING btree (run_id, difficulty, task_key, id);
CREATE INDEX item_run_id_evaluation_score ON item USING btree (run_id, evaluation_score, id);
CREATE INDEX item_run_id_status ON item USING btree (run_id, status, id);
CREATE INDEX item_run_id_target_id_evaluation_score ON item USING btree (run_id, target_id, evaluation_score);
CREATE INDEX item_run_id_target_id_task_key ON item USING btree (run_id, target_id, task_key);
CREATE INDEX item_run_id_task_key ON item USING btree (run_id, task_key, id);
CREATE INDEX item_run_id_time_taken_ms ON item USING btree (run_id, time_taken_ms, id);
CREATE INDEX item_run_id_tokens_generated ON item USING btree (run_id, tokens_generated, id);
CREATE INDEX item_run_id_tokens_per_second ON item USING btree (run_id, tokens_per_second, id);
CREATE INDEX item_run_id_ttft_ms ON item USING btree (run_id, ttft_ms, id);
CREATE INDEX item_run_id_updated_at_tried ON item USING btree (run_id, updated_at) WHERE (last_attempt_at IS NOT NULL);
CREATE INDEX item_target_answered_at ON item USING btree (run_id, target_id, answered_at) WHERE (answered_at IS NOT NULL);
CREATE INDEX item_target_id ON item USING btree (target_id, id);
CREATE INDEX item_task_id ON item USING btree (task_id);
CREATE UNIQUE INDEX itemcount_run_id_target_id_status_stage ON item_count USING btree (run_id, target_id, status, stage);
CREATE INDEX judgecall_item_id ON judgecall USING btree (item_id);
CREATE INDEX judgecall_job_id ON judgecall USING btree (job_id);
CREATE INDEX judgecall_job_id_status ON judgecall USING btree (job_id, status);
CREATE INDEX judgecall_other_item_id ON judgecall USING btree (other_item_id);
CREATE UNIQUE INDEX judgecall_pkey ON judgecall USING btree (id);
CREATE INDEX judgecall_run_id ON judgecall USING btree (run_id);
CREATE INDEX judgecall_run_id_status_job_id_next_retry_at ON judgecall USING btree (run_id, status, job_id, next_retry_at);
CREATE INDEX judgejob_judge_provider_id ON judgejob USING btree (judge_provider_id);
CREATE UNIQUE INDEX judgejob_pkey ON judgejob USING btree (id);
CREATE INDEX judgejob_run_id ON judgejob USING btree (run_id);
CREATE INDEX judgejob_target_a_id ON judgejob USING btree (target_a_id);
CREATE INDEX judgejob_target_b_id ON judgejob USING btree (target_b_id);
CREATE UNIQUE INDEX labelqueue_person ON labelqueue USING btree (person);
CREATE UNIQUE INDEX labelqueue_pkey ON labelqueue USING btree (id);
CREATE UNIQUE INDEX lease_name ON lease USING btree (name);
CREATE UNIQUE INDEX lease_pkey ON lease USING btree (id);
CREATE UNIQUE INDEX outage_pkey ON outage USING btree (id);
CREATE INDEX outage_run_id ON outage USING btree (run_id);
CREATE UNIQUE INDEX outage_run_id_provider_id ON outage USING btree (run_id, provider_id);
CREATE INDEX pairtoken_left_item_id ON pairtoken USING btree (left_item_id);
CREATE UNIQUE INDEX pairtoken_pkey ON pairtoken USING btree (id);
CREATE INDEX pairtoken_right_item_id ON pairtoken USING btree (right_item_id);
CREATE UNIQUE INDEX pairtoken_token ON pairtoken USING btree (token);
CREATE INDEX pairtoken_vote_id ON pairtoken USING btree (vote_id);
CREATE INDEX pairtoken_voter_left_item_id_right_item_id ON pairtoken USING btree (voter, left_item_id, right_item_id);
CREATE UNIQUE INDEX pendingitems_pkey ON pendingitems USING btree (id);
CREATE UNIQUE INDEX pendingitems_run_id ON pendingitems USING btree (run_id);
CREATE UNIQUE INDEX price_pkey ON price USING btree (id);
CREATE UNIQUE INDEX price_provider_name_model ON price USING btree (provider_name, model);
CREATE UNIQUE INDEX provider_name ON provider USING btree (name);
CREATE UNIQUE INDEX provider_pkey ON provider USING btree (id);
CREATE UNIQUE INDEX providerheader_pkey ON providerheader USING btree (id);
CREATE INDEX providerheader_provider_id ON providerheader USING btree (provider_id);
CREATE UNIQUE INDEX providerheader_provider_id_key ON providerheader USING btree (provider_id, key);
CREATE UNIQUE INDEX rating_item_id_rater ON rating USING btree (item_id, rater);
CREATE INDEX rating_item_id_rating ON rating USING btree (item_id, rating);
CREATE UNIQUE INDEX rating_pkey ON rating USING btree (id);
CREATE INDEX rating_run_id ON rating USING btree (run_id);
CREATE INDEX rating_run_id_rating ON rating USING btree (run_id, rating);
CREATE INDEX ratinghistory_item_id ON ratinghistory USING btree (item_id);
CREATE UNIQUE INDEX ratinghistory_pkey ON ratinghistory USING btree (id);
CREATE INDEX ratingtag_item_id ON ratingtag USING btree (item_id);
CREATE UNIQUE INDEX ratingtag_pkey ON ratingtag USING btree (id);
CREATE INDEX ratingtag_rating_id ON ratingtag USING btree (rating_id);
CREATE UNIQUE INDEX ratingtag_rating_id_tag ON ratingtag USING btree (rating_id, tag);
CREATE INDEX ratingtag_tag_item_id ON ratingtag USING btree (tag, item_id);
CREATE INDEX run_control ON run USING btree (control);
CREATE INDEX run_created_at ON run USING btree (created_at);
CREATE INDEX run_judge_provider_id ON run USING btree (judge_provider_id);
CREATE UNIQUE INDEX run_pkey ON run USING btree (id);
CREATE UNIQUE INDEX run_run_id ON run USING btree (run_id);
CREATE INDEX run_status ON run USING btree (status);
CREATE INDEX run_template_id ON run USING btree (template_id);
CREATE INDEX runaggregate_category_finished_at ON runaggregate USING btree (category, finished_at);
CREATE UNIQUE INDEX runaggregate_pkey ON runaggregate USING btree (id);
CREATE INDEX runaggregate_run_id ON runaggregate USING btree (run_id);
CREATE INDEX runaggregate_run_id_category ON runaggregate USING btree (run_id, category);
CREATE INDEX runaggregate_target_id ON runaggregate USING btree (target_id);
CREATE INDEX runcollection_collection_id ON runcollection USING btree (collection_id);
CREATE UNIQUE INDEX runcollection_pkey ON runcollection USING btree (id);
CREATE INDEX runcollection_run_id ON runcollection USING btree (run_id);
CREATE INDEX rundigest_finished_at ON rundigest USING btree (finished_at);
CREATE UNIQUE INDEX rundigest_pkey ON rundigest USING btree (id);
CREATE UNIQUE INDEX rundigest_run_id ON rundigest USING btree (run_id);
CREATE UNIQUE INDEX runfigures_pkey ON runfigures USING btree (id);
CREATE UNIQUE INDEX runfigures_run_id_name ON runfigures USING btree (run_id, name);
CREATE UNIQUE INDEX runlog_pkey ON runlog USING btree (id);
CREATE INDEX runlog_run_id_id ON runlog USING btree (run_id, id);
CREATE UNIQUE INDEX runspeed_pkey ON runspeed USING btree (id);
CREATE UNIQUE INDEX runspeed_run_id ON runspeed USING btree (run_id);
CREATE UNIQUE INDEX runtarget_pkey ON runtarget USING btree (id);
CREATE INDEX runtarget_provider_id ON runtarget USING btree (provider_id);
CREATE INDEX runtarget_run_id ON runtarget USING btree (run_id);
CREATE UNIQUE INDEX runtarget_run_id_label ON runtarget USING btree (run_id, label);
CREATE UNIQUE INDEX samplechunk_pkey ON samplechunk USING btree (id);
CREATE INDEX samplechunk_run_id ON samplechunk USING btree (run_id);
CREATE UNIQUE INDEX samplechunk_run_id_seq ON samplechunk USING btree (run_id, seq);
CREATE INDEX task_category ON task USING btree (category);
CREATE UNIQUE INDEX task_pkey ON task USING btree (id);
CREATE UNIQUE INDEX task_task_id ON task USING btree (task_id);
CREATE UNIQUE INDEX template_name ON template USING btree (name);
CREATE INDEX template_next_fire_at ON template USING btree (next_fire_at);
CREATE UNIQUE INDEX template_pkey ON template USING btree (id);
CREATE UNIQUE INDEX vote_item_low_item_high_voter ON vote USING btree (item_low, item_high, voter);
CREATE INDEX vote_job_id ON vote USING btree (job_id);
CREATE INDEX vote_left_item_id ON vote USING btree (left_item_id);
CREATE INDEX vote_left_target_id ON vote USING btree (left_target_id);
CREATE INDEX vote_left_target_id_right_target_id_source_winner ON vote USING btree (left_target_id, right_target_id, source, winner);
CREATE UNIQUE INDEX vote_pkey ON vote USING btree (id);
CREATE INDEX vote_right_item_id ON vote USING btree (right_item_id);
CREATE INDEX vote_right_target_id ON vote USING btree (right_target_id);
CREATE INDEX vote_right_target_id_source ON vote USING btree (right_target_id, source);
CREATE INDEX vote_winner_target_id ON vote USING btree (winner_target_id);
CREATE UNIQUE INDEX votehistory_pkey ON votehistory USING btree (id);
CREATE INDEX votehistory_voter_changed_at ON votehistory USING btree (voter, changed_at);

CREATE OR REPLACE FUNCTION item_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $function$ BEGIN INSERT INTO item_count_delta (run_id, target_id, status, stage, n, answer_ms, answer_ms_n, judge_ms, judge_ms_n, prompt_tokens, tokens_generated, cost_usd, judge_cost_usd, score, score_n) SELECT run_id, target_id, status, COALESCE(error_stage, '') AS stage, -COALESCE(COUNT(*), 0) AS n, -COALESCE(SUM(time_taken_ms), 0) AS answer_ms, -COALESCE(COUNT(time_taken_ms), 0) AS answer_ms_n, -COALESCE(SUM(judge_ms), 0) AS judge_ms, -COALESCE(COUNT(judge_ms), 0) AS judge_ms_n, -COALESCE(SUM(prompt_tokens), 0) AS prompt_tokens, -COALESCE(SUM(tokens_generated), 0) AS tokens_generated, -COALESCE(SUM(cost_usd), 0) AS cost_usd, -COALESCE(SUM(judge_cost_usd), 0) AS judge_cost_usd, -COALESCE(SUM(evaluation_score), 0) AS score, -COALESCE(COUNT(evaluation_score), 0) AS score_n FROM old_items WHERE EXISTS (SELECT 1 FROM run WHERE run.id = old_items.run_id) GROUP BY run_id, target_id, status, COALESCE(error_stage, '');
    RETURN NULL;
    END $function$;
CREATE OR REPLACE FUNCTION item_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $function$ BEGIN INSERT INTO item_count_delta (run_id, target_id, status, stage, n, answer_ms, answer_ms_n, judge_ms, judge_ms_n, prompt_tokens, tokens_generated, cost_usd, judge_cost_usd, score, score_n) SELECT run_id, target_id, status, COALESCE(error_stage, '') AS stage, COALESCE(COUNT(*), 0) AS n, COALESCE(SUM(time_taken_ms), 0) AS answer_ms, COALESCE(COUNT(time_taken_ms), 0) AS answer_ms_n, COALESCE(SUM(judge_ms), 0) AS judge_ms, COALESCE(COUNT(judge_ms), 0) AS judge_ms_n, COALESCE(SUM(prompt_tokens), 0) AS prompt_tokens, COALESCE(SUM(tokens_generated), 0) AS tokens_generated, COALESCE(SUM(cost_usd), 0) AS cost_usd, COALESCE(SUM(judge_cost_usd), 0) AS judge_cost_usd, COALESCE(SUM(evaluation_score), 0) AS score, COALESCE(COUNT(evaluation_score), 0) AS score_n FROM new_items GROUP BY run_id, target_id, status, COALESCE(error_stage, '');
    RETURN NULL;
    END $function$;
CREATE OR REPLACE FUNCTION item_count_run_deleted() RETURNS trigger LANGUAGE plpgsql AS $function$ BEGIN DELETE FROM item_count WHERE run_id = OLD.id;
    DELETE FROM item_count_delta WHERE run_id = OLD.id;
    RETURN NULL;
    END $function$;
CREATE OR REPLACE FUNCTION item_count_updated() RETURNS trigger LANGUAGE plpgsql AS $function$ BEGIN INSERT INTO item_count_delta (run_id, target_id, status, stage, n, answer_ms, answer_ms_n, judge_ms, judge_ms_n, prompt_tokens, tokens_generated, cost_usd, judge_cost_usd, score, score_n) SELECT run_id, target_id, status, stage, SUM(n) AS n, SUM(answer_ms) AS answer_ms, SUM(answer_ms_n) AS answer_ms_n, SUM(judge_ms) AS judge_ms, SUM(judge_ms_n) AS judge_ms_n, SUM(prompt_tokens) AS prompt_tokens, SUM(tokens_generated) AS tokens_generated, SUM(cost_usd) AS cost_usd, SUM(judge_cost_usd) AS judge_cost_usd, SUM(score) AS score, SUM(score_n) AS score_n FROM (SELECT run_id, target_id, status, COALESCE(error_stage, '') AS stage, -COALESCE(COUNT(*), 0) AS n, -COALESCE(SUM(time_taken_ms), 0) AS answer_ms, -COALESCE(COUNT(time_taken_ms), 0) AS answer_ms_n, -COALESCE(SUM(judge_ms), 0) AS judge_ms, -COALESCE(COUNT(judge_ms), 0) AS judge_ms_n, -COALESCE(SUM(prompt_tokens), 0) AS prompt_tokens, -COALESCE(SUM(tokens_generated), 0) AS tokens_generated, -COALESCE(SUM(cost_usd), 0) AS cost_usd, -COALESCE(SUM(judge_cost_usd), 0) AS judge_cost_usd, -COALESCE(SUM(evaluation_score), 0) AS score, -COALESCE(COUNT(evaluation_score), 0) AS score_n FROM old_items GROUP BY run_id, target_id, status, COALESCE(error_stage, '') UNION ALL SELECT run_id, target_id, status, COALESCE(error_stage, '') AS stage, COALESCE(COUNT(*), 0) AS n, COALESCE(SUM(time_taken_ms), 0) AS answer_ms, COALESCE(COUNT(time_taken_ms), 0) AS answer_ms_n, COALESCE(SUM(judge_ms), 0) AS judge_ms, COALESCE(COUNT(judge_ms), 0) AS judge_ms_n, COALESCE(SUM(prompt_tokens), 0) AS prompt_tokens, COALESCE(SUM(tokens_generated), 0) AS tokens_generated, COALESCE(SUM(cost_usd), 0) AS cost_usd, COALESCE(SUM(judge_cost_usd), 0) AS judge_cost_usd, COALESCE(SUM(evaluation_score), 0) AS score, COALESCE(COUNT(evaluation_score), 0) AS score_n FROM new_items GROUP BY run_id, target_id, status, COALESCE(error_stage, '')) AS changed GROUP BY run_id, target_id, status, stage HAVING SUM(n) <> 0 OR SUM(answer_ms) <> 0 OR SUM(answer_ms_n) <> 0 OR SUM(judge_ms) <> 0 OR SUM(judge_ms_n) <> 0 OR SUM(prompt_tokens) <> 0 OR SUM(tokens_generated) <> 0 OR SUM(cost_usd) <> 0 OR SUM(judge_cost_usd) <> 0 OR SUM(score) <> 0 OR SUM(score_n) <> 0;
    RETURN NULL;
    END $function$;

CREATE TRIGGER item_count_deleted AFTER DELETE ON item REFERENCING OLD TABLE AS old_items FOR EACH STATEMENT EXECUTE FUNCTION item_count_deleted();
CREATE TRIGGER item_count_inserted AFTER INSERT ON item REFERENCING NEW TABLE AS new_items FOR EACH STATEMENT EXECUTE FUNCTION item_count_inserted();
CREATE TRIGGER item_count_run_deleted AFTER DELETE ON run FOR EACH ROW EXECUTE FUNCTION item_count_run_deleted();
CREATE TRIGGER item_count_updated AFTER UPDATE ON item REFERENCING OLD TABLE AS old_items NEW TABLE AS new_items FOR EACH STATEMENT EXECUTE FUNCTION item_count_updated();

CREATE VIEW item_count_now AS SELECT parts.run_id, parts.target_id, parts.status, parts.stage, sum(parts.n) AS n, sum(parts.answer_ms) AS answer_ms, sum(parts.answer_ms_n) AS answer_ms_n, sum(parts.judge_ms) AS judge_ms, sum(parts.judge_ms_n) AS judge_ms_n, sum(parts.prompt_tokens) AS prompt_tokens, sum(parts.tokens_generated) AS tokens_generated, sum(parts.cost_usd) AS cost_usd, sum(parts.judge_cost_usd) AS judge_cost_usd, sum(parts.score) AS score, sum(parts.score_n) AS score_n FROM ( SELECT item_count.run_id, item_count.target_id, item_count.status, item_count.stage, item_count.n, item_count.answer_ms, item_count.answer_ms_n, item_count.judge_ms, item_count.judge_ms_n, item_count.prompt_tokens, item_count.tokens_generated, item_count.cost_usd, item_count.judge_cost_usd, item_count.score, item_count.score_n FROM item_count UNION ALL SELECT item_count_delta.run_id, item_count_delta.target_id, item_count_delta.status, item_count_delta.stage, item_count_delta.n, item_count_delta.answer_ms, item_count_delta.answer_ms_n, item_count_delta.judge_ms, item_count_delta.judge_ms_n, item_count_delta.prompt_tokens, item_count_delta.tokens_generated, item_count_delta.cost_usd, item_count_delta.judge_cost_usd, item_count_delta.score, item_count_delta.score_n FROM item_count_delta) parts GROUP BY parts.run_id, parts.target_id, parts.status, parts.stage;

CREATE STATISTICS item_run_target (dependencies, mcv) ON run_id, target_id FROM item;
