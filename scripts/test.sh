#!/usr/bin/env bash
# The test command (README, .ci/run): installs dependencies, builds the release
# binary that scripts/run.sh ships, builds everything under clang 16 with
# AddressSanitizer + UndefinedBehaviorSanitizer, and runs unit, integration,
# end-to-end, shipped-binary and fuzz tests through ctest. The shipped tests
# drive both binaries (tests/daemon/); the sustained-load test also drives
# the release tree's librdkafka load client (the ASan tree builds no bench)
# and its allocator tests (glibc's thresholds and the daemon's jemalloc,
# both of which ASan's allocator replaces).
# Extra arguments go to ctest (e.g. -L unit, -R schema, -LE kafka).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test-peers
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target produce-proxy bench_rdkafka_producer daemon_unit_test \
  jemalloc_reuse_test
cmake --preset asan >/dev/null
scripts/lint.sh build/asan
cmake --build --preset asan -j"$(nproc)"
ctest --preset asan -j"$(nproc)" "$@"
