#!/usr/bin/env bash
# The test command of the README: lint, then the whole suite (slow rehearsal/fault tests included
# unless ZK2KRAFT_FAST=1, which skips tests marked `slow`).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m ruff check .
marker=()
[ "${ZK2KRAFT_FAST:-0}" = "1" ] && marker=(-m "not slow")
python3 -m pytest "${marker[@]}" "$@"
