#!/usr/bin/env bash
# Fetch the pinned Apache Kafka broker jars (tests/kafka/pom.xml) from Maven
# Central into a cache OUTSIDE the build tree:
#   ${PP_CACHE_DIR:-$HOME/.cache/produce-proxy}/kafka-<version>/libs
# Idempotent: a stamp file keyed by the pom's hash makes a second run a fast
# no-op. The last line on stdout is always the libs directory.
# Called by scripts/setup.sh --test-peers; tests/kafka/kafka_cluster.py calls it too.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pom="$here/pom.xml"

die() { echo "fetch_kafka.sh: $*" >&2; exit 1; }

for tool in java javac mvn; do
  command -v "$tool" >/dev/null 2>&1 ||
    die "'$tool' not found; run scripts/setup.sh --test-peers (it installs default-jdk-headless and maven)"
done

version="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom" | head -n1)"
[[ -n "$version" ]] || die "no <kafka.version> in $pom"

cache="${PP_CACHE_DIR:-$HOME/.cache/produce-proxy}"
dest="$cache/kafka-$version"
libs="$dest/libs"
stamp="$dest/libs.stamp"
want="$(sha256sum "$pom" | cut -d' ' -f1)"

if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -d "$libs" ]]; then
  echo "$libs"
  exit 0
fi

mkdir -p "$dest"
# One fetch at a time per cache (parallel ctest runs, setup.sh and a test).
exec 9>"$dest/.lock"
if command -v flock >/dev/null 2>&1; then
  flock -w 600 9 || die "timed out waiting for another fetch holding $dest/.lock"
fi
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -d "$libs" ]]; then
  echo "$libs"
  exit 0
fi

tmp="$dest/libs.tmp.$$"
rm -rf "$tmp"
echo "fetch_kafka.sh: fetching org.apache.kafka:kafka_2.13:$version and its runtime dependencies from Maven Central ..." >&2
log="$dest/mvn.log"
if ! timeout 900 mvn -B -q -f "$pom" dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$tmp" >"$log" 2>&1; then
  sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E 'ERROR|Could not' | head -n 3 >&2 || true
  rm -rf "$tmp"
  die "Maven could not resolve org.apache.kafka:kafka_2.13:$version (full log: $log)"
fi
for jar in "kafka_2.13-$version.jar" "kafka-clients-$version.jar"; do
  [[ -f "$tmp/$jar" ]] || { rm -rf "$tmp"; die "Maven finished but $jar is missing from $tmp"; }
done
rm -rf "$libs"
mv "$tmp" "$libs"
echo "$want" >"$stamp"
echo "fetch_kafka.sh: $(ls "$libs" | wc -l) jars in $libs" >&2
echo "$libs"
