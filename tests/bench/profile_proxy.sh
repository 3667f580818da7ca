#!/usr/bin/env bash
# Names the proxy's top CPU costs under one benchmark client, as
# docs/BENCHMARKS.md does for a missed goal: a test cluster and produce-proxy
# on loopback, one client run, `perf record` on the proxy process only.
#
#   tests/bench/profile_proxy.sh chatty|legacy|v7 [SECONDS]
#
# chatty: 64 connections, one record per Produce v2 request (workload 3,
# proxy linger_ms 0); legacy / v7: librdkafka in legacy or default mode,
# 1 KiB records, acks=all (workload 1). Prints `perf report`'s top symbols
# (self time), CPU share per binary and system-call counts, and keeps perf.data in the temporary folder it names.
# Needs scripts/setup.sh --bench-tools and a release build.
set -euo pipefail

kind=${1:-chatty}
secs=${2:-6}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build/release
work=$(mktemp -d /tmp/pp-profile.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

mkfifo "$work/ctl"
"$build/tests/broker/test-cluster" --brokers 3 --topic p:16 --seed 1 < "$work/ctl" > "$work/cluster.out" 2>/dev/null &
pids+=($!)
exec {ctl}> "$work/ctl"
for _ in $(seq 100); do grep -q '^bootstrap=' "$work/cluster.out" && break; sleep 0.1; done
bootstrap=$(sed -n 's/^bootstrap=//p' "$work/cluster.out")

linger=5
[ "$kind" = chatty ] && linger=0
"$build/daemon/produce-proxy" --config "$root/config/produce-proxy.example.toml" \
  --set "upstream.bootstrap_servers=[\"${bootstrap//,/\",\"}\"]" --set listener.address=127.0.0.1:0 \
  --set metrics.address=127.0.0.1:0 --set producer.linger_ms=$linger > "$work/proxy.log" 2>&1 {ctl}>&- &
proxy=$!; pids+=("$proxy")
for _ in $(seq 100); do grep -q 'ready: clients connect to' "$work/proxy.log" && break; sleep 0.1; done
addr=$(grep -m1 'ready: clients connect to' "$work/proxy.log" | sed -E 's/.*clients connect to ([^,]+),.*/\1/')

perf record -q -e cpu-clock -F 1999 -g -p "$proxy" -o "$work/perf.data" -- sleep $((secs + 2)) 2>/dev/null &
perf_pid=$!
# System calls per client request: the kernel is most of a chatty client's cost.
events=$(printf 'syscalls:sys_enter_%s,' read readv write writev epoll_ctl epoll_wait epoll_pwait)
perf stat -x, -e "${events%,}" -p "$proxy" -o "$work/syscalls.csv" -- sleep $((secs + 2)) 2>/dev/null &
stat_pid=$!
sleep 0.5
case $kind in
  chatty) "$build/tests/bench/bench_chatty_client" --bootstrap "$addr" --topic p --connections 64 --version 2 \
            --duration-s "$secs" ;;
  legacy) "$build/tests/bench/bench_rdkafka_producer" --bootstrap "$addr" --topic p --acks all --legacy 1 \
            --count 2000000 --duration-s "$secs" ;;
  v7) "$build/tests/bench/bench_rdkafka_producer" --bootstrap "$addr" --topic p --acks all \
        --count 2000000 --duration-s "$secs" ;;
  *) echo "profile: unknown kind $kind" >&2; exit 2 ;;
esac
wait "$perf_pid" "$stat_pid" || true
echo "perf data: $work/perf.data"
echo "system calls of the proxy during the run (count, event):"
awk -F, '$1 ~ /^[0-9]+$/ {print "  " $1, $3}' "$work/syscalls.csv"
perf report -i "$work/perf.data" --no-children -g none --sort dso --stdio 2>/dev/null | grep -E "^ +[0-9]" | head -6
perf report -i "$work/perf.data" --no-children -g none --sort dso,symbol --stdio 2>/dev/null | grep -E "^ +[0-9]" | cut -c1-150 | head -30
