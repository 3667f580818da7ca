#!/usr/bin/env bash
# Fetch the pinned Apache Kafka broker jars (tests/kafka/pom.xml) from Maven
# Central into a cache OUTSIDE the build tree:
#   ${PP_CACHE_DIR:-$HOME/.cache/produce-proxy}/kafka-<version>/libs
# Idempotent: a stamp file keyed by the pom's hash and the version makes a
# second run a fast no-op. The last line on stdout is always the libs directory.
# Called by scripts/setup.sh --test-peers; tests/kafka/kafka_cluster.py calls it too.
#
#   fetch_kafka.sh                the version PP_KAFKA_VERSION names, else the
#                                 one tests/kafka/kafka-version.txt in the cache
#                                 selected, else the pom's pinned one
#   fetch_kafka.sh --try-newer    tries each newer release in NEWER_KAFKA (4.5.0,
#                                 then 5.0.0) from Maven Central and selects the
#                                 newest that resolves for tests/kafka (written to
#                                 $cache/kafka-selected-version); when none does,
#                                 prints a SKIP line and selects the pinned one.
#                                 setup.sh --test-peers runs it once per run.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pom="$here/pom.xml"

die() { echo "fetch_kafka.sh: $*" >&2; exit 1; }

for tool in java javac mvn; do
  command -v "$tool" >/dev/null 2>&1 ||
    die "'$tool' not found; run scripts/setup.sh --test-peers (it installs default-jdk-headless and maven)"
done

pinned="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom" | head -n1)"
[[ -n "$pinned" ]] || die "no <kafka.version> in $pom"
cache="${PP_CACHE_DIR:-$HOME/.cache/produce-proxy}"
selected_file="$cache/kafka-selected-version"
newer_releases=(${NEWER_KAFKA:-4.5.0 5.0.0})

if [[ "${1:-}" == "--try-newer" ]]; then
  mkdir -p "$cache"
  newest=""
  for candidate in "${newer_releases[@]}"; do
    if PP_KAFKA_VERSION="$candidate" "$0" >/dev/null 2>&1; then newest="$candidate"; fi
  done
  if [[ -n "$newest" ]]; then
    echo "$newest" >"$selected_file"
    echo "fetch_kafka.sh: Apache Kafka $newest resolved from Maven Central; tests/kafka run on it" >&2
  else
    echo "$pinned" >"$selected_file"
    echo "fetch_kafka.sh: SKIP newer Kafka: none of ${newer_releases[*]} resolves from Maven Central;" \
      "tests/kafka stay on the pinned $pinned" >&2
  fi
  exit 0
fi

version="${PP_KAFKA_VERSION:-}"
if [[ -z "$version" && -f "$selected_file" ]]; then version="$(tr -d '[:space:]' <"$selected_file")"; fi
version="${version:-$pinned}"

dest="$cache/kafka-$version"
libs="$dest/libs"
stamp="$dest/libs.stamp"
want="$(sha256sum "$pom" | cut -d' ' -f1)-$version"

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
if ! timeout 900 mvn -B -q -f "$pom" dependency:copy-dependencies -Dkafka.version="$version" \
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
