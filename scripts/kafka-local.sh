#!/usr/bin/env bash
# Runs a real Apache Kafka (KRaft, the version pinned in tests/kafka/pom.xml)
# on 127.0.0.1 in the foreground, to try the proxy against a real broker.
# Ctrl-C stops it; data lives in a temporary directory removed on exit unless
# --workdir is given.
#
#   scripts/kafka-local.sh                 # 1 node, client port 19092
#   scripts/kafka-local.sh --port 29092    # another port
#   scripts/kafka-local.sh --nodes 3       # ports 19092-19094, rf 3, min.insync.replicas 2
#   scripts/kafka-local.sh --set min.insync.replicas=1   # broker config override (repeatable)
#   scripts/kafka-local.sh --api-versions  # also print the broker's ApiVersions ranges
#
# Then, in another terminal:
#   scripts/run.sh --config config/produce-proxy.example.toml --set 'upstream.bootstrap_servers=["127.0.0.1:19092"]'
#
# Installs what it needs first (scripts/setup.sh --test-peers: a JDK, Maven,
# and the broker from Maven Central once, into ${PP_CACHE_DIR:-~/.cache/produce-proxy}).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh" --test-peers --no-helm
exec /usr/bin/python3 "$here/tests/kafka/kafka_cluster.py" "$@"
