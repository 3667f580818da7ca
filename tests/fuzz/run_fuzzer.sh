#!/usr/bin/env bash
# Runs one libFuzzer target briefly, seeded from the golden vectors.
# usage: run_fuzzer.sh FUZZER_BINARY SECONDS SEED_GLOB_DIR...
# Seeds: every tests/golden/**/*.hex converted to binary (the fuzzers that want
# a prefix, like fuzz_response, still profit: libFuzzer mutates from there),
# and this target's own hostile cases in tests/fuzz/seeds/<target>/ (issue 14).
# Crashes are kept in tests/fuzz/regressions/<target>/ and replayed first.
set -euo pipefail
binary=$1; seconds=$2; shift 2
name=$(basename "$binary")
here=$(cd "$(dirname "$0")" && pwd)
start=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
for dir in "$@" "$here/seeds/$name"; do
  [ -d "$dir" ] || continue
  find "$dir" -name '*.hex' -print0 | python3 -c '
import hashlib, os, sys
out = sys.argv[1]
for path in sys.stdin.buffer.read().split(b"\0"):
    if not path:
        continue
    data = bytes.fromhex(open(path, "rb").read().decode())
    open(os.path.join(out, hashlib.md5(data).hexdigest()), "wb").write(data)
' "$work/corpus"
done
regressions="$here/regressions/$name"
if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
  "$binary" -runs=0 "$regressions"/*
fi
cd "$work"
"$binary" -artifact_prefix="$start/$name-" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 \
  -print_final_stats=1 "$work/corpus" 2>&1 | tail -n 25
