"""A process that checks the schedules like a server would, for the two-process firing test.

    python -m tests.fire_worker DB_PATH GO_FILE START_ISO MINUTES

Waits until GO_FILE exists (so two workers start together), then checks the schedules once per
simulated minute from START_ISO on, and prints how many runs it fired.
"""

import datetime as dt
import os
import sys
import time

from app import crypto
from app.db.connection import database
from app.db.migrations import open_db
from app.schedules.firing import fire_due
from tests.keys import TEST_KEY_B64


def main(db_path, go_file, start, minutes):
    crypto.set_key(crypto.load_key(None, TEST_KEY_B64, "/nonexistent"))
    open_db(db_path)
    deadline = time.monotonic() + 30
    while not os.path.exists(go_file):
        if time.monotonic() > deadline:
            raise SystemExit("never told to go")
        time.sleep(0.005)
    fired = 0
    start = dt.datetime.fromisoformat(start)
    with database.connection_context():
        for minute in range(int(minutes)):
            fired += len(fire_due(start + dt.timedelta(minutes=minute, seconds=1)))
    print(fired, flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
