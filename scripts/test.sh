#!/usr/bin/env bash
# The README's test command: lint (ruff), type check (mypy --strict on the four packages), then the whole pytest suite against real ZooKeeper (and
# Kafka's jars for the oracle tests): in containers where an engine answers and the images are
# built (scripts/install.sh), else as local processes; the count per backend is printed last.
# ZK2KRAFT_FAST=1 skips the tests marked `slow`. Without arguments the suite runs as two pytest
# processes at once (the real-Kafka rehearsals, and the rest: see below), each printing its 30
# slowest tests. Extra arguments go to pytest (e.g. `scripts/test.sh tests/unit -x`) and select
# what runs, in one process: the second, process-backend pass of a containers run is then
# skipped, with a line saying so.
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
export ZK2KRAFT_BACKEND_COUNTS=$counts

report() {  # report NAME RC: say how a pytest run ended
  case "$2" in
    0) echo "== $1 passed" ;;
    5) echo "== $1: pytest collected no tests (exit 5): nothing was tested; failing" >&2 ;;
    *) echo "== $1 failed (exit $2)" >&2 ;;
  esac
}

# The whole suite (no arguments) runs as two pytest processes at once: the real-Kafka rehearsals
# spend much of their time waiting (JVM starts, elections, timeouts), and on a 2-core machine the
# other stream uses that time. Stream 1 holds the stand-in rehearsals (many JVMs each, canaries
# that must drain), STREAM1_FIRST first, while stream 2 is still in its lighter tests: the fault
# and integration tests, the unit tests, then STREAM2_ORACLE (one-node Kafka checks, and the
# offline rehearsal last). The ZooKeeper-mode tree and dual-write verify checks
# (test_zk_mode_kafka_tree, test_verify_dual_write_kafka: one or two brokers each) run at
# stream 1's end instead: the rehearsals' shorter JVM starts and broker stops
# (tests/support/cds.py, migration_cluster) take more off stream 1 than off stream 2, which
# had ended last. When the two heaviest rehearsals ran at the same time (load 25-28), a
# canary's consumer fell 10,375 records behind its 240 s drain and a 1,000-partition
# CreateTopics outlived librdkafka's 60 s request timeout (docs/testing.md). Each stream keeps
# to its own share of the loopback ports (tests/support/ports.py). Stream 1 prints as it goes;
# stream 2's output is printed whole when both are done. --durations: each prints its 30
# slowest tests, so CI logs say where the time goes.
STREAM1_FIRST=(tests/oracle/test_standin_killed_brokers.py tests/oracle/test_standin_start_order.py)
STREAM2_ORACLE=(tests/oracle/test_golden_matches_kafka.py tests/oracle/test_oracle_entity_delta.py
  tests/oracle/test_oracle_harness.py tests/oracle/test_oracle_kafka_logs.py
  tests/oracle/test_oracle_our_logs.py tests/oracle/test_oracle_translated.py
  tests/oracle/test_plan_sequence_kafka.py tests/oracle/test_scram_restatement_kafka.py
  tests/oracle/test_translate_kafka_accepts.py tests/oracle/test_voter_lock_kafka.py
  tests/oracle/test_offline_rehearsal.py)
pid2=
trap 'rm -f "$counts"; [ -z "$pycache" ] || rm -rf "$pycache"; [ -z "$pid2" ] || kill "$pid2" 2>/dev/null || true' EXIT
set +e
if [ $# -eq 0 ]; then
  other=()
  for d in tests/*/; do
    [ "$d" != tests/oracle/ ] && [ -n "$(find "$d" -name 'test_*.py' -print -quit)" ] && other+=("${d%/}")
  done
  stream1=("${STREAM1_FIRST[@]}")
  for f in tests/oracle/test_*.py; do  # every other oracle file, so a new one runs somewhere
    case " ${STREAM1_FIRST[*]} ${STREAM2_ORACLE[*]} " in *" $f "*) ;; *) stream1+=("$f") ;; esac
  done
  log2=$(mktemp)
  ZK2KRAFT_TEST_PORT_SHARE=1/2 "$PY" -m pytest -p no:cacheprovider --durations=30 "${args[@]}" \
    "${other[@]}" "${STREAM2_ORACLE[@]}" >"$log2" 2>&1 &
  pid2=$!
  echo "== stream 1: ${stream1[*]}"
  echo "   (stream 2 runs alongside: ${other[*]} ${STREAM2_ORACLE[*]}; its output follows)"
  ZK2KRAFT_TEST_PORT_SHARE=0/2 "$PY" -m pytest --durations=30 "${args[@]}" "${stream1[@]}"
  rc1=$?
  wait "$pid2"
  rc2=$?
  pid2=
  echo "== stream 2: ${other[*]} ${STREAM2_ORACLE[*]}"
  cat "$log2"
  rm -f "$log2"
  report "stream 1 (the stand-in rehearsals)" "$rc1"
  report "stream 2 (the rest)" "$rc2"
  rc=$rc1
  [ "$rc" -eq 0 ] && rc=$rc2
else
  "$PY" -m pytest --durations=30 "${args[@]}" "$@"
  rc=$?
  report "tests" "$rc"
fi
set -e

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
