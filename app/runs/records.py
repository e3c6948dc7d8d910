"""A run's record, for an audit trail: the llmbench version that made it, the
command line and the config as given (secrets masked, by the caller that knows them), and the
hashes of its tasks as asked (dataset) and of the judge's prompt."""

from .. import __version__
from ..db.models import Run


def tool_version():
    """This llmbench's version (app/__init__.py)."""
    return __version__


def record_invocation(run, command_line, config_given):
    """Keep how the run was asked for: the command line and the config text, both masked."""
    Run.update(command_line=command_line, config_given=config_given).where(
        Run.id == run.id
    ).execute()


def run_record(run):
    """The record as a dict (summary.json's `record`, `llmbench show`)."""
    return {
        "toolVersion": run.tool_version,
        "commandLine": run.command_line,
        "config": run.config_given,
        "datasetHash": run.dataset_hash,
        "promptHash": run.prompt_hash,
    }
