#!/usr/bin/env bash
# Fetch pinned org.apache.kafka:kafka-clients releases (and their run-time
# dependencies: lz4-java, snappy-java, zstd-jni, slf4j-api) from Maven Central
# for tests/golden/capture/capture_kafka4.sh, into
#   ${PP_CACHE_DIR:-$HOME/.cache/produce-proxy}/golden-clients/kafka-clients-<v>/
# One directory per version; a .ok stamp makes a second run a no-op.
# Usage: fetch_golden_clients.sh <version>...   (prints one dir per version)
set -euo pipefail
cache="${PP_CACHE_DIR:-$HOME/.cache/produce-proxy}/golden-clients"
mkdir -p "$cache"
for v in "$@"; do
  dest="$cache/kafka-clients-$v"
  if [[ ! -f "$dest/.ok" ]]; then
    work="$(mktemp -d)"
    cat >"$work/pom.xml" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>produce-proxy.golden</groupId>
  <artifactId>kafka-clients-$v</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka-clients</artifactId>
      <version>$v</version>
    </dependency>
  </dependencies>
</project>
POM
    rm -rf "$dest.tmp"
    if ! timeout 600 mvn -B -q -f "$work/pom.xml" dependency:copy-dependencies \
          -DincludeScope=runtime -DoutputDirectory="$dest.tmp" >"$work/mvn.log" 2>&1; then
      grep -E 'ERROR|Could not' "$work/mvn.log" | head -n 3 >&2 || true
      rm -rf "$work" "$dest.tmp"
      echo "fetch_golden_clients.sh: could not resolve kafka-clients $v" >&2
      exit 1
    fi
    [[ -f "$dest.tmp/kafka-clients-$v.jar" ]] || { echo "no kafka-clients-$v.jar" >&2; exit 1; }
    rm -rf "$dest" "$work"
    mv "$dest.tmp" "$dest"
    touch "$dest/.ok"
  fi
  echo "$dest"
done
