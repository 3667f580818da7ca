#!/usr/bin/env bash
# The main job (README): installs dependencies, builds the optimised proxy and
# runs it in the foreground. Arguments go to produce-proxy.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target produce-proxy
if [ $# -eq 0 ]; then
  # The demo: librdkafka's mock cluster in-process as the upstream, so no Kafka
  # cluster is needed. Clients connect to 127.0.0.1:9092, Prometheus scrapes
  # 127.0.0.1:9464. Ctrl-C drains and exits.
  exec build/release/daemon/produce-proxy --config config/produce-proxy.example.toml \
    --set 'upstream.bootstrap_servers=["embedded"]'
fi
exec build/release/daemon/produce-proxy "$@"
