"""A throwaway orchestrator process for the crash test: continue one run until it is finished.

    python -m tests.crash_worker DB_PATH RUN_ID LEASE_SECONDS [--standby]

--standby: start (imports, config) and then wait for a line on stdin before anything else, so
a test can start the next worker while the current one works and let it go once it is killed.
It waits for the lease (a killed predecessor's lease goes stale after LEASE_SECONDS), continues
the run the takeover stopped (as a person pressing Continue would), then works it to the end.
"""

import sys
import time

from app.config import load
from app.engine.foreground import run_foreground
from app.runs.control import resume_run
from app.runs.queries import get_run
from app.runs.state import run_state


def main(db_path, run_id, lease_seconds, standby=False):
    from app import crypto
    from app.db.connection import database
    from app.db.connection import init_db
    from app.engine import lease
    from tests.keys import TEST_KEY_B64

    config = load(
        {"DB": db_path, "LEASE_SECONDS": lease_seconds, "MASTER_KEY_BASE64": TEST_KEY_B64},
        environ={},
    )
    crypto.set_key(crypto.load_key(None, TEST_KEY_B64, "/nonexistent"))
    init_db(db_path)
    if standby and not sys.stdin.readline():
        return 3  # the test ended without letting it go
    holder = lease.process_holder()
    with database.connection_context():
        deadline = time.monotonic() + 30
        waiting = False
        while not lease.acquire(holder, lease_seconds):
            if not waiting:  # tells the test this process is alive and asking for the lease
                print("waiting for the lease", flush=True)
                waiting = True
            if time.monotonic() > deadline:
                print("no lease", flush=True)
                return 2
            time.sleep(0.05)
        run = get_run(run_id)
        if run_state(run) in ("paused", "stopped"):
            resume_run(run_id)
        print("working", flush=True)
        state = run_foreground(run_id, config, holder=holder)
        print(state, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], float(sys.argv[3]), "--standby" in sys.argv[4:]))
