#!/bin/sh
# llmbench in CI, step by step as a GitHub Actions job runs it: no terminal, CI=true, each
# step's exit code said (docs/CLI.md, "Exit codes"). Run it from any folder:
#
#   MODEL_URL=http://127.0.0.1:8080 sh docs/examples/ci/github-actions.sh
#
# 1. install llmbench from its built wheel into a fresh venv (LLMBENCH=... skips this and uses
#    that command instead, e.g. an install you already have);
# 2. a run with quality gates, writing its files with -o and a job summary (--summary-md, and
#    $GITHUB_STEP_SUMMARY when GitHub sets it): exit 4 when a gate fails;
# 3. a re-run of only what failed or scored under the pass score (--filter-failing, read from
#    step 2's results.jsonl artifact);
# 4. a diff of two artifact files (no database needed): exit 4 on a regression or a drop of
#    more than 5 points.
#
# The job fails (this script exits non-zero) when the re-run or the diff fails: a failing gate
# in step 2 is what steps 3 and 4 look into, as a `continue-on-error: true` step would be.
set -u
export CI=true
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
OUT=${OUT:-$PWD/llmbench-ci}
mkdir -p "$OUT"

say() { echo "== $*"; }

if [ -z "${LLMBENCH:-}" ]; then
  say "install: build the wheel and install it into a fresh venv"
  python3 -m pip wheel --no-deps -q -w "$OUT/dist" "$REPO" || exit 1
  python3 -m venv "$OUT/venv" || exit 1
  "$OUT/venv/bin/pip" install -q "$OUT"/dist/llmbench-*.whl || exit 1
  LLMBENCH="$OUT/venv/bin/llmbench"
fi

say "run: gates and outputs"
$LLMBENCH run -c "$HERE/llmbench-ci.yml" --fail-under 80 --max-failed-pct 20 \
  -o "$OUT/run/results.jsonl" -o "$OUT/run/summary.json" -o "$OUT/run/junit.xml" \
  -o "$OUT/run/report.md" --summary-md "$OUT/run/summary.md"
gate=$?
say "run: exit $gate (0 passed, 4 a gate failed)"

rerun=0
if [ "$gate" -eq 4 ]; then
  say "re-run: only the failed and low-scored tasks"
  $LLMBENCH run -c "$HERE/llmbench-ci.yml" --filter-failing "$OUT/run/results.jsonl" \
    --fail-under 80 -o "$OUT/rerun/results.jsonl" -o "$OUT/rerun/junit.xml"
  rerun=$?
  say "re-run: exit $rerun"
elif [ "$gate" -ne 0 ]; then
  exit "$gate"  # 1, 2 or 3: nothing to re-run (docs/CLI.md)
fi

if [ -f "$OUT/rerun/results.jsonl" ]; then
  say "diff: the run's artifact against the re-run's"
  $LLMBENCH diff "$OUT/run/results.jsonl" "$OUT/rerun/results.jsonl" \
    --fail-on-regression --max-drop 5
  diff=$?
  say "diff: exit $diff (0 no regression, 4 a regression or a drop)"
else
  diff=0
fi

if [ "$rerun" -ne 0 ]; then exit "$rerun"; fi
exit "$diff"
