"""A throwaway web server process for the labels crash test: serve the app on one database.

    python -m tests.labels_server DB_PATH

Prints "port N" once it listens on 127.0.0.1, then serves until it is killed.
"""

import sys
from pathlib import Path

from werkzeug.serving import make_server

from tests.conftest import make_app


def main(db_path):
    app = make_app(Path(db_path).parent, DB=db_path)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    print(f"port {server.server_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1])
