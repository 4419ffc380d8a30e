#!/usr/bin/env bash
# Fetch Kafka 3.9.1's jars (and their runtime dependencies) from Maven Central into
# tests/kafka/jars/ (git-ignored) for the oracle tests. Idempotent: a complete cache (marked by
# jars/.complete, which records the pom's checksum) is reused; Maven's ~/.m2 cache makes a
# re-fetch after a pom change cheap. Quiet unless something fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
jars="$here/jars"
stamp=$(sha256sum "$here/pom.xml" | cut -d' ' -f1)
if [ -f "$jars/.complete" ] && [ "$(cat "$jars/.complete")" = "$stamp" ]; then
  exit 0
fi
command -v mvn >/dev/null || { echo "fetch.sh: mvn not found (apt-get install maven)" >&2; exit 1; }
rm -rf "$jars.tmp"
log=$(mktemp)
if ! mvn -B -q -f "$here/pom.xml" dependency:copy-dependencies \
     -DincludeScope=runtime -DoutputDirectory="$jars.tmp" >"$log" 2>&1; then
  cat "$log" >&2; rm -f "$log"; rm -rf "$jars.tmp"
  echo "fetch.sh: mvn could not fetch Kafka's jars from Maven Central" >&2
  exit 1
fi
rm -f "$log"
# The pom's own target/ is Maven's; nothing in it is needed.
rm -rf "$here/target"
rm -rf "$jars"
mv "$jars.tmp" "$jars"
echo "$stamp" > "$jars/.complete"
echo "fetch.sh: $(ls "$jars"/*.jar | wc -l) jars in $jars" >&2
