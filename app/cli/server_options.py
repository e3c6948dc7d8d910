"""--server and --token: the options of the commands that can work on a remote llmbench.

Only the options: the API calls are remote.py's, with an HTTP client that `llmbench runs`,
`show`, `pause` and `stop` load only when they are given a server."""

import click


def server_options(command):
    """Add --server and --token to a command (both read from the environment too)."""
    command = click.option(
        "--token",
        envvar="LLMBENCH_TOKEN",
        help="A token for --server (`llmbench tokens create`; env LLMBENCH_TOKEN).",
    )(command)
    return click.option(
        "--server",
        envvar="LLMBENCH_SERVER",
        help="A remote llmbench's URL: use its API, not a database here (env LLMBENCH_SERVER).",
    )(command)
