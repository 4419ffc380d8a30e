#!/usr/bin/env bash
# Install everything zk2kraft and its tests need on a fresh Debian/Ubuntu machine, idempotently:
# Debian's ZooKeeper (3.8) and a JDK, Maven (for Kafka's jars), the Python package with its test
# extras, and (unless ZK2KRAFT_SKIP_KAFKA=1) Kafka's jars from Maven Central into an ignored cache.
#
# Python: installs into the active virtualenv, or the interpreter's site-packages when it accepts
# packages; where the system Python is "externally managed" (PEP 668, Debian 12+), it creates
# ./.venv and installs there (scripts/test.sh and scripts/demo.sh pick .venv up by themselves).
# Re-running it changes nothing that is already in place.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

PY=${PYTHON:-python3}

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO=sudo; else
    echo "install: not root and no sudo: install the apt packages yourself" >&2
  fi
fi

need_apt=()
[ -f /usr/share/java/zookeeper.jar ] || need_apt+=(zookeeper)
command -v java >/dev/null || need_apt+=(default-jdk-headless)
command -v mvn >/dev/null || need_apt+=(maven)
command -v chattr >/dev/null || need_apt+=(e2fsprogs)  # the voter fault tests freeze files
command -v go >/dev/null || need_apt+=(golang-go)  # builds Toxiproxy (install-toxiproxy.sh)
command -v "$PY" >/dev/null || need_apt+=(python3)

in_venv() { "$PY" -c 'import sys; sys.exit(0 if sys.prefix != sys.base_prefix else 1)'; }
externally_managed() {
  "$PY" -c 'import sys, sysconfig, pathlib
sys.exit(0 if pathlib.Path(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED").exists() else 1)'
}
use_venv=0
if command -v "$PY" >/dev/null && ! in_venv && externally_managed; then
  use_venv=1
  "$PY" -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3-venv)
elif command -v "$PY" >/dev/null && ! "$PY" -m pip --version >/dev/null 2>&1; then
  need_apt+=(python3-pip)
fi

if [ ${#need_apt[@]} -gt 0 ]; then
  echo "install: apt packages: ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${need_apt[@]}"
fi
[ -f /usr/share/java/zookeeper.jar ] || {
  echo "install: /usr/share/java/zookeeper.jar still missing after apt" >&2
  exit 1
}

if [ "$use_venv" = "1" ]; then
  [ -x .venv/bin/python ] || "$PY" -m venv .venv
  PY=.venv/bin/python
  echo "install: system Python is externally managed; using ./.venv"
fi
"$PY" -m pip install -q --disable-pip-version-check -e ".[test]"

if [ "${ZK2KRAFT_SKIP_KAFKA:-0}" != "1" ] && [ -x tests/kafka/fetch.sh ]; then
  tests/kafka/fetch.sh
  tests/kafka/fetch.sh 4.1   # printed 4.x controller properties (test_plan_sequence_kafka)
  # the version matrix's CI cells: 3.9 -> 4.4 (test_offline_rehearsal) and 2.8 -> 4.4
  # (test_version_matrix); scripts/matrix.sh fetches the other lines when it runs
  tests/kafka/fetch.sh 4.4
  tests/kafka/fetch.sh 2.8
fi
# Toxiproxy (built once with Go, cached outside the clone in
# ${XDG_CACHE_HOME:-$HOME/.cache}/zk2kraft/toxiproxy/): the fleet test and benchmark put it in
# front of ZooKeeper to model a remote cluster's latency
scripts/install-toxiproxy.sh
# --- container path: Docker engine, Compose, local ZooKeeper/Kafka images ------------
# Kept in its own script (scripts/install-containers.sh): it starts dockerd when none answers and
# builds the images from Debian's packages (cached by a stamp: seconds when nothing changed).
# Where it cannot work (no way to run an engine), the tests use the process backend; say so.
if [ "${ZK2KRAFT_SKIP_CONTAINERS:-0}" != "1" ]; then
  if ! scripts/install-containers.sh; then
    echo "install: WARNING: the container path is not available (see above); the tests will" \
      "run ZooKeeper as local processes" >&2
  fi
fi
# --- end of the container path ------------------------------------------------------------------

echo "install: done (ZooKeeper $(ls /usr/share/java/zookeeper-3*.jar 2>/dev/null | head -1 \
  | sed 's/.*zookeeper-//; s/\.jar//'), $("$PY" --version))"
