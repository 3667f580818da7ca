#!/usr/bin/env bash
# Regenerates the reference documents that are written from the code:
#
#   docs/configuration.md  from config/schema.h, config/settings.h and the
#                          comments of config/produce-proxy.example.toml
#                          (tests/ops/reference_docs/config_reference.cc);
#   docs/metrics.md        from the metric families of metrics/
#                          (tests/ops/reference_docs/metrics_reference.cc).
#
#   scripts/gen_docs.sh [BUILD_DIR]
#
# Run it after adding or changing a config key (and its comment in the example
# config) or a metric family; the ops tests configuration_doc_test and
# metrics_doc_test fail until the committed documents match. BUILD_DIR
# (default build/docs, or $PP_DOCS_BUILD_DIR) is configured if it is not yet a
# CMake build tree; only the two generators and the libraries they link are
# built in it. Needs the build dependencies (scripts/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${1:-${PP_DOCS_BUILD_DIR:-build/docs}}
jobs=${PP_DOCS_JOBS:-2}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
quietly() {  # run a command; show its output only if it fails
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    echo "gen_docs: failed: $*" >&2
    exit 1
  fi
}
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  quietly cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPP_BUILD_BENCH=OFF
fi
quietly cmake --build "$build_dir" --target config-reference metrics-reference -j "$jobs"

write() {  # GENERATOR DOC: rewrite DOC only from a complete run
  local generator=$1 doc=$2 tmp
  tmp=$(mktemp)
  if ! "$build_dir/tests/ops/reference_docs/$generator" >"$tmp"; then
    rm -f "$tmp"
    echo "gen_docs: $generator failed; $doc left as it was" >&2
    return 1
  fi
  if cmp -s "$tmp" "$doc"; then
    echo "$doc: unchanged"
    rm -f "$tmp"
  else
    mv "$tmp" "$doc"
    chmod 644 "$doc"
    echo "$doc: rewritten"
  fi
}

status=0
write config-reference docs/configuration.md || status=1
write metrics-reference docs/metrics.md || status=1
exit $status
