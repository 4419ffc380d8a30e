#!/usr/bin/env bash
# Build Toxiproxy's server (Shopify's TCP proxy for latency and faults) once and cache it in
# ${XDG_CACHE_HOME:-$HOME/.cache}/zk2kraft/toxiproxy/, outside the clone so that a fresh clone (each
# CI run) reuses it, for the fleet benchmark and test: they put a latency toxic in front of each
# ZooKeeper, since these machines' kernel has no netem qdisc (`tc` cannot add delay), and our own
# code never sleeps to fake a round trip. Idempotent: a cached binary of this version is kept.
# tests/support/toxiproxy.py looks in the same place.
# Needs Go (the module proxy serves v2.5.0; `go list -m -versions github.com/Shopify/toxiproxy/v2`).
set -euo pipefail
version=${ZK2KRAFT_TOXIPROXY_VERSION:-v2.5.0}
dir="${XDG_CACHE_HOME:-$HOME/.cache}/zk2kraft/toxiproxy/$version"
bin="$dir/toxiproxy-server"
if [ -x "$bin" ]; then
  echo "install-toxiproxy: cached $bin"
  exit 0
fi
if ! command -v go >/dev/null; then
  echo "install-toxiproxy: no Go toolchain; the fleet latency test and benchmark need one" >&2
  exit 1
fi
mkdir -p "$dir"
GOBIN="$dir" go install "github.com/Shopify/toxiproxy/v2/cmd/server@$version"
mv "$dir/server" "$bin"
echo "install-toxiproxy: built $bin"
