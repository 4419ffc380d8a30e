#!/usr/bin/env bash
# The README's test command: lint (ruff), then the whole pytest suite against real ZooKeeper (and
# Kafka's jars for the oracle tests). ZK2KRAFT_FAST=1 skips the tests marked `slow`. Extra
# arguments go to pytest (e.g. `scripts/test.sh tests/unit -x`).
#
# Exit code: pytest's, except that "no tests collected" (pytest's 5) is reported as such and
# fails the run: a selection that runs nothing must not look like a pass.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${VIRTUAL_ENV:-}" ] && [ -x .venv/bin/python ]; then
  export PATH="$PWD/.venv/bin:$PATH"  # scripts/install.sh's venv (externally managed Python)
fi
PY=python3
[ -x .venv/bin/python ] && [ -z "${VIRTUAL_ENV:-}" ] && PY=.venv/bin/python

echo "== ruff check ."
"$PY" -m ruff check .

args=()
if [ "${ZK2KRAFT_FAST:-0}" = "1" ]; then
  args+=(-m "not slow")
  echo "== pytest (ZK2KRAFT_FAST=1: tests marked slow are skipped)"
else
  echo "== pytest (slow tests included)"
fi

set +e
"$PY" -m pytest "${args[@]}" "$@"
rc=$?
set -e
case "$rc" in
  0) echo "== tests passed" ;;
  5) echo "== pytest collected no tests (exit 5): nothing was tested; failing" >&2 ;;
  *) echo "== pytest failed (exit $rc)" >&2 ;;
esac
exit "$rc"
