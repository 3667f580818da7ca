#!/usr/bin/env bash
# Golden Produce v13 frames (topics by id, KIP-516) from the real Java
# producer, kafka-clients 4.4.0, to produce-proxy in front of a real Apache
# Kafka 4.4.0 broker (tests/kafka harness). Fetches the client
# (fetch_golden_clients.sh), compiles java/GoldenProducer.java against it,
# then runs capture_proxy_v13.py (relay + cases + files + MANIFEST rows).
#   tests/golden/capture/capture_proxy_v13.sh PROXY_BINARY [--out DIR]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
proxy="$(realpath "$1")"; shift
v=4.4.0
cache="${PP_CACHE_DIR:-$HOME/.cache/produce-proxy}/golden-clients"
"$here/fetch_golden_clients.sh" "$v" >/dev/null
out="$cache/classes-proxy-$v"
hash="$(sha256sum "$here/java/GoldenProducer.java" | cut -c1-12)"
if [[ "$(cat "$out/.src" 2>/dev/null)" != "$hash" ]]; then
  rm -rf "$out"; mkdir -p "$out"
  javac -nowarn -encoding UTF-8 -J-Xmx256m -cp "$cache/kafka-clients-$v/*" -d "$out" "$here/java/GoldenProducer.java"
  echo "$hash" >"$out/.src"
fi
# /usr/bin/python3: Debian's python3-zstandard / python3-lz4 expand compressed batches.
timeout 600 /usr/bin/python3 "$here/capture_proxy_v13.py" "$proxy" "$out" "$cache/kafka-clients-$v" "$@"
dir="$(cd "$here/.." && pwd)"
for ((i = 1; i <= $#; i++)); do [[ "${!i}" == "--out" ]] && { j=$((i + 1)); dir="${!j}"; }; done
# The capture side's own checks of what was written (exit 1 on any problem).
/usr/bin/python3 "$here/check_kafka4.py" "$dir" >/dev/null
