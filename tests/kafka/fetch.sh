#!/usr/bin/env bash
# Fetch Kafka's jars (and their runtime dependencies) from Maven Central for the oracle tests:
#   fetch.sh        Kafka 3.9.1 (pom.xml)      into tests/kafka/jars/
#   fetch.sh 4.1    Kafka 4.1   (pom-4.1.xml)  into tests/kafka/jars-4.1/
# Both git-ignored. Idempotent: a complete cache (marked by .complete, which records the pom's
# checksum) is reused; Maven's ~/.m2 cache makes a re-fetch after a pom change cheap. Quiet
# unless something fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -gt 0 ] && [ -n "$1" ]; then
  pom="$here/pom-$1.xml"
  jars="$here/jars-$1"
  [ -f "$pom" ] || { echo "fetch.sh: no $pom (known: 3.9.1 by default, 4.1)" >&2; exit 2; }
else
  pom="$here/pom.xml"
  jars="$here/jars"
fi
stamp=$(sha256sum "$pom" | cut -d' ' -f1)
if [ -f "$jars/.complete" ] && [ "$(cat "$jars/.complete")" = "$stamp" ]; then
  exit 0
fi
command -v mvn >/dev/null || { echo "fetch.sh: mvn not found (apt-get install maven)" >&2; exit 1; }
rm -rf "$jars.tmp"
log=$(mktemp)
if ! mvn -B -q -f "$pom" dependency:copy-dependencies \
     -DincludeScope=runtime -DoutputDirectory="$jars.tmp" >"$log" 2>&1; then
  cat "$log" >&2; rm -f "$log"; rm -rf "$jars.tmp"
  echo "fetch.sh: mvn could not fetch Kafka's jars from Maven Central ($pom)" >&2
  exit 1
fi
rm -f "$log"
# The pom's own target/ is Maven's; nothing in it is needed.
rm -rf "$here/target"
rm -rf "$jars"
mv "$jars.tmp" "$jars"
echo "$stamp" > "$jars/.complete"
echo "fetch.sh: $(ls "$jars"/*.jar | wc -l) jars in $jars" >&2
