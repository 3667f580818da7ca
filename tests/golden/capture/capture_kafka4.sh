#!/usr/bin/env bash
# Golden frames from a real Apache Kafka 4.4.0 broker (tests/kafka harness)
# and real Java producers, one kafka-clients release per Produce version:
#   2.7.2 (Produce v8, Metadata v9)   2.8.2 (Produce v9)   3.7.2 (v10)
#   3.9.1 (v11)   4.0.1 (v12)   4.1.1 and 4.4.0 (v13)
# Fetches the clients (fetch_golden_clients.sh), compiles java/*.java
# against each, then runs capture_kafka4.py (relay + cases + files + MANIFEST rows).
#   tests/golden/capture/capture_kafka4.sh [--out DIR] [--only CASE]...
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
versions=(2.7.2 2.8.2 3.7.2 3.9.1 4.0.1 4.1.1 4.4.0)
cache="${PP_CACHE_DIR:-$HOME/.cache/produce-proxy}/golden-clients"
"$here/fetch_golden_clients.sh" "${versions[@]}" >/dev/null
src=("$here"/java/*.java)
hash="$(cat "${src[@]}" | sha256sum | cut -c1-12)"
for v in "${versions[@]}"; do
  out="$cache/classes-$v"
  if [[ "$(cat "$out/.src" 2>/dev/null)" != "$hash" ]]; then
    rm -rf "$out"; mkdir -p "$out"
    # GoldenRawRequests uses 4.x-only API: built for the newest client only.
    srcs=("$here/java/GoldenProducer.java")
    [[ "$v" == "${versions[-1]}" ]] && srcs=("${src[@]}")
    javac -nowarn -encoding UTF-8 -J-Xmx256m -cp "$cache/kafka-clients-$v/*" -d "$out" "${srcs[@]}"
    echo "$hash" >"$out/.src"
  fi
done
# /usr/bin/python3: Debian's python3-zstandard / python3-lz4 expand compressed batches.
timeout 900 /usr/bin/python3 "$here/capture_kafka4.py" "$cache" "$cache" "${versions[@]}" "$@"
out="$(cd "$here/.." && pwd)"
for ((i = 1; i <= $#; i++)); do [[ "${!i}" == "--out" ]] && { j=$((i + 1)); out="${!j}"; }; done
# The capture side's own checks of what was written (exit 1 on any problem).
/usr/bin/python3 "$here/check_kafka4.py" "$out" >/dev/null
