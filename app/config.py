"""Configuration: defaults, then instance/config.py, then LLMBENCH_* env, then test_config."""

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
INSTANCE_PATH = REPO_ROOT / "instance"

# Keys are the LLMBENCH_* names without the prefix (LLMBENCH_DB -> DB).
DEFAULTS = {
    "DB": str(INSTANCE_PATH / "llmbench.db"),
    "MASTER_KEY_PATH": None,
    "MASTER_KEY_BASE64": None,
    "HOST": "127.0.0.1",
    "PORT": 8080,
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
    # System metrics: one sample every this many seconds while a run is worked on (0: off).
    "SYSMETRICS_SECONDS": 2.0,
}

# Documented environment variables (README is tested against this list).
ENV_NAMES = [
    "LLMBENCH_DB",
    "LLMBENCH_MASTER_KEY_PATH",
    "LLMBENCH_MASTER_KEY_BASE64",
    "LLMBENCH_HOST",
    "LLMBENCH_PORT",
    "LLMBENCH_MAX_ATTEMPTS",
    "LLMBENCH_LEASE_SECONDS",
    "LLMBENCH_MAX_RETRY_SECONDS",
    "LLMBENCH_SYSMETRICS_SECONDS",
]


def _coerce(value, default):
    if isinstance(default, bool):
        return str(value).lower() in ("1", "true", "yes", "on")
    if isinstance(default, int):
        return int(value)
    if isinstance(default, float):
        return float(value)
    return value


def load(test_config=None, environ=None):
    """Return the layered config as a plain dict (usable without Flask)."""
    environ = os.environ if environ is None else environ
    config = dict(DEFAULTS)
    instance_file = INSTANCE_PATH / "config.py"
    if instance_file.exists():
        namespace = {}
        exec(compile(instance_file.read_text(), str(instance_file), "exec"), namespace)
        config.update({k: v for k, v in namespace.items() if k.isupper()})
    for key, default in DEFAULTS.items():
        env_value = environ.get(f"LLMBENCH_{key}")
        if env_value not in (None, ""):
            config[key] = _coerce(env_value, default) if default is not None else env_value
    if test_config:
        config.update(test_config)
    return config
