-- A database of the first PostgreSQL schema: commit 2b0b7cc migrated an empty database
-- (m001-m023) and its own models wrote a run with two targets of one model and three items;
-- `pg_dump --inserts --no-owner --no-privileges` (its \restrict lines left out).
-- tests/test_schema.py upgrades it and compares it with a fresh database.
--
-- PostgreSQL database dump
--


-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: _migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public._migrations (
    id bigint NOT NULL,
    name text NOT NULL,
    applied_at text NOT NULL
);


--
-- Name: _migrations_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public._migrations_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: _migrations_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public._migrations_id_seq OWNED BY public._migrations.id;


--
-- Name: alert; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.alert (
    id bigint NOT NULL,
    run_id bigint NOT NULL,
    template_id bigint,
    series character varying(400) NOT NULL,
    provider_name character varying(100) NOT NULL,
    model character varying(300) NOT NULL,
    against character varying(20) NOT NULL,
    against_run_id bigint,
    n bigint NOT NULL,
    mean_diff real NOT NULL,
    drop real NOT NULL,
    ci_low real NOT NULL,
    ci_high real NOT NULL,
    wilcoxon_p real,
    sign_p real,
    threshold real NOT NULL,
    message text NOT NULL,
    state character varying(20) NOT NULL,
    created_at timestamp without time zone NOT NULL,
    dismissed_at timestamp without time zone,
    webhook_state character varying(20),
    webhook_attempts bigint NOT NULL,
    webhook_next_at timestamp without time zone,
    webhook_claimed_until timestamp without time zone,
    webhook_error text,
    webhook_sent_at timestamp without time zone
);


--
-- Name: alert_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.alert_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: alert_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.alert_id_seq OWNED BY public.alert.id;


--
-- Name: baseline; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.baseline (
    id bigint NOT NULL,
    collection_id bigint NOT NULL,
    run_id bigint NOT NULL,
    pinned_at timestamp without time zone NOT NULL
);


--
-- Name: baseline_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.baseline_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: baseline_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.baseline_id_seq OWNED BY public.baseline.id;


--
-- Name: collection; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.collection (
    id bigint NOT NULL,
    name character varying(200) NOT NULL,
    description text NOT NULL,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: collection_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.collection_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: collection_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.collection_id_seq OWNED BY public.collection.id;


--
-- Name: collectiontask; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.collectiontask (
    id bigint NOT NULL,
    collection_id bigint NOT NULL,
    task_id bigint NOT NULL
);


--
-- Name: collectiontask_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.collectiontask_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: collectiontask_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.collectiontask_id_seq OWNED BY public.collectiontask.id;


--
-- Name: item; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.item (
    id bigint NOT NULL,
    run_id bigint NOT NULL,
    target_id bigint NOT NULL,
    task_id bigint,
    task_key character varying(200) NOT NULL,
    category character varying(100) NOT NULL,
    subcategory character varying(100) NOT NULL,
    difficulty character varying(20) NOT NULL,
    question text NOT NULL,
    system_prompt text,
    excellent text NOT NULL,
    good text NOT NULL,
    pass_answer text NOT NULL,
    incorrect_direction text NOT NULL,
    rubric text,
    auto_fail_rules text,
    template_version character varying(50),
    repeat bigint NOT NULL,
    seed bigint,
    judge_scores text,
    status character varying(20) NOT NULL,
    attempts bigint NOT NULL,
    answer_attempts bigint NOT NULL,
    first_attempt_at timestamp without time zone,
    last_attempt_at timestamp without time zone,
    next_retry_at timestamp without time zone,
    claimed_until timestamp without time zone,
    request_json text,
    response_raw text,
    answer text,
    finish_reason character varying(50),
    answer_cut boolean NOT NULL,
    time_taken_ms real,
    ttft_ms real,
    prompt_ms real,
    decode_ms real,
    load_ms real,
    prompt_tokens bigint,
    tokens_generated bigint,
    tokens_per_second real,
    tps_source character varying(30),
    tokens_estimated boolean NOT NULL,
    cost_usd real,
    cost_source character varying(30),
    context_hash character varying(64),
    answered_at timestamp without time zone,
    judge_request_json text,
    judge_raw text,
    judge_ms real,
    judge_cost_usd real,
    evaluation_score real,
    evaluation_reason text,
    rubric_scores text,
    auto_fail boolean,
    judged_at timestamp without time zone,
    judge_history text,
    answer_reused_from bigint,
    judgement_reused_from bigint,
    error_stage character varying(20),
    error_msg text,
    created_at timestamp without time zone NOT NULL,
    updated_at timestamp without time zone NOT NULL
);


--
-- Name: item_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.item_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: item_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.item_id_seq OWNED BY public.item.id;


--
-- Name: judgecall; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.judgecall (
    id bigint NOT NULL,
    job_id bigint NOT NULL,
    run_id bigint NOT NULL,
    status character varying(20) NOT NULL,
    attempts bigint NOT NULL,
    first_attempt_at timestamp without time zone,
    last_attempt_at timestamp without time zone,
    next_retry_at timestamp without time zone,
    claimed_until timestamp without time zone,
    item_id bigint NOT NULL,
    other_item_id bigint,
    level character varying(20),
    verdict character varying(10),
    score real,
    reason text,
    request_json text,
    raw text,
    ms real,
    cost_usd real,
    error_msg text,
    created_at timestamp without time zone NOT NULL,
    updated_at timestamp without time zone NOT NULL
);


--
-- Name: judgecall_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.judgecall_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: judgecall_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.judgecall_id_seq OWNED BY public.judgecall.id;


--
-- Name: judgejob; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.judgejob (
    id bigint NOT NULL,
    run_id bigint NOT NULL,
    kind character varying(20) NOT NULL,
    judge_provider_id bigint,
    judge_provider_name character varying(100) NOT NULL,
    judge_model character varying(300) NOT NULL,
    judge_params text,
    target_a_id bigint,
    target_b_id bigint,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: judgejob_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.judgejob_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: judgejob_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.judgejob_id_seq OWNED BY public.judgejob.id;


--
-- Name: lease; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.lease (
    id bigint NOT NULL,
    name character varying(50) NOT NULL,
    holder character varying(200) NOT NULL,
    acquired_at timestamp without time zone NOT NULL,
    heartbeat_at timestamp without time zone NOT NULL,
    expires_at timestamp without time zone NOT NULL
);


--
-- Name: lease_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.lease_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: lease_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.lease_id_seq OWNED BY public.lease.id;


--
-- Name: outage; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.outage (
    id bigint NOT NULL,
    run_id bigint NOT NULL,
    provider_id bigint NOT NULL,
    provider_name character varying(100) NOT NULL,
    error character varying(100) NOT NULL,
    message text NOT NULL,
    since timestamp without time zone NOT NULL,
    last_try_at timestamp without time zone NOT NULL,
    next_try_at timestamp without time zone NOT NULL,
    probes bigint NOT NULL
);


--
-- Name: outage_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.outage_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: outage_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.outage_id_seq OWNED BY public.outage.id;


--
-- Name: price; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.price (
    id bigint NOT NULL,
    provider_name character varying(100) NOT NULL,
    model character varying(300) NOT NULL,
    input_per_1m real NOT NULL,
    output_per_1m real NOT NULL,
    updated_at timestamp without time zone NOT NULL
);


--
-- Name: price_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.price_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: price_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.price_id_seq OWNED BY public.price.id;


--
-- Name: provider; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.provider (
    id bigint NOT NULL,
    name character varying(100) NOT NULL,
    type character varying(10) NOT NULL,
    base_url character varying(500) NOT NULL,
    models_endpoint character varying(200) NOT NULL,
    inference_endpoint character varying(200) NOT NULL,
    timeout_seconds real NOT NULL,
    max_concurrency bigint NOT NULL,
    created_at timestamp without time zone NOT NULL,
    updated_at timestamp without time zone NOT NULL
);


--
-- Name: provider_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.provider_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: provider_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.provider_id_seq OWNED BY public.provider.id;


--
-- Name: providerheader; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.providerheader (
    id bigint NOT NULL,
    provider_id bigint NOT NULL,
    key character varying(100) NOT NULL,
    value text NOT NULL,
    is_secret boolean NOT NULL
);


--
-- Name: providerheader_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.providerheader_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: providerheader_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.providerheader_id_seq OWNED BY public.providerheader.id;


--
-- Name: rating; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rating (
    id bigint NOT NULL,
    item_id bigint NOT NULL,
    run_id bigint NOT NULL,
    rating bigint,
    tags text,
    notes text NOT NULL,
    created_at timestamp without time zone NOT NULL,
    updated_at timestamp without time zone NOT NULL
);


--
-- Name: rating_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.rating_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: rating_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.rating_id_seq OWNED BY public.rating.id;


--
-- Name: ratingtag; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ratingtag (
    id bigint NOT NULL,
    rating_id bigint NOT NULL,
    item_id bigint NOT NULL,
    tag character varying(100) NOT NULL
);


--
-- Name: ratingtag_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.ratingtag_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: ratingtag_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.ratingtag_id_seq OWNED BY public.ratingtag.id;


--
-- Name: run; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.run (
    id bigint NOT NULL,
    run_id character varying(200) NOT NULL,
    name character varying(200) NOT NULL,
    judge_provider_id bigint,
    judge_provider_name character varying(100) NOT NULL,
    judge_model character varying(300) NOT NULL,
    judge_params text,
    status character varying(20) NOT NULL,
    phase character varying(20) NOT NULL,
    control character varying(20) NOT NULL,
    control_reason text,
    settings text,
    dataset_hash character varying(64),
    prompt_hash character varying(64),
    source character varying(20) NOT NULL,
    outputs text,
    template_id bigint,
    triggered_by character varying(50),
    trigger_note text,
    queued_at timestamp without time zone,
    created_at timestamp without time zone NOT NULL,
    started_at timestamp without time zone,
    finished_at timestamp without time zone,
    updated_at timestamp without time zone NOT NULL
);


--
-- Name: run_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.run_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: run_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.run_id_seq OWNED BY public.run.id;


--
-- Name: runaggregate; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.runaggregate (
    id bigint NOT NULL,
    run_id bigint NOT NULL,
    target_id bigint NOT NULL,
    series character varying(400) NOT NULL,
    provider_name character varying(100) NOT NULL,
    model character varying(300) NOT NULL,
    category character varying(100) NOT NULL,
    finished_at timestamp without time zone NOT NULL,
    judge_key character varying(64) NOT NULL,
    judge_label character varying(400) NOT NULL,
    tasks_key character varying(64),
    items bigint NOT NULL,
    n bigint NOT NULL,
    tasks bigint NOT NULL,
    failed bigint NOT NULL,
    score real,
    ci_low real,
    ci_high real,
    tokens_per_second real,
    ttft_p50_ms real,
    time_p50_ms real,
    cost_usd real
);


--
-- Name: runaggregate_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.runaggregate_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: runaggregate_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.runaggregate_id_seq OWNED BY public.runaggregate.id;


--
-- Name: runcollection; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.runcollection (
    id bigint NOT NULL,
    run_id bigint NOT NULL,
    collection_id bigint,
    collection_name character varying(200) NOT NULL
);


--
-- Name: runcollection_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.runcollection_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: runcollection_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.runcollection_id_seq OWNED BY public.runcollection.id;


--
-- Name: rundigest; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rundigest (
    id bigint NOT NULL,
    run_id bigint NOT NULL,
    finished_at timestamp without time zone NOT NULL,
    judge_key character varying(64) NOT NULL,
    judge_label character varying(400) NOT NULL,
    tasks_key character varying(64),
    task_count bigint NOT NULL,
    repeats bigint NOT NULL,
    system_peaks text,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: rundigest_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.rundigest_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: rundigest_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.rundigest_id_seq OWNED BY public.rundigest.id;


--
-- Name: runlog; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.runlog (
    id bigint NOT NULL,
    run_id bigint NOT NULL,
    created_at timestamp without time zone NOT NULL,
    level character varying(10) NOT NULL,
    event character varying(40) NOT NULL,
    message text NOT NULL,
    data text
);


--
-- Name: runlog_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.runlog_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: runlog_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.runlog_id_seq OWNED BY public.runlog.id;


--
-- Name: runtarget; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.runtarget (
    id bigint NOT NULL,
    run_id bigint NOT NULL,
    provider_id bigint,
    provider_name character varying(100) NOT NULL,
    model character varying(300) NOT NULL,
    params text,
    "position" bigint NOT NULL,
    warmup_ms real,
    load_ms real,
    warmup_error text,
    label character varying(300) NOT NULL
);


--
-- Name: runtarget_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.runtarget_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: runtarget_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.runtarget_id_seq OWNED BY public.runtarget.id;


--
-- Name: samplechunk; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.samplechunk (
    id bigint NOT NULL,
    run_id bigint NOT NULL,
    seq bigint NOT NULL,
    t_first real NOT NULL,
    t_last real NOT NULL,
    count bigint NOT NULL,
    rows text NOT NULL
);


--
-- Name: samplechunk_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.samplechunk_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: samplechunk_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.samplechunk_id_seq OWNED BY public.samplechunk.id;


--
-- Name: task; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.task (
    id bigint NOT NULL,
    task_id character varying(200) NOT NULL,
    category character varying(100) NOT NULL,
    subcategory character varying(100) NOT NULL,
    difficulty character varying(20) NOT NULL,
    question text NOT NULL,
    system_prompt text,
    excellent text NOT NULL,
    good text NOT NULL,
    pass_answer text NOT NULL,
    incorrect_direction text NOT NULL,
    rubric text,
    auto_fail text,
    tags text,
    vars text,
    template_version character varying(50),
    created_at timestamp without time zone NOT NULL,
    updated_at timestamp without time zone NOT NULL
);


--
-- Name: task_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.task_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: task_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.task_id_seq OWNED BY public.task.id;


--
-- Name: template; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.template (
    id bigint NOT NULL,
    name character varying(200) NOT NULL,
    description text NOT NULL,
    spec text NOT NULL,
    regression_threshold real NOT NULL,
    webhook_url text,
    cron character varying(100),
    timezone character varying(64) NOT NULL,
    schedule_enabled boolean NOT NULL,
    next_fire_at timestamp without time zone,
    last_fired_at timestamp without time zone,
    last_error text,
    created_at timestamp without time zone NOT NULL,
    updated_at timestamp without time zone NOT NULL
);


--
-- Name: template_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.template_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: template_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.template_id_seq OWNED BY public.template.id;


--
-- Name: vote; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.vote (
    id bigint NOT NULL,
    left_item_id bigint NOT NULL,
    right_item_id bigint NOT NULL,
    item_low bigint NOT NULL,
    item_high bigint NOT NULL,
    left_target_id bigint NOT NULL,
    right_target_id bigint NOT NULL,
    task_key character varying(200) NOT NULL,
    winner character varying(10) NOT NULL,
    winner_target_id bigint,
    source character varying(10) NOT NULL,
    voter character varying(420) NOT NULL,
    inconsistent boolean NOT NULL,
    job_id bigint,
    reason text,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: vote_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.vote_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: vote_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.vote_id_seq OWNED BY public.vote.id;


--
-- Name: _migrations id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public._migrations ALTER COLUMN id SET DEFAULT nextval('public._migrations_id_seq'::regclass);


--
-- Name: alert id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alert ALTER COLUMN id SET DEFAULT nextval('public.alert_id_seq'::regclass);


--
-- Name: baseline id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.baseline ALTER COLUMN id SET DEFAULT nextval('public.baseline_id_seq'::regclass);


--
-- Name: collection id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.collection ALTER COLUMN id SET DEFAULT nextval('public.collection_id_seq'::regclass);


--
-- Name: collectiontask id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.collectiontask ALTER COLUMN id SET DEFAULT nextval('public.collectiontask_id_seq'::regclass);


--
-- Name: item id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.item ALTER COLUMN id SET DEFAULT nextval('public.item_id_seq'::regclass);


--
-- Name: judgecall id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.judgecall ALTER COLUMN id SET DEFAULT nextval('public.judgecall_id_seq'::regclass);


--
-- Name: judgejob id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.judgejob ALTER COLUMN id SET DEFAULT nextval('public.judgejob_id_seq'::regclass);


--
-- Name: lease id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.lease ALTER COLUMN id SET DEFAULT nextval('public.lease_id_seq'::regclass);


--
-- Name: outage id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.outage ALTER COLUMN id SET DEFAULT nextval('public.outage_id_seq'::regclass);


--
-- Name: price id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.price ALTER COLUMN id SET DEFAULT nextval('public.price_id_seq'::regclass);


--
-- Name: provider id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider ALTER COLUMN id SET DEFAULT nextval('public.provider_id_seq'::regclass);


--
-- Name: providerheader id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.providerheader ALTER COLUMN id SET DEFAULT nextval('public.providerheader_id_seq'::regclass);


--
-- Name: rating id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rating ALTER COLUMN id SET DEFAULT nextval('public.rating_id_seq'::regclass);


--
-- Name: ratingtag id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ratingtag ALTER COLUMN id SET DEFAULT nextval('public.ratingtag_id_seq'::regclass);


--
-- Name: run id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run ALTER COLUMN id SET DEFAULT nextval('public.run_id_seq'::regclass);


--
-- Name: runaggregate id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runaggregate ALTER COLUMN id SET DEFAULT nextval('public.runaggregate_id_seq'::regclass);


--
-- Name: runcollection id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runcollection ALTER COLUMN id SET DEFAULT nextval('public.runcollection_id_seq'::regclass);


--
-- Name: rundigest id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rundigest ALTER COLUMN id SET DEFAULT nextval('public.rundigest_id_seq'::regclass);


--
-- Name: runlog id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runlog ALTER COLUMN id SET DEFAULT nextval('public.runlog_id_seq'::regclass);


--
-- Name: runtarget id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runtarget ALTER COLUMN id SET DEFAULT nextval('public.runtarget_id_seq'::regclass);


--
-- Name: samplechunk id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.samplechunk ALTER COLUMN id SET DEFAULT nextval('public.samplechunk_id_seq'::regclass);


--
-- Name: task id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.task ALTER COLUMN id SET DEFAULT nextval('public.task_id_seq'::regclass);


--
-- Name: template id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.template ALTER COLUMN id SET DEFAULT nextval('public.template_id_seq'::regclass);


--
-- Name: vote id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.vote ALTER COLUMN id SET DEFAULT nextval('public.vote_id_seq'::regclass);


--
-- Data for Name: _migrations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public._migrations VALUES (1, 'm001_initial', '2026-11-27T20:43:53.175192');
INSERT INTO public._migrations VALUES (2, 'm002_item_progress_indexes', '2026-11-27T20:43:53.187498');
INSERT INTO public._migrations VALUES (3, 'm003_item_judge_cost', '2026-11-27T20:43:53.217296');
INSERT INTO public._migrations VALUES (4, 'm004_item_updated_at_index', '2026-11-27T20:43:53.222690');
INSERT INTO public._migrations VALUES (5, 'm005_item_claimed_until', '2026-11-27T20:43:53.238856');
INSERT INTO public._migrations VALUES (6, 'm010_outage', '2026-11-27T20:43:53.254776');
INSERT INTO public._migrations VALUES (7, 'm011_item_answer_cut', '2026-11-27T20:43:53.271861');
INSERT INTO public._migrations VALUES (8, 'm012_item_judge_history', '2026-11-27T20:43:53.292651');
INSERT INTO public._migrations VALUES (9, 'm014_run_target_label', '2026-11-27T20:43:53.333238');
INSERT INTO public._migrations VALUES (10, 'm015_ratings', '2026-11-27T20:43:53.351674');
INSERT INTO public._migrations VALUES (11, 'm016_judge_jobs', '2026-11-27T20:43:53.365808');
INSERT INTO public._migrations VALUES (12, 'm017_votes', '2026-11-27T20:43:53.374292');
INSERT INTO public._migrations VALUES (13, 'm018_templates_and_queue', '2026-11-27T20:43:53.395351');
INSERT INTO public._migrations VALUES (14, 'm019_item_repeats', '2026-11-27T20:43:53.411832');
INSERT INTO public._migrations VALUES (15, 'm020_trends_and_alerts', '2026-11-27T20:43:53.427820');
INSERT INTO public._migrations VALUES (16, 'm021_system_samples', '2026-11-27T20:43:53.429907');
INSERT INTO public._migrations VALUES (17, 'm022_item_reused_from', '2026-11-27T20:43:53.447996');
INSERT INTO public._migrations VALUES (18, 'm023_run_outputs', '2026-11-27T20:43:53.463660');


--
-- Data for Name: alert; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: baseline; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: collection; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: collectiontask; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: item; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.item VALUES (1, 1, 1, NULL, 't1', 'general', '', '', 't1?', NULL, '', '', '', '', NULL, NULL, NULL, 0, NULL, NULL, 'COMPLETED', 1, 1, NULL, NULL, NULL, NULL, NULL, NULL, 'a', NULL, false, 1200, NULL, NULL, NULL, NULL, NULL, 40, NULL, NULL, false, 0.03, NULL, NULL, '2026-11-22 12:00:00', NULL, NULL, NULL, NULL, 80, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '2026-11-22 12:00:00', '2026-11-22 12:00:00');
INSERT INTO public.item VALUES (2, 1, 1, NULL, 't2', 'general', '', '', 't2?', NULL, '', '', '', '', NULL, NULL, NULL, 0, NULL, NULL, 'FAILED', 1, 1, NULL, NULL, NULL, NULL, NULL, NULL, 'a', NULL, false, 1200, NULL, NULL, NULL, NULL, NULL, 40, NULL, NULL, false, 0.03, NULL, NULL, '2026-11-22 12:00:00', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'answer', NULL, '2026-11-22 12:00:00', '2026-11-22 12:00:00');
INSERT INTO public.item VALUES (3, 1, 2, NULL, 't1', 'general', '', '', 't1?', NULL, '', '', '', '', NULL, NULL, NULL, 0, NULL, NULL, 'COMPLETED', 1, 1, NULL, NULL, NULL, NULL, NULL, NULL, 'a', NULL, false, 1200, NULL, NULL, NULL, NULL, NULL, 40, NULL, NULL, false, 0.03, NULL, NULL, '2026-11-22 12:00:00', NULL, NULL, NULL, NULL, 60, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '2026-11-22 12:00:00', '2026-11-22 12:00:00');


--
-- Data for Name: judgecall; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: judgejob; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: lease; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: outage; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: price; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: provider; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.provider VALUES (1, 'local', 'OLLAMA', 'http://local:11434', '/api/tags', '/api/chat', 120, 1, '2026-11-22 12:00:00', '2026-11-22 12:00:00');
INSERT INTO public.provider VALUES (2, 'remote', 'OLLAMA', 'http://remote:11434', '/api/tags', '/api/chat', 120, 1, '2026-11-22 12:00:00', '2026-11-22 12:00:00');


--
-- Data for Name: providerheader; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: rating; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: ratingtag; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: run; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.run VALUES (1, 'old-run', 'old run', NULL, 'local', 'judge-1', NULL, 'FINISHED', 'JUDGING', 'running', NULL, NULL, NULL, NULL, 'web', NULL, NULL, NULL, NULL, NULL, '2026-11-22 12:00:00', '2026-11-22 12:00:00', '2026-11-22 12:00:00', '2026-11-22 12:00:00');


--
-- Data for Name: runaggregate; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: runcollection; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: rundigest; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: runlog; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: runtarget; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.runtarget VALUES (1, 1, 1, 'local', 'm1', '{"temperature": 0.2}', 0, NULL, NULL, NULL, 'm1 · temperature 0.2');
INSERT INTO public.runtarget VALUES (2, 1, 2, 'remote', 'm1', '{"temperature": 0.2}', 1, NULL, NULL, NULL, 'remote/m1 · temperature 0.2');


--
-- Data for Name: samplechunk; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: task; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: template; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: vote; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Name: _migrations_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public._migrations_id_seq', 18, true);


--
-- Name: alert_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.alert_id_seq', 1, false);


--
-- Name: baseline_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.baseline_id_seq', 1, false);


--
-- Name: collection_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.collection_id_seq', 1, false);


--
-- Name: collectiontask_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.collectiontask_id_seq', 1, false);


--
-- Name: item_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.item_id_seq', 3, true);


--
-- Name: judgecall_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.judgecall_id_seq', 1, false);


--
-- Name: judgejob_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.judgejob_id_seq', 1, false);


--
-- Name: lease_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.lease_id_seq', 1, false);


--
-- Name: outage_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.outage_id_seq', 1, false);


--
-- Name: price_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.price_id_seq', 1, false);


--
-- Name: provider_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.provider_id_seq', 2, true);


--
-- Name: providerheader_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.providerheader_id_seq', 1, false);


--
-- Name: rating_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.rating_id_seq', 1, false);


--
-- Name: ratingtag_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.ratingtag_id_seq', 1, false);


--
-- Name: run_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.run_id_seq', 1, true);


--
-- Name: runaggregate_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.runaggregate_id_seq', 1, false);


--
-- Name: runcollection_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.runcollection_id_seq', 1, false);


--
-- Name: rundigest_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.rundigest_id_seq', 1, false);


--
-- Name: runlog_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.runlog_id_seq', 1, false);


--
-- Name: runtarget_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.runtarget_id_seq', 2, true);


--
-- Name: samplechunk_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.samplechunk_id_seq', 1, false);


--
-- Name: task_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.task_id_seq', 1, false);


--
-- Name: template_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.template_id_seq', 1, false);


--
-- Name: vote_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.vote_id_seq', 1, false);


--
-- Name: _migrations _migrations_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public._migrations
    ADD CONSTRAINT _migrations_name_key UNIQUE (name);


--
-- Name: _migrations _migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public._migrations
    ADD CONSTRAINT _migrations_pkey PRIMARY KEY (id);


--
-- Name: alert alert_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alert
    ADD CONSTRAINT alert_pkey PRIMARY KEY (id);


--
-- Name: baseline baseline_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.baseline
    ADD CONSTRAINT baseline_pkey PRIMARY KEY (id);


--
-- Name: collection collection_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.collection
    ADD CONSTRAINT collection_pkey PRIMARY KEY (id);


--
-- Name: collectiontask collectiontask_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.collectiontask
    ADD CONSTRAINT collectiontask_pkey PRIMARY KEY (id);


--
-- Name: item item_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.item
    ADD CONSTRAINT item_pkey PRIMARY KEY (id);


--
-- Name: judgecall judgecall_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.judgecall
    ADD CONSTRAINT judgecall_pkey PRIMARY KEY (id);


--
-- Name: judgejob judgejob_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.judgejob
    ADD CONSTRAINT judgejob_pkey PRIMARY KEY (id);


--
-- Name: lease lease_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.lease
    ADD CONSTRAINT lease_pkey PRIMARY KEY (id);


--
-- Name: outage outage_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.outage
    ADD CONSTRAINT outage_pkey PRIMARY KEY (id);


--
-- Name: price price_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.price
    ADD CONSTRAINT price_pkey PRIMARY KEY (id);


--
-- Name: provider provider_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider
    ADD CONSTRAINT provider_pkey PRIMARY KEY (id);


--
-- Name: providerheader providerheader_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.providerheader
    ADD CONSTRAINT providerheader_pkey PRIMARY KEY (id);


--
-- Name: rating rating_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rating
    ADD CONSTRAINT rating_pkey PRIMARY KEY (id);


--
-- Name: ratingtag ratingtag_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ratingtag
    ADD CONSTRAINT ratingtag_pkey PRIMARY KEY (id);


--
-- Name: run run_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run
    ADD CONSTRAINT run_pkey PRIMARY KEY (id);


--
-- Name: runaggregate runaggregate_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runaggregate
    ADD CONSTRAINT runaggregate_pkey PRIMARY KEY (id);


--
-- Name: runcollection runcollection_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runcollection
    ADD CONSTRAINT runcollection_pkey PRIMARY KEY (id);


--
-- Name: rundigest rundigest_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rundigest
    ADD CONSTRAINT rundigest_pkey PRIMARY KEY (id);


--
-- Name: runlog runlog_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runlog
    ADD CONSTRAINT runlog_pkey PRIMARY KEY (id);


--
-- Name: runtarget runtarget_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runtarget
    ADD CONSTRAINT runtarget_pkey PRIMARY KEY (id);


--
-- Name: samplechunk samplechunk_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.samplechunk
    ADD CONSTRAINT samplechunk_pkey PRIMARY KEY (id);


--
-- Name: task task_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.task
    ADD CONSTRAINT task_pkey PRIMARY KEY (id);


--
-- Name: template template_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.template
    ADD CONSTRAINT template_pkey PRIMARY KEY (id);


--
-- Name: vote vote_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.vote
    ADD CONSTRAINT vote_pkey PRIMARY KEY (id);


--
-- Name: alert_against_run_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX alert_against_run_id ON public.alert USING btree (against_run_id);


--
-- Name: alert_run_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX alert_run_id ON public.alert USING btree (run_id);


--
-- Name: alert_run_id_series_against; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX alert_run_id_series_against ON public.alert USING btree (run_id, series, against);


--
-- Name: alert_state; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX alert_state ON public.alert USING btree (state);


--
-- Name: alert_template_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX alert_template_id ON public.alert USING btree (template_id);


--
-- Name: baseline_collection_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX baseline_collection_id ON public.baseline USING btree (collection_id);


--
-- Name: baseline_run_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX baseline_run_id ON public.baseline USING btree (run_id);


--
-- Name: collection_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX collection_name ON public.collection USING btree (name);


--
-- Name: collectiontask_collection_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX collectiontask_collection_id ON public.collectiontask USING btree (collection_id);


--
-- Name: collectiontask_collection_id_task_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX collectiontask_collection_id_task_id ON public.collectiontask USING btree (collection_id, task_id);


--
-- Name: collectiontask_task_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX collectiontask_task_id ON public.collectiontask USING btree (task_id);


--
-- Name: item_context_hash; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX item_context_hash ON public.item USING btree (context_hash);


--
-- Name: item_run_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX item_run_id ON public.item USING btree (run_id);


--
-- Name: item_run_id_answered_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX item_run_id_answered_at ON public.item USING btree (run_id, answered_at);


--
-- Name: item_run_id_category; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX item_run_id_category ON public.item USING btree (run_id, category);


--
-- Name: item_run_id_evaluation_score; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX item_run_id_evaluation_score ON public.item USING btree (run_id, evaluation_score);


--
-- Name: item_run_id_judged_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX item_run_id_judged_at ON public.item USING btree (run_id, judged_at);


--
-- Name: item_run_id_status_target_id_next_retry_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX item_run_id_status_target_id_next_retry_at ON public.item USING btree (run_id, status, target_id, next_retry_at);


--
-- Name: item_run_id_target_id_task_key; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX item_run_id_target_id_task_key ON public.item USING btree (run_id, target_id, task_key);


--
-- Name: item_run_id_time_taken_ms; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX item_run_id_time_taken_ms ON public.item USING btree (run_id, time_taken_ms);


--
-- Name: item_run_id_tokens_per_second; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX item_run_id_tokens_per_second ON public.item USING btree (run_id, tokens_per_second);


--
-- Name: item_run_id_updated_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX item_run_id_updated_at ON public.item USING btree (run_id, updated_at);


--
-- Name: item_target_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX item_target_id ON public.item USING btree (target_id);


--
-- Name: item_task_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX item_task_id ON public.item USING btree (task_id);


--
-- Name: judgecall_item_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX judgecall_item_id ON public.judgecall USING btree (item_id);


--
-- Name: judgecall_job_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX judgecall_job_id ON public.judgecall USING btree (job_id);


--
-- Name: judgecall_job_id_status; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX judgecall_job_id_status ON public.judgecall USING btree (job_id, status);


--
-- Name: judgecall_other_item_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX judgecall_other_item_id ON public.judgecall USING btree (other_item_id);


--
-- Name: judgecall_run_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX judgecall_run_id ON public.judgecall USING btree (run_id);


--
-- Name: judgecall_run_id_status_job_id_next_retry_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX judgecall_run_id_status_job_id_next_retry_at ON public.judgecall USING btree (run_id, status, job_id, next_retry_at);


--
-- Name: judgejob_judge_provider_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX judgejob_judge_provider_id ON public.judgejob USING btree (judge_provider_id);


--
-- Name: judgejob_run_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX judgejob_run_id ON public.judgejob USING btree (run_id);


--
-- Name: judgejob_target_a_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX judgejob_target_a_id ON public.judgejob USING btree (target_a_id);


--
-- Name: judgejob_target_b_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX judgejob_target_b_id ON public.judgejob USING btree (target_b_id);


--
-- Name: lease_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX lease_name ON public.lease USING btree (name);


--
-- Name: outage_run_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX outage_run_id ON public.outage USING btree (run_id);


--
-- Name: outage_run_id_provider_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX outage_run_id_provider_id ON public.outage USING btree (run_id, provider_id);


--
-- Name: price_provider_name_model; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX price_provider_name_model ON public.price USING btree (provider_name, model);


--
-- Name: provider_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX provider_name ON public.provider USING btree (name);


--
-- Name: providerheader_provider_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX providerheader_provider_id ON public.providerheader USING btree (provider_id);


--
-- Name: providerheader_provider_id_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX providerheader_provider_id_key ON public.providerheader USING btree (provider_id, key);


--
-- Name: rating_item_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX rating_item_id ON public.rating USING btree (item_id);


--
-- Name: rating_item_id_rating; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX rating_item_id_rating ON public.rating USING btree (item_id, rating);


--
-- Name: rating_run_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX rating_run_id ON public.rating USING btree (run_id);


--
-- Name: rating_run_id_rating; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX rating_run_id_rating ON public.rating USING btree (run_id, rating);


--
-- Name: ratingtag_item_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ratingtag_item_id ON public.ratingtag USING btree (item_id);


--
-- Name: ratingtag_rating_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ratingtag_rating_id ON public.ratingtag USING btree (rating_id);


--
-- Name: ratingtag_rating_id_tag; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX ratingtag_rating_id_tag ON public.ratingtag USING btree (rating_id, tag);


--
-- Name: ratingtag_tag_item_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ratingtag_tag_item_id ON public.ratingtag USING btree (tag, item_id);


--
-- Name: run_control; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX run_control ON public.run USING btree (control);


--
-- Name: run_created_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX run_created_at ON public.run USING btree (created_at);


--
-- Name: run_judge_provider_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX run_judge_provider_id ON public.run USING btree (judge_provider_id);


--
-- Name: run_run_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX run_run_id ON public.run USING btree (run_id);


--
-- Name: run_status; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX run_status ON public.run USING btree (status);


--
-- Name: run_template_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX run_template_id ON public.run USING btree (template_id);


--
-- Name: runaggregate_category_finished_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runaggregate_category_finished_at ON public.runaggregate USING btree (category, finished_at);


--
-- Name: runaggregate_run_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runaggregate_run_id ON public.runaggregate USING btree (run_id);


--
-- Name: runaggregate_run_id_category; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runaggregate_run_id_category ON public.runaggregate USING btree (run_id, category);


--
-- Name: runaggregate_target_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runaggregate_target_id ON public.runaggregate USING btree (target_id);


--
-- Name: runcollection_collection_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runcollection_collection_id ON public.runcollection USING btree (collection_id);


--
-- Name: runcollection_run_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runcollection_run_id ON public.runcollection USING btree (run_id);


--
-- Name: rundigest_finished_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX rundigest_finished_at ON public.rundigest USING btree (finished_at);


--
-- Name: rundigest_run_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX rundigest_run_id ON public.rundigest USING btree (run_id);


--
-- Name: runlog_run_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runlog_run_id ON public.runlog USING btree (run_id);


--
-- Name: runlog_run_id_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runlog_run_id_id ON public.runlog USING btree (run_id, id);


--
-- Name: runtarget_provider_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runtarget_provider_id ON public.runtarget USING btree (provider_id);


--
-- Name: runtarget_run_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runtarget_run_id ON public.runtarget USING btree (run_id);


--
-- Name: runtarget_run_id_label; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX runtarget_run_id_label ON public.runtarget USING btree (run_id, label);


--
-- Name: samplechunk_run_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX samplechunk_run_id ON public.samplechunk USING btree (run_id);


--
-- Name: samplechunk_run_id_seq; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX samplechunk_run_id_seq ON public.samplechunk USING btree (run_id, seq);


--
-- Name: task_category; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX task_category ON public.task USING btree (category);


--
-- Name: task_task_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX task_task_id ON public.task USING btree (task_id);


--
-- Name: template_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX template_name ON public.template USING btree (name);


--
-- Name: template_next_fire_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX template_next_fire_at ON public.template USING btree (next_fire_at);


--
-- Name: vote_item_low_item_high_voter; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX vote_item_low_item_high_voter ON public.vote USING btree (item_low, item_high, voter);


--
-- Name: vote_job_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX vote_job_id ON public.vote USING btree (job_id);


--
-- Name: vote_left_item_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX vote_left_item_id ON public.vote USING btree (left_item_id);


--
-- Name: vote_left_target_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX vote_left_target_id ON public.vote USING btree (left_target_id);


--
-- Name: vote_left_target_id_right_target_id_source_winner; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX vote_left_target_id_right_target_id_source_winner ON public.vote USING btree (left_target_id, right_target_id, source, winner);


--
-- Name: vote_right_item_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX vote_right_item_id ON public.vote USING btree (right_item_id);


--
-- Name: vote_right_target_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX vote_right_target_id ON public.vote USING btree (right_target_id);


--
-- Name: vote_right_target_id_source; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX vote_right_target_id_source ON public.vote USING btree (right_target_id, source);


--
-- Name: vote_winner_target_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX vote_winner_target_id ON public.vote USING btree (winner_target_id);


--
-- Name: alert alert_against_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alert
    ADD CONSTRAINT alert_against_run_id_fkey FOREIGN KEY (against_run_id) REFERENCES public.run(id) ON DELETE SET NULL;


--
-- Name: alert alert_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alert
    ADD CONSTRAINT alert_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.run(id) ON DELETE CASCADE;


--
-- Name: alert alert_template_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alert
    ADD CONSTRAINT alert_template_id_fkey FOREIGN KEY (template_id) REFERENCES public.template(id) ON DELETE SET NULL;


--
-- Name: baseline baseline_collection_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.baseline
    ADD CONSTRAINT baseline_collection_id_fkey FOREIGN KEY (collection_id) REFERENCES public.collection(id) ON DELETE CASCADE;


--
-- Name: baseline baseline_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.baseline
    ADD CONSTRAINT baseline_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.run(id) ON DELETE CASCADE;


--
-- Name: collectiontask collectiontask_collection_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.collectiontask
    ADD CONSTRAINT collectiontask_collection_id_fkey FOREIGN KEY (collection_id) REFERENCES public.collection(id) ON DELETE CASCADE;


--
-- Name: collectiontask collectiontask_task_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.collectiontask
    ADD CONSTRAINT collectiontask_task_id_fkey FOREIGN KEY (task_id) REFERENCES public.task(id) ON DELETE CASCADE;


--
-- Name: item item_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.item
    ADD CONSTRAINT item_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.run(id) ON DELETE CASCADE;


--
-- Name: item item_target_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.item
    ADD CONSTRAINT item_target_id_fkey FOREIGN KEY (target_id) REFERENCES public.runtarget(id) ON DELETE CASCADE;


--
-- Name: item item_task_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.item
    ADD CONSTRAINT item_task_id_fkey FOREIGN KEY (task_id) REFERENCES public.task(id) ON DELETE SET NULL;


--
-- Name: judgecall judgecall_item_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.judgecall
    ADD CONSTRAINT judgecall_item_id_fkey FOREIGN KEY (item_id) REFERENCES public.item(id) ON DELETE CASCADE;


--
-- Name: judgecall judgecall_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.judgecall
    ADD CONSTRAINT judgecall_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.judgejob(id) ON DELETE CASCADE;


--
-- Name: judgecall judgecall_other_item_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.judgecall
    ADD CONSTRAINT judgecall_other_item_id_fkey FOREIGN KEY (other_item_id) REFERENCES public.item(id) ON DELETE CASCADE;


--
-- Name: judgecall judgecall_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.judgecall
    ADD CONSTRAINT judgecall_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.run(id) ON DELETE CASCADE;


--
-- Name: judgejob judgejob_judge_provider_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.judgejob
    ADD CONSTRAINT judgejob_judge_provider_id_fkey FOREIGN KEY (judge_provider_id) REFERENCES public.provider(id) ON DELETE SET NULL;


--
-- Name: judgejob judgejob_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.judgejob
    ADD CONSTRAINT judgejob_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.run(id) ON DELETE CASCADE;


--
-- Name: judgejob judgejob_target_a_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.judgejob
    ADD CONSTRAINT judgejob_target_a_id_fkey FOREIGN KEY (target_a_id) REFERENCES public.runtarget(id) ON DELETE CASCADE;


--
-- Name: judgejob judgejob_target_b_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.judgejob
    ADD CONSTRAINT judgejob_target_b_id_fkey FOREIGN KEY (target_b_id) REFERENCES public.runtarget(id) ON DELETE CASCADE;


--
-- Name: outage outage_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.outage
    ADD CONSTRAINT outage_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.run(id) ON DELETE CASCADE;


--
-- Name: providerheader providerheader_provider_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.providerheader
    ADD CONSTRAINT providerheader_provider_id_fkey FOREIGN KEY (provider_id) REFERENCES public.provider(id) ON DELETE CASCADE;


--
-- Name: rating rating_item_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rating
    ADD CONSTRAINT rating_item_id_fkey FOREIGN KEY (item_id) REFERENCES public.item(id) ON DELETE CASCADE;


--
-- Name: rating rating_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rating
    ADD CONSTRAINT rating_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.run(id) ON DELETE CASCADE;


--
-- Name: ratingtag ratingtag_item_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ratingtag
    ADD CONSTRAINT ratingtag_item_id_fkey FOREIGN KEY (item_id) REFERENCES public.item(id) ON DELETE CASCADE;


--
-- Name: ratingtag ratingtag_rating_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ratingtag
    ADD CONSTRAINT ratingtag_rating_id_fkey FOREIGN KEY (rating_id) REFERENCES public.rating(id) ON DELETE CASCADE;


--
-- Name: run run_judge_provider_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run
    ADD CONSTRAINT run_judge_provider_id_fkey FOREIGN KEY (judge_provider_id) REFERENCES public.provider(id) ON DELETE SET NULL;


--
-- Name: run run_template_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run
    ADD CONSTRAINT run_template_id_fkey FOREIGN KEY (template_id) REFERENCES public.template(id) ON DELETE SET NULL;


--
-- Name: runaggregate runaggregate_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runaggregate
    ADD CONSTRAINT runaggregate_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.run(id) ON DELETE CASCADE;


--
-- Name: runaggregate runaggregate_target_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runaggregate
    ADD CONSTRAINT runaggregate_target_id_fkey FOREIGN KEY (target_id) REFERENCES public.runtarget(id) ON DELETE CASCADE;


--
-- Name: runcollection runcollection_collection_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runcollection
    ADD CONSTRAINT runcollection_collection_id_fkey FOREIGN KEY (collection_id) REFERENCES public.collection(id) ON DELETE SET NULL;


--
-- Name: runcollection runcollection_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runcollection
    ADD CONSTRAINT runcollection_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.run(id) ON DELETE CASCADE;


--
-- Name: rundigest rundigest_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rundigest
    ADD CONSTRAINT rundigest_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.run(id) ON DELETE CASCADE;


--
-- Name: runlog runlog_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runlog
    ADD CONSTRAINT runlog_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.run(id) ON DELETE CASCADE;


--
-- Name: runtarget runtarget_provider_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runtarget
    ADD CONSTRAINT runtarget_provider_id_fkey FOREIGN KEY (provider_id) REFERENCES public.provider(id) ON DELETE SET NULL;


--
-- Name: runtarget runtarget_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runtarget
    ADD CONSTRAINT runtarget_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.run(id) ON DELETE CASCADE;


--
-- Name: samplechunk samplechunk_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.samplechunk
    ADD CONSTRAINT samplechunk_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.run(id) ON DELETE CASCADE;


--
-- Name: vote vote_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.vote
    ADD CONSTRAINT vote_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.judgejob(id) ON DELETE SET NULL;


--
-- Name: vote vote_left_item_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.vote
    ADD CONSTRAINT vote_left_item_id_fkey FOREIGN KEY (left_item_id) REFERENCES public.item(id) ON DELETE CASCADE;


--
-- Name: vote vote_left_target_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.vote
    ADD CONSTRAINT vote_left_target_id_fkey FOREIGN KEY (left_target_id) REFERENCES public.runtarget(id) ON DELETE CASCADE;


--
-- Name: vote vote_right_item_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.vote
    ADD CONSTRAINT vote_right_item_id_fkey FOREIGN KEY (right_item_id) REFERENCES public.item(id) ON DELETE CASCADE;


--
-- Name: vote vote_right_target_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.vote
    ADD CONSTRAINT vote_right_target_id_fkey FOREIGN KEY (right_target_id) REFERENCES public.runtarget(id) ON DELETE CASCADE;


--
-- Name: vote vote_winner_target_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.vote
    ADD CONSTRAINT vote_winner_target_id_fkey FOREIGN KEY (winner_target_id) REFERENCES public.runtarget(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--


