"""llmbench. The web app is built by app.factory.create_app; importing this package starts
nothing and imports no other module (sys is built in).

It does keep Peewee from importing a PostgreSQL driver at its own import: Peewee (and
playhouse.postgres_ext, which the migrator imports) try psycopg and psycopg2 there whenever
they are installed, ~100 ms of every command, even on SQLite. While those two modules execute,
the drivers read as not installed; a PostgreSQL URL then imports psycopg and hands it to Peewee
(db/postgres.py) before any PostgreSQL database is built, so Peewee's own classes (its fields'
Binary, its adapter) find the driver as if it had imported it."""

import sys

# Not imported by Peewee at its import (db/postgres.py gives Peewee psycopg when it is needed).
DRIVERS = ("psycopg", "psycopg2", "psycopg2cffi")
WITHOUT_DRIVER = frozenset({"peewee", "playhouse.postgres_ext"})


class _WithoutDriver:
    """The loader of `peewee` (or playhouse.postgres_ext) with the drivers not yet imported
    marked unimportable (None in sys.modules) while it executes; otherwise that loader."""

    def __init__(self, loader):
        self.loader = loader

    def __getattr__(self, name):  # get_source, get_filename, is_package…: the loader's own
        return getattr(self.loader, name)

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        hidden = [name for name in DRIVERS if name not in sys.modules]
        for name in hidden:
            sys.modules[name] = None  # `import name` raises ImportError (the language's rule)
        try:
            self.loader.exec_module(module)
        finally:
            for name in hidden:
                if sys.modules.get(name, False) is None:
                    del sys.modules[name]


class _PeeweeWithoutDriver:
    """A meta path finder that finds `peewee` and playhouse.postgres_ext as the finders after
    it do, with their loader wrapped (_WithoutDriver), and stays out of every other import."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name not in WITHOUT_DRIVER:
            return None
        after = sys.meta_path[sys.meta_path.index(cls) + 1 :]
        for finder in after:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find else None
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _WithoutDriver(spec.loader)
                return spec
        return None


if "peewee" not in sys.modules and _PeeweeWithoutDriver not in sys.meta_path:
    sys.meta_path.insert(0, _PeeweeWithoutDriver)
