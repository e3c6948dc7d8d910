"""The Flask app factory: config, master key, database, web app, orchestrator.

Its own module, not the package's __init__: `llmbench run` and the other commands import
`app.*` without paying for Flask (~0.3 s and ~15 MiB) they never use."""

import hashlib
import logging

from flask import Flask
from jinja2 import BytecodeCache
from werkzeug.exceptions import NotFound
from werkzeug.routing import IntegerConverter
from werkzeug.routing import Rule

from .catalog import startup
from .config import load
from .config import resource_dir
from .db import connection as db
from .db import migrations
from .engine import scheduler
from .exports import warm
from .ids import SQLITE_INT_MAX
from .schedules import service as schedules
from .web import init_app as init_web

log = logging.getLogger(__name__)


class RowIdConverter(IntegerConverter):
    """`<int:...>` in every route: a number past SQLite's integers is no row here (404).

    Raised here rather than by a `max` (a ValidationError): werkzeug turns that into 405 when
    a rule for another method has the same path, e.g. PUT /api/tasks/<huge>.
    """

    def to_python(self, value):
        number = super().to_python(value)
        if not -SQLITE_INT_MAX - 1 <= number <= SQLITE_INT_MAX:
            raise NotFound()
        return number


class CachedRule(Rule):
    """A URL rule whose url_for builders are compiled once per process, not once per app.

    werkzeug writes each rule's two builders as Python source, parses and compiles it when the
    rule is bound (~1.5 ms a rule; with ~175 rules that was most of building an app, which the
    tests do ~1 700 times). A builder depends only on the rule's parts, so an equal rule reuses
    the compiled function; werkzeug binds it to each rule as before (`__get__`).
    """

    _builders = {}

    def _compile_builder(self, append_unknown=True):
        # werkzeug's private parts (`_trace`): a werkzeug without them builds as it always did.
        trace = getattr(self, "_trace", None)
        if trace is None or (self.defaults and any(d and p in self.defaults for d, p in trace)):
            return super()._compile_builder(append_unknown)  # a default folded in: not shared
        key = (append_unknown, self.rule, tuple(trace), tuple(self.defaults or ()))
        builder = self._builders.get(key)
        if builder is None:
            builder = self._builders[key] = super()._compile_builder(append_unknown)
        return builder


class MemoryBytecodeCache(BytecodeCache):
    """Compiled templates kept for the process, shared by every app built in it.

    Each app's Jinja environment compiles a template on first use (~45 ms for a page with its
    includes); the tests build ~1 700 apps. A template whose source changed is compiled again
    (Jinja checks each entry's source checksum), as without the cache.
    """

    def __init__(self):
        self._code = {}

    def load_bytecode(self, bucket):
        code = self._code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket):
        self._code[bucket.key] = bucket.bytecode_to_string()


TEMPLATE_CODE = MemoryBytecodeCache()


def create_app(test_config=None):
    """Build the app: config, master key, database, extensions, blueprints, orchestrator."""
    config = load(test_config)
    app = Flask(
        __name__,
        instance_path=config["HOME"],
        template_folder=str(resource_dir("templates")),
        static_folder=str(resource_dir("static")),
    )
    app.config.update(config)
    app.url_rule_class = CachedRule
    app.jinja_options = {**app.jinja_options, "bytecode_cache": TEMPLATE_CODE}
    # Before any blueprint registers its rules: they look the converter up by name.
    app.url_map.converters["int"] = RowIdConverter

    migrations.open_db(app.config["DB"])
    # The key beside the database, checked against its secrets; the built-in tasks on an
    # empty one: the same as every command does (catalog/startup.py).
    key = startup.prepare(app.config)
    # Session/CSRF signing key derived from the master key: nothing else to keep safe.
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = hashlib.sha256(b"llmbench-session:" + key).hexdigest()
    db.init_app(app)

    init_web(app)

    if app.config["SCHEDULER_ENABLED"]:
        # The engine cannot import what sits above it: the schedules' check (fire due
        # templates, digest finished runs, alert webhooks) rides on its thread as a hook.
        # Then finished runs' figures are worked out on a thread of their own (exports/warm.py).
        scheduler.start(app.config, hooks=[schedules.on_tick, warm.on_tick])
    return app


def compile_templates(app):
    """Compile every page template of `app` into its Jinja cache; how many there are.

    A fresh server compiled each template on the first view that needed it: 150-250 ms of
    CPU on a person's first page, every template again in every new worker. `serve` calls this
    on a thread of its own as the worker starts (about 1.5 s of CPU for all of them)."""
    env = app.jinja_env
    names = env.list_templates()
    for name in names:
        env.get_template(name)
    return len(names)
