"""A real, throwaway PostgreSQL for tests: initdb in a temp dir, pg_ctl on a free loopback port.

    status = available()                 # falsy with .reason when binaries or driver are missing
    with running_postgres() as url:      # postgresql://postgres@127.0.0.1:PORT/llmbench_test
        ...                              # per-test databases: tests/pg_databases.py

Uses Debian's postgresql package (`apt-get install -y postgresql`): the binaries are found on
PATH or in /usr/lib/postgresql/*/bin. PostgreSQL refuses to run as root, so as root initdb and
pg_ctl run as the `postgres` user the package creates (else `nobody`), via subprocess's
user=/group=; the cluster is a fresh folder in /dev/shm (or /tmp) owned by that user. Every
step is bounded by a timeout, and the server is stopped (`pg_ctl stop -m fast`, then
SIGQUIT/SIGKILL to the postmaster of our own data dir) and its folder removed when the block
ends; a cluster left behind by a killed test process is swept at the next start.
"""

import contextlib
import glob
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tests import ram_disk
from tests.pg_databases import create_database

BINARIES = ("initdb", "pg_ctl", "postgres")
SEARCH_GLOBS = ("/usr/lib/postgresql/*/bin",)  # Debian: one folder per major version
INSTALL_HINT = "install Debian's PostgreSQL (apt-get install -y postgresql)"
DRIVER_HINT = "pip install 'psycopg[binary]'"
DATABASE = "llmbench_test"
SUPERUSER = "postgres"
# Durability off: a test cluster never survives a crash, and fsync is most of its write cost.
SERVER_SETTINGS = (
    "listen_addresses=127.0.0.1",
    "fsync=off",
    "synchronous_commit=off",
    "full_page_writes=off",
)
INITDB_TIMEOUT = 120
START_TIMEOUT = 30
STOP_TIMEOUT = 30
PREFIX = "llmbench-pg-"
OWNER_FILE = "owner.pid"  # the test process that started the cluster (see sweep_stale)
START_TRIES = 3  # a free port can be taken between choosing it and postgres binding it


class PostgresUnavailable(RuntimeError):
    """PostgreSQL cannot be started here; the message names the fix."""


@dataclass(frozen=True)
class Availability:
    """Whether a test PostgreSQL can start: falsy with the reason (and the fix) when not."""

    ok: bool
    reason: str
    bindir: Path | None = None

    def __bool__(self):
        return self.ok


def find_bindir(path=None, globs=None):
    """The folder holding initdb, pg_ctl and postgres (PATH first, newest Debian one next)."""
    globs = SEARCH_GLOBS if globs is None else globs
    on_path = [shutil.which(name, path=path) for name in BINARIES]
    if all(on_path):
        folders = {Path(p).resolve().parent for p in on_path}
        if len(folders) == 1:
            return folders.pop()
    candidates = [Path(p) for pattern in globs for p in glob.glob(pattern)]
    candidates.sort(key=_major_version, reverse=True)
    for folder in candidates:
        if all(os.access(folder / name, os.X_OK) for name in BINARIES):
            return folder
    return None


def _major_version(folder):
    try:
        return int(folder.parent.name)
    except ValueError:
        return -1


def available(path=None, globs=None):
    """Can a test PostgreSQL start here? Checks the server binaries and the psycopg driver."""
    globs = SEARCH_GLOBS if globs is None else globs
    bindir = find_bindir(path, globs)
    if bindir is None:
        searched = ", ".join(("PATH", *globs))
        return Availability(False, f"no {'/'.join(BINARIES)} in {searched}: {INSTALL_HINT}")
    if importlib.util.find_spec("psycopg") is None:
        return Availability(False, f"the psycopg driver is not installed: {DRIVER_HINT}", bindir)
    return Availability(True, f"PostgreSQL binaries in {bindir}", bindir)


# ---- the server ----------------------------------------------------------------------------


def _run_as():
    """(uid, gid) to run the server as: ourselves, or an unprivileged user when we are root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return entry.pw_uid, entry.pw_gid
    raise PostgresUnavailable(
        "running as root and neither a `postgres` nor a `nobody` user exists: "
        "PostgreSQL refuses to run as root; create one (useradd --system postgres)"
    )


def _env():
    """Our environment minus PG* variables (a developer's PGDATA/PGPORT must not leak in)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["LC_ALL"] = "C"
    return env


def temp_base():
    """Where clusters live: RAM (/dev/shm) when it has room, else the temp dir.

    CREATE DATABASE copies the template's ~8 MB of files, so RAM beats a busy disk. The path
    stays short: the Unix socket's path must fit in 107 bytes.
    """
    return ram_disk.ram_folder() or ("/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir())


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _tool(bindir, workdir, args, timeout, log):
    """Run one PostgreSQL binary as the server's user, output appended to `log`; bounded."""
    ids = _run_as()
    kwargs = {"user": ids[0], "group": ids[1], "extra_groups": []} if ids else {}
    with open(log, "ab") as out:
        proc = subprocess.run(
            [str(bindir / args[0]), *args[1:]],
            cwd=workdir,
            env=_env(),
            stdin=subprocess.DEVNULL,
            stdout=out,  # a file, not a pipe: the postmaster pg_ctl forks must not hold it
            stderr=subprocess.STDOUT,
            timeout=timeout,
            check=False,
            **kwargs,
        )
    return proc.returncode


def _tail(log, lines=20):
    try:
        return "\n".join(Path(log).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


class _Cluster:
    """One initdb'd data dir in a temp folder and the postmaster running on it."""

    def __init__(self, bindir, root):
        self.bindir = bindir
        self.root = Path(root)
        self.data = self.root / "data"
        self.log = self.root / "tools.log"
        self.server_log = self.root / "server.log"
        self.port = None
        self.timings = {}

    @classmethod
    def create(cls, bindir, base):
        """A new cluster folder under `base`, owned by the server's user, naming its owner."""
        cluster = cls(bindir, tempfile.mkdtemp(prefix=PREFIX, dir=base))
        (cluster.root / OWNER_FILE).write_text(str(os.getpid()))
        ids = _run_as()
        if ids:
            os.chown(cluster.root, *ids)
        return cluster

    def initdb(self):
        started = time.monotonic()
        args = ["initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8"]
        # C collation sorts text by bytes, as SQLite's default BINARY collation does.
        args += ["--locale=C", "--no-sync", "--no-instructions"]
        if _tool(self.bindir, self.root, args, INITDB_TIMEOUT, self.log) != 0:
            raise PostgresUnavailable(f"initdb failed:\n{_tail(self.log)}")
        self.timings["initdb"] = time.monotonic() - started

    def start(self):
        started = time.monotonic()
        for _ in range(START_TRIES):
            port = _free_port()
            options = f"-p {port} -k {self.root} " + " ".join(f"-c {s}" for s in SERVER_SETTINGS)
            args = ["pg_ctl", "-D", str(self.data), "-l", str(self.server_log), "-o", options]
            args += ["-w", "-t", str(START_TIMEOUT), "start"]
            if _tool(self.bindir, self.root, args, START_TIMEOUT + 10, self.log) == 0:
                self.port = port
                self.timings["start"] = time.monotonic() - started
                return
            self.kill()  # a half-started postmaster must not linger before the next try
        raise PostgresUnavailable(
            f"pg_ctl start failed {START_TRIES} times:\n{_tail(self.log)}\n{_tail(self.server_log)}"
        )

    def stop(self):
        started = time.monotonic()
        try:
            args = ["pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", str(STOP_TIMEOUT)]
            stopped = _tool(self.bindir, self.root, [*args, "stop"], STOP_TIMEOUT + 10, self.log)
        except subprocess.TimeoutExpired:
            stopped = None
        if stopped != 0:
            self.kill()
        self.timings["stop"] = time.monotonic() - started

    def postmaster_pid(self):
        """The pid in our postmaster.pid, only while that process still runs on our data dir."""
        try:
            pid = int((self.data / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return None
        try:  # the pid may have been reused since: it must be a postgres on this data dir
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except FileNotFoundError:
            return None
        except OSError:
            return pid
        return pid if str(self.data).encode() in cmdline else None

    def kill(self):
        """Immediate shutdown of our own postmaster (SIGQUIT), SIGKILL if it will not go."""
        pid = self.postmaster_pid()
        if pid is None:
            return
        for sig, wait in ((signal.SIGQUIT, 10.0), (signal.SIGKILL, 5.0)):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                return
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    return
                time.sleep(0.05)

    def remove(self):
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def running_postgres(database=DATABASE, timings=None, base=None):
    """Start a throwaway PostgreSQL on 127.0.0.1 and yield the URL of an empty `database`.

    The cluster lives in a new folder under `base` (default: temp_base()). `timings`, when a
    dict, receives the seconds initdb, start and stop took.
    """
    status = available()
    if not status:
        raise PostgresUnavailable(status.reason)
    base = base or temp_base()
    sweep_stale(base, status.bindir)
    cluster = _Cluster.create(status.bindir, base)
    try:
        cluster.initdb()
        cluster.start()
        admin = f"postgresql://{SUPERUSER}@127.0.0.1:{cluster.port}/postgres"
        url = create_database(admin, database)
        yield url
    finally:
        try:
            cluster.stop()
        finally:
            cluster.remove()
            if timings is not None:
                timings.update(cluster.timings)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale(base, bindir):
    """Stop and remove clusters whose test process died without stopping them (SIGKILL).

    Only our own folders (PREFIX, with an OWNER_FILE whose process is gone) are touched.
    """
    for folder in glob.glob(os.path.join(base, PREFIX + "*")):
        try:
            owner = int(Path(folder, OWNER_FILE).read_text())
        except (OSError, ValueError):
            continue
        if not _alive(owner):
            stale = _Cluster(bindir, folder)
            stale.kill()
            stale.remove()
