#!/usr/bin/env bash
# Install everything zk2kraft and its tests need on a fresh Debian machine:
# Debian's ZooKeeper (3.8) and Java, the Python package with its test extras, and (unless
# ZK2KRAFT_SKIP_KAFKA=1) Kafka's jars from Maven Central into an ignored cache.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

need_apt=()
[ -x /usr/share/zookeeper/bin/zkServer.sh ] || need_apt+=(zookeeper)
command -v java >/dev/null || need_apt+=(default-jdk-headless)
command -v mvn >/dev/null || need_apt+=(maven)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

python3 -m pip install -q --disable-pip-version-check -e ".[test]"

if [ "${ZK2KRAFT_SKIP_KAFKA:-0}" != "1" ] && [ -x tests/kafka/fetch.sh ]; then
  tests/kafka/fetch.sh
fi
