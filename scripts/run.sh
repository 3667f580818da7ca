#!/usr/bin/env bash
# The main job (README): installs dependencies, builds the optimised proxy and
# runs it in the foreground. Arguments go to produce-proxy.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target produce-proxy
exec build/release/daemon/produce-proxy "$@"
