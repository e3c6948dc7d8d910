"""A run's record, for an audit trail: the llmbench version that made it, the
command line and the config as given (secrets masked, by the caller that knows them), and the
hashes of its tasks as asked (dataset) and of the judge's prompt."""

from functools import cache
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version

from ..db.models import Run


@cache  # read from the installed metadata once per process: every run asks
def tool_version():
    """The installed llmbench's version ("unknown" from a bare source tree)."""
    try:
        return version("llmbench")
    except PackageNotFoundError:
        return "unknown"


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
