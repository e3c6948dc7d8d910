"""What the exit codes mean, in words: the group's --help and the epilog of the commands that
exit with them. Apart from output.py (which imports the database, the results and the engine's
lease) so that `llmbench --help` and `--version` import none of those."""

# Shown in --help and docs/CLI.md (tests/test_cli_exit_codes.py keeps them the same).
EXIT_CODES_HELP = (
    "Exit codes: 0 done (item failures are reported, not fatal), 1 anything else (an "
    "unexpected error; another orchestrator holds the database), 2 invalid config or dataset "
    "(also an unknown run), 3 interrupted (Ctrl-C, q, a pause, the budget spent: resumable "
    "with `llmbench resume RUN_ID`), 4 a quality gate failed (--fail-under, --max-failed-pct, "
    "--max-auto-fail-pct, --min-composite, --max-ttft-p90, --max-itl-p90, --min-goodput, "
    "diff --fail-on-regression)."
)
