#!/usr/bin/env bash
# Fetch Kafka's jars (and their runtime dependencies) from Maven Central for the oracle tests:
#   fetch.sh        Kafka 3.9.1 (pom.xml)           into tests/kafka/jars/
#   fetch.sh LINE   Kafka LINE  (pom-LINE.xml)      into tests/kafka/jars-LINE/, e.g. 4.1, 2.8
# All git-ignored. The committed poms are the ones CI and the version matrix's CI cells use (2.8,
# 3.6, 4.1, 4.4); the other lines of the matrix (tests/oracle/test_version_matrix.py) get their
# pom made from the nearest committed one with the line's latest patch release (MATRIX_PATCH), so
# each is fetched only when a matrix cell runs. Idempotent: a complete cache (marked by
# .complete, which records the pom's checksum) is reused; Maven's ~/.m2 cache makes a re-fetch
# after a pom change cheap. Quiet unless something fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# The latest patch release of each Kafka line on Maven Central (checked 2026-11-29) that has no
# committed pom: ZooKeeper-mode sources are made from pom-2.8.xml, 4.x targets from pom-4.4.xml.
declare -A MATRIX_PATCH=([3.0]=3.0.2 [3.1]=3.1.2 [3.2]=3.2.3 [3.3]=3.3.2 [3.4]=3.4.1
                         [3.5]=3.5.2 [3.7]=3.7.2 [3.8]=3.8.1 [4.0]=4.0.2 [4.2]=4.2.2 [4.3]=4.3.1)
generated=""
trap '[ -z "$generated" ] || rm -rf "$generated"' EXIT
if [ $# -gt 0 ] && [ -n "$1" ]; then
  pom="$here/pom-$1.xml"
  jars="$here/jars-$1"
  if [ ! -f "$pom" ] && [ -n "${MATRIX_PATCH[$1]:-}" ]; then
    case "$1" in
      4.*) template="$here/pom-4.4.xml" from=4.4 from_patch=4.4.0 ;;
      *)   template="$here/pom-2.8.xml" from=2.8 from_patch=2.8.2 ;;
    esac
    generated=$(mktemp -d)
    pom="$generated/pom-$1.xml"
    sed -e "s/$from_patch/${MATRIX_PATCH[$1]}/g" -e "s/-$from\b/-$1/g" "$template" > "$pom"
  fi
  [ -f "$pom" ] || { echo "fetch.sh: no $pom and $1 is no line of the version matrix" \
    "(known: 3.9.1 by default; 2.8, 3.0-3.8, 4.0-4.4)" >&2; exit 2; }
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
rm -rf "$here/target" "$(dirname "$pom")/target"
rm -rf "$jars"
mv "$jars.tmp" "$jars"
echo "$stamp" > "$jars/.complete"
echo "fetch.sh: $(ls "$jars"/*.jar | wc -l) jars in $jars" >&2
