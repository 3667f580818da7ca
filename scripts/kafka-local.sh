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
# Needs java and mvn (scripts/setup.sh installs them and fetches the broker
# from Maven Central once, into ${PP_CACHE_DIR:-~/.cache/produce-proxy}).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  echo "kafka-local.sh: java and mvn are needed; run scripts/setup.sh first" >&2
  exit 1
fi
exec /usr/bin/python3 "$here/tests/kafka/kafka_cluster.py" "$@"
