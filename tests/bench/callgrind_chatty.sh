#!/usr/bin/env bash
# Instructions and allocations per request of the chatty workload (issue 17,
# workload 3: 64 connections, one record per Produce v2 request), where the
# proxy's one event loop is the limit. Runs the proxy under callgrind in front
# of a test cluster twice, with N and 2N requests, and prints the difference
# per request, so start-up and shutdown cancel: all instructions, those in
# glibc's allocator (malloc, free and their internals), and the allocations.
# Callgrind counts instructions, not time, so a busy machine does not move it;
# the proxy runs slowly under it, so more requests share a loop turn than at
# full speed and per-turn costs read lower than they are.
#
#   tests/bench/callgrind_chatty.sh [PROXY] [N]   (default: build/release, 10000)
#
# Needs valgrind (scripts/setup.sh --bench-tools) and a release build.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build/release
proxy=${1:-$build/daemon/produce-proxy}
requests=${2:-10000}
work=$(mktemp -d /tmp/pp-callgrind-chatty.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

# run COUNT OUT: one cluster, one proxy under callgrind, COUNT chatty requests.
run() {
  local count=$1 out=$2 ctl cluster proxy_pid bootstrap addr
  rm -f "$work/ctl"; mkfifo "$work/ctl"
  "$build/tests/broker/test-cluster" --brokers 3 --topic w3:16 --seed 1 < "$work/ctl" > "$work/cluster.out" 2>/dev/null &
  cluster=$!; pids+=("$cluster")
  exec {ctl}> "$work/ctl"
  for _ in $(seq 100); do grep -q '^bootstrap=' "$work/cluster.out" && break; sleep 0.1; done
  bootstrap=$(sed -n 's/^bootstrap=//p' "$work/cluster.out")
  : > "$work/proxy.log"
  valgrind --tool=callgrind --callgrind-out-file="$out" "$proxy" --config "$root/config/produce-proxy.example.toml" \
    --set "upstream.bootstrap_servers=[\"${bootstrap//,/\",\"}\"]" --set listener.address=127.0.0.1:0 \
    --set metrics.address=127.0.0.1:0 > "$work/proxy.log" 2>&1 {ctl}>&- &
  proxy_pid=$!; pids+=("$proxy_pid")
  for _ in $(seq 600); do grep -q 'ready: clients connect to' "$work/proxy.log" && break; sleep 0.1; done
  addr=$(grep -m1 'ready: clients connect to' "$work/proxy.log" | sed -E 's/.*clients connect to ([^,]+),.*/\1/')
  [ -n "$addr" ] || { echo "proxy did not start: $(tail -3 "$work/proxy.log")" >&2; exit 1; }
  "$build/tests/bench/bench_chatty_client" --bootstrap "$addr" --version 2 --topic w3 --connections 64 --acks 1 \
    --count "$count" --duration-s 300 > "$work/client.$count.json"
  kill -INT "$proxy_pid"; wait "$proxy_pid" || true
  exec {ctl}>&-; wait "$cluster" || true
}

run "$requests" "$work/small.out"
run $((2 * requests)) "$work/large.out"

/usr/bin/python3 - "$work/small.out" "$work/large.out" "$requests" <<'EOF'
import re
import sys

# glibc's allocator: whatever it compiled from malloc.c, and operator new and
# delete around it.
ALLOCATOR_FILE = re.compile(r"/malloc\.c$")
ALLOCATOR_FN = re.compile(r"^operator (new|delete)")
NAMESPACE = {"fl": "file", "fi": "file", "fe": "file", "cfi": "file", "cfl": "file", "fn": "fn", "cfn": "fn"}


def totals(path):
    """(all instructions, instructions in the allocator, calls to malloc) of one callgrind file."""
    names = {"file": {}, "fn": {}}
    function_file = file = fn = ""
    callee = None
    total = allocator = mallocs = 0
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"(fl|fi|fe|cfi|cfl|fn|cfn)=\((\d+)\)(?: (.*))?$", line)
        if m:
            kind, key, name = m.groups()
            table = names[NAMESPACE[kind]]
            if name:
                table[key] = name
            if kind in ("cfi", "cfl"):
                pass  # the callee's file: names it, changes nothing here
            elif kind == "cfn":
                callee = table.get(key, "")
            elif kind == "fn":
                fn, callee, file = table.get(key, ""), None, function_file
            elif kind == "fl":
                function_file = file = table.get(key, "")
            else:  # fi, fe: inlined code from another file, until the next fn
                file = table.get(key, "")
            continue
        if line.startswith("calls="):
            if callee == "malloc":
                mallocs += int(line.split("=")[1].split()[0])
            continue
        fields = line.split()
        if len(fields) >= 2 and fields[1].isdigit() and (line[:1].isdigit() or line[:1] in "+-*"):
            if callee is not None:  # the inclusive cost of a call: counted where it was spent
                callee = None
                continue
            cost = int(fields[1])
            total += cost
            if ALLOCATOR_FILE.search(file) or ALLOCATOR_FN.search(fn):
                allocator += cost
    return total, allocator, mallocs


small, large, n = totals(sys.argv[1]), totals(sys.argv[2]), int(sys.argv[3])
per = [(b - a) / n for a, b in zip(small, large)]
print(f"per chatty request: {per[0]:,.0f} instructions, {per[1]:,.0f} in the allocator "
      f"({100 * per[1] / per[0]:.1f} %), {per[2]:.1f} calls to malloc")
EOF
echo "callgrind files: $work/small.out, $work/large.out" >&2
