#!/usr/bin/env bash
# The test command (README, .ci/run): installs dependencies, builds everything
# under clang 16 with AddressSanitizer + UndefinedBehaviorSanitizer, and runs
# unit, integration, end-to-end and fuzz tests through ctest.
# Extra arguments go to ctest (e.g. -L unit, -R schema).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset asan >/dev/null
cmake --build --preset asan -j"$(nproc)"
ctest --preset asan -j"$(nproc)" "$@"
