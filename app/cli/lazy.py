"""A click group whose heavy commands are imported only when they run (click's documented
"lazily loading subcommands" pattern): `llmbench run` should not import the web app. The same
for a heavy step a command takes only sometimes (load): a run writes report.html, with Jinja
and pygal, only when its config asks for files."""

import gc
import importlib

import click


def load(target):
    """The attribute named by "module:attribute", its module imported now (once).

    The cyclic garbage collector waits while it imports: a command's modules are hundreds of
    classes and functions that live as long as the process, and the collections their
    allocations set off walked them again and again (~10 % of a run's import time)."""
    module, _, attribute = target.partition(":")
    paused = gc.isenabled()
    gc.disable()
    try:
        found = getattr(importlib.import_module(module), attribute)
    finally:
        if paused:
            gc.enable()
    context = click.get_current_context(silent=True)
    if paused and context is not None:
        # Imported with the collector paused, every new object is still in its youngest
        # generation: the first collection after it walked them all (36 ms of a 10-task run's
        # CPU, 14 ms of validate's). Frozen, it does not; thawed when the command ends, as
        # main() does (a test process running many commands still collects what each left).
        gc.freeze()
        context.call_on_close(gc.unfreeze)
    return found


class LazyGroup(click.Group):
    """A group that also lists `lazy` commands, {name: "module:attribute"}, and imports one's
    module only when that command is asked for (to run it or to show its help)."""

    def __init__(self, *args, lazy=None, summaries=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})
        # {name: the first paragraph of its help}: --help lists the lazy commands from these,
        # importing none of them (tests/test_cli_imports.py keeps them the commands' own).
        self.summaries = dict(summaries or {})

    def list_commands(self, ctx):
        return sorted([*super().list_commands(ctx), *self.lazy])

    def get_command(self, ctx, cmd_name):
        if cmd_name in self.lazy:
            return load(self.lazy[cmd_name])
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx, formatter):
        """The Commands section as click writes it, a lazy command's line from its summary."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            if name in self.summaries:
                # A stand-in with the summary as its help shortens it as the command would.
                command = click.Command(name, help=self.summaries[name])
            else:
                command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)
