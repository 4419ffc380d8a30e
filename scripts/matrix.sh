#!/usr/bin/env bash
# The version matrix, offline: every ZooKeeper-mode source line to every KRaft target line,
# one cell at a time (tests/oracle/test_version_matrix.py; results go in docs/matrix.md by hand).
#
#   scripts/matrix.sh                          every source (2.8, 3.0 ... 3.9) x every target
#   scripts/matrix.sh 2.8 3.6                  those sources x every target
#   scripts/matrix.sh 3.4 --targets 4.4 3.9    chosen sources x chosen targets
#
# Each line's jars are fetched on first use (tests/kafka/fetch.sh LINE, git-ignored cache).
# A source cluster is built once per source and shared by its targets. Each cell prints one
# "cell S -> T: ..." line with its timings; the pytest log of each source is kept in
# ${MATRIX_LOGS:-/tmp/zk2kraft-matrix}/S.log. Exits 1 if any cell failed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
sources=()
targets=()
into=sources
for arg in "$@"; do
  case "$arg" in
    --targets) into=targets ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) if [ "$into" = sources ]; then sources+=("$arg"); else targets+=("$arg"); fi ;;
  esac
done
[ ${#sources[@]} -gt 0 ] || sources=(2.8 3.0 3.1 3.2 3.3 3.4 3.5 3.6 3.7 3.8 3.9)
[ ${#targets[@]} -gt 0 ] || targets=(3.9 4.0 4.1 4.2 4.3 4.4)
logs=${MATRIX_LOGS:-/tmp/zk2kraft-matrix}
mkdir -p "$logs"
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] && PY=.venv/bin/python

for line in "${sources[@]}" "${targets[@]}"; do
  if [ "$line" = 3.9 ]; then tests/kafka/fetch.sh; else tests/kafka/fetch.sh "$line"; fi
done
failed=0
for source in "${sources[@]}"; do
  cells=""
  for target in "${targets[@]}"; do cells="$cells $source:$target"; done
  echo "matrix: source $source -> ${targets[*]} (log: $logs/$source.log)"
  start=$(date +%s)
  if ZK2KRAFT_MATRIX="$cells" "$PY" -m pytest -q -s -rfEp -p no:cacheprovider \
       tests/oracle/test_version_matrix.py >"$logs/$source.log" 2>&1; then
    verdict=passed
  else
    verdict=FAILED
    failed=1
  fi
  grep -E '^(cell |source )' "$logs/$source.log" || true
  grep -E '^(FAILED|PASSED|ERROR) ' "$logs/$source.log" || true
  echo "matrix: source $source $verdict in $(( $(date +%s) - start )) s ($(date -u +%F))"
done
exit "$failed"
