"""Configuration: defaults, then the home's config.py, then LLMBENCH_* env, then test_config.

The home is where the database and its master key live: LLMBENCH_HOME when set, else
`instance/` beside the source in a checkout that has one (the tests, the README's workflow),
else the per-user data folder of an installed tool (platformdirs: ~/.local/share/llmbench)."""

import os
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_ROOT.parent
INSTANCE_PATH = REPO_ROOT / "instance"
APP_NAME = "llmbench"

# Keys are the LLMBENCH_* names without the prefix (LLMBENCH_DB -> DB).
DEFAULTS = {
    # A SQLite file (path or sqlite:///path) or postgresql://user:password@host:5432/db.
    # None: llmbench.db in the home (load() fills it in).
    "DB": None,
    # Where the database, its key and config.py live (home() below; load() fills it in).
    "HOME": None,
    # The PostgreSQL password when the URL has none (else libpq's ~/.pgpass); read by dburl.py
    # from the environment, never logged.
    "DB_PASSWORD": None,
    "MASTER_KEY_PATH": None,
    "MASTER_KEY_BASE64": None,
    "HOST": "127.0.0.1",
    "PORT": 8080,
    # Host header names answered besides loopback and HOST (comma-separated; "*" for any).
    "ALLOWED_HOSTS": "",
    # Only `llmbench serve` turns the orchestrator thread on.
    "SCHEDULER_ENABLED": False,
    "TICK_SECONDS": 1.0,
    # One tick works at most this long before returning to the scheduler.
    "TICK_SLICE_SECONDS": 5.0,
    "MAX_ATTEMPTS": 3,
    "BACKOFF_BASE_SECONDS": 2.0,
    "BACKOFF_MAX_SECONDS": 60.0,
    "MAX_RETRY_SECONDS": 900.0,
    "LEASE_SECONDS": 15.0,
    # A claim lasts the provider timeout plus this margin (and is extended while streaming).
    "CLAIM_MARGIN_SECONDS": 30.0,
    "LOAD_DEFAULTS": True,
    # The largest request body (an import's upload), in MiB; a bigger one gets a clear 413.
    "MAX_UPLOAD_MB": 64.0,
    # A model server that cannot be reached or is busy (429, 503, loading a model): its targets
    # wait, probed after 5 s doubling up to 60 s (or its Retry-After); still so after
    # OUTAGE_LIMIT_SECONDS, the run pauses (engine/breaker.py).
    "OUTAGE_PROBE_SECONDS": 5.0,
    "OUTAGE_PROBE_MAX_SECONDS": 60.0,
    "OUTAGE_LIMIT_SECONDS": 600.0,
    # Every call is bounded: max_tokens for targets that set none, the answer text kept.
    "DEFAULT_MAX_TOKENS": 2048,
    # Judgements in a row whose output fits no schema before the run pauses (engine/items.py).
    "JUDGE_UNUSABLE_TO_PAUSE": 5,
    "MAX_ANSWER_CHARS": 1024 * 1024,
    # System metrics: one sample every this many seconds while a run is worked on (0: off).
    "SYSMETRICS_SECONDS": 2.0,
    # The composite score (results/composite.py): quality's weight (efficiency gets the rest,
    # half time, half on-target), and its time curve: full time points under this many seconds
    # of median answer time, else this many points lost per minute.
    "COMPOSITE_QUALITY_WEIGHT": 0.70,
    "COMPOSITE_FULL_TIME_SECONDS": 30.0,
    "COMPOSITE_POINTS_PER_MINUTE": 3.0,
    # Accounts (app/accounts): "off" runs open even beyond loopback (logged); the first admin
    # of a container deploy; a company proxy's header naming the person, trusted only from
    # these addresses/networks, and the role of a name it gives first ("" makes none).
    "AUTH": "",
    "ADMIN_PASSWORD": None,
    "ADMIN_PASSWORD_FILE": None,
    "AUTH_PROXY_HEADER": "",
    "TRUSTED_PROXIES": "",
    "AUTH_PROXY_CREATE": "",
}

# Documented environment variables (README is tested against this list).
ENV_NAMES = [
    "LLMBENCH_DB",
    "LLMBENCH_DB_PASSWORD",
    "LLMBENCH_HOME",
    "LLMBENCH_MASTER_KEY_PATH",
    "LLMBENCH_MASTER_KEY_BASE64",
    "LLMBENCH_HOST",
    "LLMBENCH_PORT",
    "LLMBENCH_ALLOWED_HOSTS",
    "LLMBENCH_MAX_UPLOAD_MB",
    "LLMBENCH_MAX_ATTEMPTS",
    "LLMBENCH_LEASE_SECONDS",
    "LLMBENCH_CLAIM_MARGIN_SECONDS",
    "LLMBENCH_MAX_RETRY_SECONDS",
    "LLMBENCH_OUTAGE_LIMIT_SECONDS",
    "LLMBENCH_DEFAULT_MAX_TOKENS",
    "LLMBENCH_MAX_ANSWER_CHARS",
    "LLMBENCH_JUDGE_UNUSABLE_TO_PAUSE",
    "LLMBENCH_SYSMETRICS_SECONDS",
    "LLMBENCH_COMPOSITE_QUALITY_WEIGHT",
    "LLMBENCH_COMPOSITE_FULL_TIME_SECONDS",
    "LLMBENCH_COMPOSITE_POINTS_PER_MINUTE",
    "LLMBENCH_AUTH",
    "LLMBENCH_ADMIN_PASSWORD",
    "LLMBENCH_ADMIN_PASSWORD_FILE",
    "LLMBENCH_AUTH_PROXY_HEADER",
    "LLMBENCH_TRUSTED_PROXIES",
    "LLMBENCH_AUTH_PROXY_CREATE",
]


def _coerce(value, default):
    if isinstance(default, bool):
        return str(value).lower() in ("1", "true", "yes", "on")
    if isinstance(default, int):
        return int(value)
    if isinstance(default, float):
        return float(value)
    return value


def home(environ=None):
    """The folder holding the database, its key and config.py (see the module's docstring)."""
    environ = os.environ if environ is None else environ
    if environ.get("LLMBENCH_HOME"):
        return Path(environ["LLMBENCH_HOME"]).expanduser().resolve()
    if INSTANCE_PATH.is_dir():
        return INSTANCE_PATH
    # Lazy: platformdirs (~15 ms to import, every command reads the config) only for an
    # installed tool with no LLMBENCH_HOME; a checkout's instance/ and the tests never need it.
    from platformdirs import user_data_path

    return user_data_path(APP_NAME, appauthor=False)


def resource_dir(name):
    """`templates` or `static`: inside the package in an installed wheel, beside it in a
    checkout."""
    packaged = PACKAGE_ROOT / name
    return packaged if packaged.is_dir() else REPO_ROOT / name


def load(test_config=None, environ=None):
    """Return the layered config as a plain dict (usable without Flask); `HOME` is the home."""
    environ = os.environ if environ is None else environ
    config = dict(DEFAULTS)
    config["HOME"] = str(home(environ))
    config["DB"] = str(Path(config["HOME"]) / "llmbench.db")
    instance_file = Path(config["HOME"]) / "config.py"
    if instance_file.exists():
        namespace = {}
        exec(compile(instance_file.read_text(), str(instance_file), "exec"), namespace)
        config.update({k: v for k, v in namespace.items() if k.isupper()})
    for key, default in DEFAULTS.items():
        if key == "HOME":
            continue  # read by home() above
        env_value = environ.get(f"LLMBENCH_{key}")
        if env_value not in (None, ""):
            config[key] = _coerce(env_value, default) if default is not None else env_value
    if test_config:
        config.update(test_config)
    return config
