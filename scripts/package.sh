#!/usr/bin/env bash
# Builds the Debian 12 package: the release produce-proxy (the `release`
# preset's RelWithDebInfo, -O2 -g) in its own build tree, without tests or
# benchmarks, then a .deb with CPack (cmake/packaging.cmake says what it
# holds). Prints the .deb's path.
#
# usage: scripts/package.sh [BUILD_DIR]     (default build/package)
#   PP_JOBS: compile jobs (default: every core)
# Then, e.g.:
#   lintian build/package/produce-proxy_*.deb
#   sudo apt-get install ./build/package/produce-proxy_*.deb
#   tests/ops/package_test.sh build/package   (installs it into a clean Debian 12 root)
#   docker build -f helm/Dockerfile -t produce-proxy:0.1.0 .
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/package}

cmake --preset release -B "$build" -DPP_BUILD_TESTS=OFF -DPP_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j"${PP_JOBS:-$(nproc)}" --target produce-proxy
# One .deb in the tree at a time: helm/Dockerfile copies it by a wildcard.
rm -f "$build"/produce-proxy_*.deb
cpack --config "$build/CPackConfig.cmake" -B "$build" >"$build/cpack.log" 2>&1 ||
  { cat "$build/cpack.log" >&2; echo "package: cpack failed" >&2; exit 1; }
ls "$build"/produce-proxy_*.deb
