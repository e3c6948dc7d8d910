"""llmbench. The web app is built by app.factory.create_app; importing this package starts
nothing and imports no other module (sys is built in).

It does keep Peewee from importing a PostgreSQL driver at its own import: Peewee (and
playhouse.postgres_ext, which the migrator imports) try psycopg and psycopg2 there whenever
they are installed (~100 ms, every command, even on SQLite). Only those imports are refused; a
PostgreSQL URL imports psycopg itself (db/postgres.py), and nothing llmbench uses of
postgres_ext needs it (only its hstore support)."""

import sys


class _NoDriverWhilePeeweeStarts:
    """A meta path finder that answers "not installed" for the PostgreSQL drivers while the
    module `peewee` or `playhouse.postgres_ext` is being executed, and stays out of every
    other import."""

    DRIVERS = frozenset({"psycopg", "psycopg2", "psycopg2cffi"})
    STARTING = ("peewee", "playhouse.postgres_ext")

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.partition(".")[0] not in cls.DRIVERS:
            return None
        if not any(_initializing(sys.modules.get(module)) for module in cls.STARTING):
            return None
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)


def _initializing(module):
    """True while `module` (or None) is being executed by its first import."""
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


if "peewee" not in sys.modules and _NoDriverWhilePeeweeStarts not in sys.meta_path:
    sys.meta_path.insert(0, _NoDriverWhilePeeweeStarts)
