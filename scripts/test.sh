#!/usr/bin/env bash
# The README's test command: lint (ruff), type check (mypy --strict on the four packages), then the whole pytest suite against real ZooKeeper (and
# Kafka's jars for the oracle tests): in containers where an engine answers and the images are
# built (scripts/install.sh), else as local processes; the count per backend is printed last.
# ZK2KRAFT_FAST=1 skips the tests marked `slow`. The main run prints its 30 slowest tests
# (--durations=30). Extra arguments go to pytest (e.g.
# `scripts/test.sh tests/unit -x`) and select what runs: the second, process-backend pass of a
# containers run is then skipped, with a line saying so.
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
echo "== mypy (strict, [tool.mypy] in pyproject.toml)"
"$PY" -m mypy

args=()
if [ "${ZK2KRAFT_FAST:-0}" = "1" ]; then
  args+=(-m "not slow")
  echo "== pytest (ZK2KRAFT_FAST=1: tests marked slow are skipped)"
else
  echo "== pytest (slow tests included)"
fi

# Each pytest run appends its count of tests per ZooKeeper backend here (tests/conftest.py).
counts=$(mktemp)
# Where PYTHONDONTWRITEBYTECODE is set, each of the suite's hundreds of `python -m migrate.cli`
# starts would compile the whole package again (about 0.4 s of CPU each): this run writes its
# bytecode to a private directory instead, removed at the end (the checkout stays as it was).
pycache=
if [ -n "${PYTHONDONTWRITEBYTECODE:-}" ]; then
  pycache=$(mktemp -d)
  export PYTHONPYCACHEPREFIX=$pycache
  unset PYTHONDONTWRITEBYTECODE
fi
trap 'rm -f "$counts"; [ -z "$pycache" ] || rm -rf "$pycache"' EXIT
export ZK2KRAFT_BACKEND_COUNTS=$counts

report() {  # report NAME RC: say how a pytest run ended
  case "$2" in
    0) echo "== $1 passed" ;;
    5) echo "== $1: pytest collected no tests (exit 5): nothing was tested; failing" >&2 ;;
    *) echo "== $1 failed (exit $2)" >&2 ;;
  esac
}

set +e
# --durations: every run prints its 30 slowest tests, so CI logs say where the time goes
"$PY" -m pytest --durations=30 "${args[@]}" "$@"
rc=$?
set -e
report "tests" "$rc"

# Where the main run used containers, the ZooKeeper-facing suite is not run a second time on
# local processes: only the process backend's own harness and the ensemble fault tests are, so
# the fallback for machines without an engine stays tested (about a minute). A run given a
# selection (any argument) ran only that and says so, rather than adding tests nobody asked for.
if grep -q 'zookeeper_docker=' "$counts"; then
  if [ $# -eq 0 ]; then
    echo "== pytest on the process backend (ZooKeeper harness and ensemble faults only)"
    set +e
    ZK2KRAFT_ZK_BACKEND=process "$PY" -m pytest "${args[@]}" \
      tests/integration/test_harness_zk.py tests/fault/test_zk_ensemble_faults.py
    rc2=$?
    set -e
    report "process-backend tests" "$rc2"
    [ "$rc" -eq 0 ] && rc=$rc2
  else
    echo "== process-backend pass skipped: a selection was given ($*), so only it ran, on" \
      "containers; without arguments the ZooKeeper harness and ensemble faults also run on" \
      "local processes (ZK2KRAFT_ZK_BACKEND=process scripts/test.sh $* runs the selection there)"
  fi
fi

"$PY" - "$counts" <<'PYEOF'
import sys
totals: dict[str, int] = {}
for line in open(sys.argv[1], encoding="utf-8"):
    for item in line.split():
        key, _, n = item.partition("=")
        totals[key] = totals.get(key, 0) + int(n)
docker = totals.pop("zookeeper_docker", 0)
process = totals.pop("zookeeper_process", 0)
rest = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sorted(totals.items()))
print(f"== tests run per ZooKeeper backend: docker (containers) {docker}, "
      f"process {process}" + (f"; {rest}" if rest else ""))
PYEOF
exit "$rc"
