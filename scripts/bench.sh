#!/usr/bin/env bash
# The benchmarks of issue 8 in one command: produce-proxy against a direct
# librdkafka producer on the same KIP-1269 test cluster, six workloads, ratios
# measured in the same run (this machine is shared and noisy: absolute numbers
# drift, ratios hold). Everything listens on 127.0.0.1; every process this
# script starts is stopped on exit. Benchmarks report, they never fail on a
# number. Workload 7 (issue 12) is workload 1's comparison against a real
# Apache Kafka 4.4.0 broker (tests/kafka), with Kafka's own Java producer as a
# fourth case; it needs java and mvn (scripts/setup.sh). Workload 8 (issue 17)
# is one synchronous client, proxy and direct in interleaved pairs. Workload
# 9 (issue 15) is workload 7 over TLS: librdkafka direct to Kafka's SSL
# listener against a legacy client through the proxy whose upstream is TLS.
# Workload 10 is added latency in paired rounds against the test cluster and
# Kafka 4.4.0, workload 11 the proxy's own ceiling with 100 B records (issue 17).
# `--baseline BINARY` adds an older produce-proxy to workloads 3, 6, 7, 8, 10
# and 11 as case `before*`, so before and after are measured in the same run;
# it reads the example config of its own tree (or --baseline-config).
#
#   scripts/bench.sh [--skip-build] [--quick] [--keep] [--only "1 2 3 4 5 6 7 8 9 10 11" | spool | spool_drain | client_tls]
#                    [--reps N] [--baseline PATH [--baseline-config TOML]]
#
# Results: docs/bench/results.json (every run, raw), docs/bench/*.png (one
# plot per workload, gnuplot) and the generated part of docs/BENCHMARKS.md.
# Needs `scripts/setup.sh --bench-tools` (gnuplot, curl).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/release
python=/usr/bin/python3  # Debian's, whichever python3 comes first on PATH
report=$root/tests/bench/bench_report.py

args="$*"
skip_build=0 quick=0 keep=0 only="1 2 3 4 5 6 7 8 9 10 11" reps=3 baseline="" baseline_config=""
while [ $# -gt 0 ]; do
  case "$1" in
    --skip-build) skip_build=1 ;;
    --quick) quick=1 ;;
    --keep) keep=1 ;;
    --only) only=$2; shift ;;
    --reps) reps=$2; shift ;;
    --baseline) baseline=$(realpath "$2"); shift ;;
    --baseline-config) baseline_config=$(realpath "$2"); shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "bench: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

# Run length: every run is bounded by a record count AND a duration.
secs=8; w2_secs=12; count=400000 w3_reps=8 w3_secs=3 w8_pairs=20
if [ "$quick" -eq 1 ]; then secs=3; w2_secs=5; count=100000; reps=1; w3_reps=2 w3_secs=2 w8_pairs=4; fi
record_bytes=1024

work=$(mktemp -d /tmp/pp-bench.XXXXXX)
results=$work/results.jsonl
: > "$results"
pids=()
cluster_pid="" cluster_fd="" proxy_pid="" bootstrap="" proxy_addr="" metrics_addr=""

cleanup() {
  # Only what we started, by pid: the cluster (its stdin closes with us too).
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.5
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  # Logs of the processes stay only when asked for (or to debug a failure).
  if [ "$keep" -eq 1 ]; then log "logs kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "bench: $*" >&2; }

if [ "$skip_build" -eq 0 ]; then
  log "building release"
  cmake --preset release >/dev/null
  cmake --build --preset release -j2 --target produce-proxy test-cluster \
    bench_rdkafka_producer bench_open_loop bench_chatty_client >/dev/null
fi
bin_proxy=$build/daemon/produce-proxy
bin_cluster=$build/tests/broker/test-cluster
bin_rdk=$build/tests/bench/bench_rdkafka_producer
bin_open=$build/tests/bench/bench_open_loop
bin_chatty=$build/tests/bench/bench_chatty_client

# An older binary refuses the keys added since, so it runs with the example
# config of its own tree: the first config/produce-proxy.example.toml above it
# (as in a build tree), or --baseline-config.
if [ -n "$baseline" ] && [ -z "$baseline_config" ]; then
  d=$(dirname "$baseline")
  while [ "$d" != / ] && [ ! -f "$d/config/produce-proxy.example.toml" ]; do d=$(dirname "$d"); done
  [ -f "$d/config/produce-proxy.example.toml" ] || { log "no example config above $baseline: pass --baseline-config"; exit 2; }
  baseline_config=$d/config/produce-proxy.example.toml
fi

# ---- processes -------------------------------------------------------------

# start_cluster ARGS...: a test cluster fed by a FIFO we hold open, so control
# commands can be written at any time; sets bootstrap.
start_cluster() {
  local fifo=$work/cluster.ctl out=$work/cluster.out
  rm -f "$fifo"; mkfifo "$fifo"; : > "$out"
  # No workload reads payloads back (only `stats`), so 64 MiB per partition keeps a long run from exhausting RAM.
  "$bin_cluster" --seed 1 --retain-log-bytes 67108864 "$@" < "$fifo" > "$out" 2> "$work/cluster.err" &
  cluster_pid=$!; pids+=("$cluster_pid")
  exec {cluster_fd}> "$fifo"
  local i
  for i in $(seq 100); do
    bootstrap=$(sed -n 's/^bootstrap=//p' "$out" | head -1)
    [ -n "$bootstrap" ] && return 0
    sleep 0.1
  done
  log "test cluster did not start: $(tail -3 "$work/cluster.err")"; exit 1
}

# cluster_cmd CMD: writes one control command, prints its one-line answer.
cluster_cmd() {
  local out=$work/cluster.out before i
  before=$(wc -l < "$out")
  echo "$1" >&"$cluster_fd"
  for i in $(seq 100); do
    [ "$(wc -l < "$out")" -gt "$before" ] && { tail -1 "$out"; return 0; }
    sleep 0.05
  done
  echo "no answer"
}

stop_cluster() {
  [ -n "$cluster_fd" ] && exec {cluster_fd}>&-
  wait_or_kill "$cluster_pid"
  cluster_pid="" cluster_fd=""
}

# start_proxy [--set k=v ...]: produce-proxy on ephemeral ports in front of
# the current cluster; sets proxy_addr and metrics_addr from its ready line.
# With proxy_binary set (the --baseline binary), that one runs instead.
proxy_binary="" proxy_count=0
start_proxy() {
  proxy_count=$((proxy_count + 1))  # one log per proxy: several may run at once
  local log_file=$work/proxy.$proxy_count${proxy_binary:+.baseline}.log
  : > "$log_file"
  local config=$root/config/produce-proxy.example.toml
  [ -n "$proxy_binary" ] && config=$baseline_config
  "${proxy_binary:-$bin_proxy}" --config "$config" \
    --set "upstream.bootstrap_servers=[\"${bootstrap//,/\",\"}\"]" \
    --set listener.address=127.0.0.1:0 --set metrics.address=127.0.0.1:0 \
    --set shutdown.drain_timeout_ms=3000 "$@" > "$log_file" 2>&1 {cluster_fd}>&- &
  proxy_pid=$!; pids+=("$proxy_pid")
  local i line
  for i in $(seq 150); do
    line=$(grep -m1 'ready: clients connect to' "$log_file" || true)
    if [ -n "$line" ]; then
      proxy_addr=$(sed -E 's/.*clients connect to ([^,]+),.*/\1/' <<< "$line")
      metrics_addr=$(sed -E 's/.*Prometheus scrapes ([0-9.]+:[0-9]+).*/\1/' <<< "$line")
      return 0
    fi
    sleep 0.1
  done
  log "proxy did not become ready: $(tail -3 "$log_file")"; exit 1
}

stop_proxy() {
  kill -TERM "$proxy_pid" 2>/dev/null || true
  wait_or_kill "$proxy_pid"
  proxy_pid=""
}

wait_or_kill() {
  local pid=$1 i
  [ -z "$pid" ] && return 0
  for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# start_pair ARGS...: this build's proxy and, with --baseline, the older one
# beside it in front of the same cluster; sets after_{pid,addr,metrics} and
# before_{pid,addr,metrics} (empty without --baseline).
start_pair() {
  before_pid="" before_addr="" before_metrics=""
  if [ -n "$baseline" ]; then
    proxy_binary=$baseline start_proxy "$@"
    before_pid=$proxy_pid before_addr=$proxy_addr before_metrics=$metrics_addr
  fi
  start_proxy "$@"
  after_pid=$proxy_pid after_addr=$proxy_addr after_metrics=$metrics_addr
}
# use_proxy before|after: the one proxy_run measures next.
use_proxy() {
  if [ "$1" = before ]; then proxy_pid=$before_pid metrics_addr=$before_metrics
  else proxy_pid=$after_pid metrics_addr=$after_metrics; fi
}
stop_pair() {
  proxy_pid=$after_pid; stop_proxy
  if [ -n "$before_pid" ]; then proxy_pid=$before_pid; stop_proxy; fi
}

# CPU seconds (user + system) a process has used so far.
proc_cpu() { awk -v t="$(getconf CLK_TCK)" '{print ($14 + $15) / t}' "/proc/$1/stat"; }
proc_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
# A proxy metric (sum over its label sets), 0 when absent; $2 = decimals.
metric() {
  curl -s "http://$metrics_addr/metrics" |
    awk -v n="produce_proxy_$1" -v d="${2:-0}" \
      '$1 == n || index($1, n "{") == 1 {s += $2} END {printf "%.*f\n", d, s}'
}

# record KEY=VALUE... < tool-json: one results line, tagged.
record() { "$python" "$report" tag "$@" >> "$results"; }

# run TAGS... -- CMD...: runs one load generator and records its JSON line
# with the tags. A failed run is logged and recorded as such, never fatal:
# the other workloads still report.
run() {
  local tags=() out
  while [ "$1" != "--" ]; do tags+=("$1"); shift; done; shift
  out=$("$@" 2>> "$work/tools.err") || log "run failed (${tags[*]}): $(tail -2 "$work/tools.err")"
  echo "$out" | record "${tags[@]}"
}

# proxy_run TAGS... -- CMD...: run, plus the proxy's CPU seconds and its
# re-batching counters over that run.
proxy_run() {
  local tags=() cpu0 req0 del0 bsum0 bcnt0 wire0 out
  while [ "$1" != "--" ]; do tags+=("$1"); shift; done; shift
  cpu0=$(proc_cpu "$proxy_pid"); req0=$(metric upstream_requests_total)
  del0=$(metric records_delivered_total); bsum0=$(metric batch_records_sum); bcnt0=$(metric batch_records_count)
  wire0=$(metric batch_bytes_sum)
  local crs0 crc0 urs0 urc0 sched0
  crs0=$(metric client_request_duration_seconds_sum 6); crc0=$(metric client_request_duration_seconds_count)
  urs0=$(metric upstream_request_duration_seconds_sum 6); urc0=$(metric upstream_request_duration_seconds_count)
  sched0=$(cat "/proc/$proxy_pid/schedstat")
  out=$("$@" 2>> "$work/tools.err") || log "run failed (${tags[*]}): $(tail -2 "$work/tools.err")"
  echo "$out" | record "${tags[@]}" \
    proxy_cpu_s="$(awk -v a="$cpu0" -v b="$(proc_cpu "$proxy_pid")" 'BEGIN{print b - a}')" \
    upstream_requests=$(( $(metric upstream_requests_total) - req0 )) \
    proxy_delivered=$(( $(metric records_delivered_total) - del0 )) \
    batch_records_sum=$(( $(metric batch_records_sum) - bsum0 )) \
    batch_records_count=$(( $(metric batch_records_count) - bcnt0 )) \
    batch_bytes_sum=$(( $(metric batch_bytes_sum) - wire0 )) \
    proxy_rss_kb="$(proc_kb "$proxy_pid" VmRSS)" \
    in_proxy_s_sum="$(awk -v a="$crs0" -v b="$(metric client_request_duration_seconds_sum 6)" 'BEGIN{print b - a}')" \
    in_proxy_count=$(( $(metric client_request_duration_seconds_count) - crc0 )) \
    upstream_rtt_s_sum="$(awk -v a="$urs0" -v b="$(metric upstream_request_duration_seconds_sum 6)" 'BEGIN{print b - a}')" \
    upstream_rtt_count=$(( $(metric upstream_request_duration_seconds_count) - urc0 )) \
    $(read -r _ d1 s1 < "/proc/$proxy_pid/schedstat"; set -- $sched0
      echo "proxy_runqueue_wait_s=$(awk -v a="$2" -v b="$d1" 'BEGIN{print (b - a) / 1e9}') proxy_timeslices=$((s1 - $3))")
}

rdk() { "$bin_rdk" --record-bytes $record_bytes --count $count --duration-s $secs "$@"; }

# ---- workloads ---------------------------------------------------------------

workload1() {  # overhead: 1 KiB, 16 partitions, acks=all
  local rep cases c
  for rep in $(seq "$reps"); do
    # The order rotates per repetition, so neither side always runs first
    # (on a fresh cluster) or last (on one holding more data).
    cases=(direct proxy_legacy proxy_v7)
    cases=("${cases[@]:$(( (rep - 1) % 3 ))}" "${cases[@]:0:$(( (rep - 1) % 3 ))}")
    log "w1 rep $rep: ${cases[*]}"
    start_cluster --brokers 3 --topic w1:16
    start_proxy
    for c in "${cases[@]}"; do
      case $c in
        direct) run workload=1 case=direct rep="$rep" -- \
          rdk --bootstrap "$bootstrap" --topic w1 --acks all --idempotence 1 ;;
        proxy_legacy) proxy_run workload=1 case=proxy_legacy rep="$rep" -- \
          rdk --bootstrap "$proxy_addr" --topic w1 --acks all --legacy 1 ;;
        proxy_v7) proxy_run workload=1 case=proxy_v7 rep="$rep" -- \
          rdk --bootstrap "$proxy_addr" --topic w1 --acks all ;;
      esac
    done
    stop_proxy; stop_cluster
  done
}

w2_batch=16384
workload2() {  # KIP-1269 windows: 50 ms RTT, RETAIN 5 vs 20, 8 partitions
  log "w2: proxy to RETAIN 5 and RETAIN 20, librdkafka direct (5 in flight)"
  start_cluster --brokers 3 --topic w5:8:5 --topic w20:8:20 --rtt-ms 50
  start_proxy --set producer.batch_bytes=$w2_batch --set producer.max_in_flight_per_connection=256
  local topic
  for topic in w5 w20; do
    proxy_run workload=2 case="proxy_$topic" window="${topic#w}" batch_bytes=$w2_batch rtt_ms=50 -- \
      "$bin_rdk" --bootstrap "$proxy_addr" --topic "$topic" --acks all --record-bytes $record_bytes \
        --count 2000000 --duration-s $w2_secs --linger-ms 20
    cluster_cmd stats | record workload=2 case="stats_$topic" topic="$topic"
  done
  stop_proxy
  # The stock client, same batch size: idempotent (which caps it at 5 in
  # flight), and plain with max.in.flight=5. Flush is bounded: librdkafka
  # 2.0.2 crawls in the idempotent case (see BENCHMARKS.md).
  run workload=2 case=direct_idempotent window=5 batch_bytes=$w2_batch rtt_ms=50 -- \
    "$bin_rdk" --bootstrap "$bootstrap" --topic w20 --acks all --idempotence 1 --max-in-flight 5 \
      --batch-bytes $w2_batch --record-bytes $record_bytes --count 2000000 --duration-s $w2_secs \
      --flush-timeout-ms 10000
  run workload=2 case=direct_inflight5 window=5 batch_bytes=$w2_batch rtt_ms=50 -- \
    "$bin_rdk" --bootstrap "$bootstrap" --topic w20 --acks all --max-in-flight 5 \
      --batch-bytes $w2_batch --record-bytes $record_bytes --count 2000000 --duration-s $w2_secs \
      --flush-timeout-ms 10000
  stop_cluster
}

workload3() {  # chatty legacy clients: 64 connections, one record per request
  # Short runs, interleaved: one cluster and every proxy up for the whole
  # workload, then per repetition one run of each case, order rotated, and
  # ratios against the direct run of the same repetition (closest in time;
  # on this shared box the direct rate alone moves 2x between minutes).
  local rep cases c chatty=(--topic w3 --connections 64 --acks 1 --count $count --duration-s $w3_secs)
  local -A addr pid metrics
  log "w3: 64 chatty connections, $w3_reps interleaved repetitions of $w3_secs s"
  start_cluster --brokers 3 --topic w3:16
  cases=(direct proxy_linger5 proxy_linger0)
  [ -n "$baseline" ] && cases+=(before_linger5)
  for c in "${cases[@]:1}"; do
    [ "${c%%_*}" = before ] && proxy_binary=$baseline
    start_proxy --set producer.linger_ms="${c##*_linger}"
    proxy_binary=""
    addr[$c]=$proxy_addr pid[$c]=$proxy_pid metrics[$c]=$metrics_addr
  done
  for rep in $(seq "$w3_reps"); do
    local n=$(( (rep - 1) % ${#cases[@]} ))
    for c in "${cases[@]:$n}" "${cases[@]:0:$n}"; do
      if [ "$c" = direct ]; then
        run workload=3 case=direct rep="$rep" -- "$bin_chatty" --bootstrap "$bootstrap" --version 3 "${chatty[@]}"
        continue
      fi
      proxy_pid=${pid[$c]} metrics_addr=${metrics[$c]}
      proxy_run workload=3 case="$c" rep="$rep" linger_ms="${c##*_linger}" -- \
        "$bin_chatty" --bootstrap "${addr[$c]}" --version 2 "${chatty[@]}"
    done
  done
  for c in "${cases[@]:1}"; do proxy_pid=${pid[$c]}; stop_proxy; done
  stop_cluster
}

workload4() {  # open loop at 50 % of the proxy's measured maximum
  # Client settings of every run here, the maximum's included (a smaller
  # linger costs the client more CPU per record, so a maximum taken with
  # other settings would not be this client's): linger 1 ms and Nagle off,
  # as a latency-minded application sets them.
  local client=(--acks all --linger-ms 1 --rdkafka socket.nagle.disable=true)
  local max rate pct rep c cases
  log "w4: the proxy's maximum with these client settings"
  start_cluster --brokers 3 --topic w4:16; start_proxy
  proxy_run workload=4 case=max -- rdk --bootstrap "$proxy_addr" --topic w4 "${client[@]}"
  stop_proxy; stop_cluster
  max=$("$python" "$report" max-rate "$results")
  # 50 % is the issue's load; 10 % shows the proxy's own cost when CPU is
  # not the bottleneck. Repeated, order rotated, as tails are noisy here.
  for pct in 50 10; do
    rate=$(awk -v m="$max" -v p=$pct 'BEGIN {printf "%d", m * p / 100}')
    for rep in $(seq "$reps"); do
      cases=(direct proxy_linger5 proxy_linger0)
      cases=("${cases[@]:$(( (rep - 1) % 3 ))}" "${cases[@]:0:$(( (rep - 1) % 3 ))}")
      log "w4: open loop at $rate records/s ($pct % of $max), rep $rep: ${cases[*]}"
      start_cluster --brokers 3 --topic w4:16
      for c in "${cases[@]}"; do
        if [ "$c" = direct ]; then
          run workload=4 case=direct load_pct=$pct rep="$rep" -- "$bin_open" --bootstrap "$bootstrap" \
            --topic w4 --idempotence 1 "${client[@]}" --rate "$rate" --duration-s $secs
        else
          start_proxy --set producer.linger_ms=${c#proxy_linger}
          proxy_run workload=4 case="$c" load_pct=$pct rep="$rep" proxy_linger_ms=${c#proxy_linger} -- \
            "$bin_open" --bootstrap "$proxy_addr" --topic w4 "${client[@]}" --rate "$rate" --duration-s $secs
          stop_proxy
        fi
      done
      stop_cluster
    done
  done
}

workload5() {  # memory: idle, 1,000 idle connections, stalled upstream
  local buffer_mb buffer i idle_rss client samples
  log "w5: idle, then 1,000 idle client connections"
  start_cluster --brokers 3 --topic w5m:16
  start_proxy
  sleep 2
  idle_rss=$(proc_kb "$proxy_pid" VmRSS)
  "$bin_chatty" --bootstrap "$proxy_addr" --idle-connections 1000 --hold-s 6 > "$work/idle.json" \
    2>> "$work/tools.err" {cluster_fd}>&- &
  client=$!; pids+=("$client")
  for i in $(seq 100); do [ "$(metric client_connections)" -ge 1000 ] && break; sleep 0.1; done
  sleep 1
  echo "{\"connections_seen\": $(metric client_connections)}" |
    record workload=5 case=idle_1000 idle_rss_kb="$idle_rss" rss_kb="$(proc_kb "$proxy_pid" VmRSS)"
  wait "$client" || true
  stop_proxy; stop_cluster
  for buffer_mb in 16 64; do
    buffer=$((buffer_mb << 20))
    log "w5: upstream stalled, buffer_memory_bytes=$buffer"
    start_cluster --brokers 3 --topic w5m:16
    start_proxy --set producer.buffer_memory_bytes=$buffer --set upstream.request_timeout_ms=60000
    sleep 2
    idle_rss=$(proc_kb "$proxy_pid" VmRSS)
    echo 5 > "/proc/$proxy_pid/clear_refs"  # VmHWM restarts from here
    "$bin_rdk" --bootstrap "$proxy_addr" --topic w5m --acks 1 --legacy 1 --record-bytes $record_bytes \
      --count 5000000 --duration-s $((secs + 6)) --flush-timeout-ms 0 > "$work/push.json" \
      2>> "$work/tools.err" {cluster_fd}>&- &
    client=$!; pids+=("$client")
    # Stall once the client is producing (its metadata must get through
    # first): from then on every response waits 10 minutes.
    for i in $(seq 100); do [ "$(metric records_received_total)" -gt 0 ] && break; sleep 0.1; done
    cluster_cmd "rtt 600000" >/dev/null
    samples=$work/rss_$buffer_mb.tsv; : > "$samples"
    local stall_ms=$(( ${EPOCHREALTIME/./} / 1000 ))
    for i in $(seq $(( (secs + 4) * 4 ))); do
      kill -0 "$client" 2>/dev/null || break
      echo "$(( ${EPOCHREALTIME/./} / 1000 - stall_ms )) $(proc_kb "$proxy_pid" VmRSS) $(metric buffered_bytes) $(metric backpressure_active)" >> "$samples"
      sleep 0.25
    done
    "$python" "$report" samples "$samples" |
      record workload=5 case=stalled buffer_mb=$buffer_mb idle_rss_kb="$idle_rss" \
        rss_end_kb="$(proc_kb "$proxy_pid" VmRSS)" hwm_kb="$(proc_kb "$proxy_pid" VmHWM)" \
        received="$(metric records_received_total)" delivered="$(metric records_delivered_total)"
    wait "$client" || true
    stop_proxy; stop_cluster
  done
}

workload6() {  # CPU seconds per GB, with and without compression
  local codec rep cases c n
  # Uncompressed is issue 17's goal (proxy <= 0.25x the direct producer's
  # CPU per GB) for both client shapes: repetitions with the order rotated,
  # every proxy (and the --baseline binary's) up on one cluster per
  # repetition, ratios against the direct run of the same repetition.
  for rep in $(seq "$reps"); do
    cases=(direct proxy proxy_legacy)
    [ -n "$baseline" ] && cases+=(before before_legacy)
    n=$(( (rep - 1) % ${#cases[@]} ))
    cases=("${cases[@]:$n}" "${cases[@]:0:$n}")
    log "w6 none rep $rep: ${cases[*]}"
    start_cluster --brokers 3 --topic w6:16
    start_pair --set producer.compression=none
    for c in "${cases[@]}"; do
      if [ "$c" = direct ]; then
        run workload=6 case=direct codec=none rep="$rep" -- \
          rdk --bootstrap "$bootstrap" --topic w6 --acks all --idempotence 1 --compression none
        continue
      fi
      # proxy*: this build, before*: the baseline; *_legacy: Produce v1.
      local which=after to=$after_addr shape=()
      [ "${c%%_*}" = before ] && which=before to=$before_addr
      [ "${c##*_}" = legacy ] && shape=(--legacy 1)
      use_proxy $which
      proxy_run workload=6 case="$c" codec=none rep="$rep" -- rdk --bootstrap "$to" --topic w6 --acks all "${shape[@]}"
    done
    stop_pair; stop_cluster
  done
  for codec in lz4 zstd; do
    log "w6: $codec"
    start_cluster --brokers 3 --topic w6:16
    run workload=6 case=direct codec=$codec -- \
      rdk --bootstrap "$bootstrap" --topic w6 --acks all --idempotence 1 --compression $codec
    start_proxy --set producer.compression=$codec
    proxy_run workload=6 case=proxy codec=$codec -- \
      rdk --bootstrap "$proxy_addr" --topic w6 --acks all
    stop_proxy; stop_cluster
  done
}

workload8() {  # one synchronous client: one record, wait for the ack, repeat
  # Added latency as paired, interleaved runs: per pair one short run
  # direct and one through each proxy, order alternating, then the median
  # of the per-pair differences (bench_tables.py), so the drift of a shared
  # machine cancels within a pair. Produce v3 both ways: the only
  # difference is the hop.
  local pair c cases one=(--topic w8 --connections 1 --version 3 --acks 1 --count 100000 --duration-s 1)
  log "w8: one synchronous client, $w8_pairs interleaved pairs"
  start_cluster --brokers 3 --topic w8:1
  start_pair
  for pair in $(seq "$w8_pairs"); do
    cases=(direct proxy)
    [ -n "$baseline" ] && cases+=(before)
    [ $((pair % 2)) -eq 0 ] && cases=("${cases[@]:1}" direct)
    for c in "${cases[@]}"; do
      case $c in
        direct) run workload=8 case=direct pair="$pair" -- "$bin_chatty" --bootstrap "$bootstrap" "${one[@]}" ;;
        proxy) run workload=8 case=proxy pair="$pair" -- "$bin_chatty" --bootstrap "$after_addr" "${one[@]}" ;;
        before) run workload=8 case=before pair="$pair" -- "$bin_chatty" --bootstrap "$before_addr" "${one[@]}" ;;
      esac
    done
  done
  stop_pair; stop_cluster
}

# ---- workload 7: real Apache Kafka 4.4.0 ------------------------------------

# The broker JVM as kafka-server-start.sh runs it (1 GiB heap, G1, C2), not
# the test harness's small C1-only start-up settings; PP_KAFKA_JVM_FLAGS and
# PP_KAFKA_HEAP override.
w7_jvm_flags=${PP_KAFKA_JVM_FLAGS:-"-Xms1g -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true"}
w7_heap=${PP_KAFKA_HEAP:-1g}
broker_pid=""
# librdkafka runs here end on the duration (against one broker 400,000
# records took only 2-4 s, too short to average out this machine's noise);
# the Java tool runs its count, a quarter of it warm-up, and is stopped
# past $secs + 8 s.
w7_count=$(( quick ? 300000 : 1000000 )) w7_java_count=$(( quick ? 150000 : 400000 ))

# start_kafka ARGS...: a 1-node KRaft Apache Kafka (tests/bench/bench_kafka.py
# cluster, i.e. tests/kafka/kafka_cluster.py) fed by a FIFO we hold open like
# the test cluster's, so stop_cluster stops it too; sets bootstrap and
# broker_pid. Returns 1 (logged) when it does not come up in 90 s.
start_kafka() {
  local fifo=$work/kafka.ctl out=$work/kafka.out i
  rm -f "$fifo"; mkfifo "$fifo"; : > "$out"
  PP_KAFKA_JVM_FLAGS="$w7_jvm_flags" "$python" "$root/tests/bench/bench_kafka.py" cluster --heap "$w7_heap" \
    "$@" < "$fifo" > "$out" 2> "$work/kafka.err" &
  cluster_pid=$!; pids+=("$cluster_pid")
  exec {cluster_fd}> "$fifo"
  bootstrap=""
  for i in $(seq 900); do
    bootstrap=$(sed -n 's/^bootstrap=//p' "$out" | head -1)
    if [ -n "$bootstrap" ]; then
      broker_pid=$(sed -n 's/^broker_pid=//p' "$out" | head -1)
      log "w7: Kafka $(sed -n 's/^kafka_version=//p' "$out") up in $(sed -n 's/^startup_s=//p' "$out") s at $bootstrap"
      return 0
    fi
    kill -0 "$cluster_pid" 2>/dev/null || break
    sleep 0.1
  done
  log "w7: Kafka did not start: $(tail -5 "$work/kafka.err")"
  stop_cluster
  return 1
}

# w7_case run|proxy_run TAGS... -- CMD...: the run, plus the broker JVM's CPU
# seconds over it (added to the line just recorded).
w7_case() {
  local b0 last
  b0=$(proc_cpu "$broker_pid")
  "$@"
  last=$(tail -1 "$results"); sed -i '$d' "$results"
  echo "$last" | record broker_cpu_s="$(awk -v a="$b0" -v b="$(proc_cpu "$broker_pid")" 'BEGIN{print b - a}')"
}

workload7() {  # overhead against real Apache Kafka 4.4.0: 1 KiB, 16 partitions, acks=all
  local rep cases c java_libs="" n
  if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
    log "w7: skipped, java and mvn are needed (scripts/setup.sh)"; return 0
  fi
  java_libs=$("$python" "$root/tests/bench/bench_kafka.py" java-libs 2>> "$work/tools.err" | tail -1) ||
    { log "w7: no kafka-tools jar, the Java case is skipped: $(tail -2 "$work/tools.err")"; java_libs=""; }
  for rep in $(seq "$reps"); do
    # Rotated per repetition as in workload 1 (each case first once in as
    # many repetitions as there are cases).
    cases=(direct proxy_legacy proxy_v7 java)
    [ -n "$baseline" ] && cases+=(before_legacy)
    n=$(( (rep - 1) % ${#cases[@]} ))
    cases=("${cases[@]:$n}" "${cases[@]:0:$n}")
    log "w7 rep $rep: ${cases[*]}"
    start_kafka --topic w7:16 || return 0
    start_pair
    for c in "${cases[@]}"; do
      use_proxy after
      case $c in
        before_legacy) use_proxy before
          w7_case proxy_run workload=7 case=before_legacy rep="$rep" -- \
          rdk --bootstrap "$before_addr" --topic w7 --acks all --legacy 1 --count $w7_count ;;
        direct) w7_case run workload=7 case=direct rep="$rep" -- \
          rdk --bootstrap "$bootstrap" --topic w7 --acks all --idempotence 1 --count $w7_count ;;
        proxy_legacy) w7_case proxy_run workload=7 case=proxy_legacy rep="$rep" -- \
          rdk --bootstrap "$proxy_addr" --topic w7 --acks all --legacy 1 --count $w7_count ;;
        proxy_v7) w7_case proxy_run workload=7 case=proxy_v7 rep="$rep" -- \
          rdk --bootstrap "$proxy_addr" --topic w7 --acks all --count $w7_count ;;
        # The Java producer with librdkafka's batch size (1,000,000 bytes)
        # instead of its own 16 KiB default, so both direct clients batch
        # alike; linger.ms 5 is already the default of both.
        java) [ -n "$java_libs" ] && w7_case run workload=7 case=java rep="$rep" batch_size=1000000 -- \
          "$python" "$root/tests/bench/bench_kafka.py" java-perf --libs "$java_libs" \
            --bootstrap "$bootstrap" --topic w7 --count $w7_java_count --duration-s $secs \
            --record-bytes $record_bytes --prop acks=all --prop batch.size=1000000 ;;
      esac
    done
    stop_pair; stop_cluster
  done
}

# ---- workloads 10 and 11 (issue 17): latency you can trust, the ceiling ----

issue17=$root/tests/bench/bench_issue17.py
# Workload 10: per load level, w10_pairs rounds of one short open-loop run
# per case (direct, proxy linger 5, proxy linger 0), order rotated, both
# proxies and the cluster up throughout; the tables take the median of the
# per-round differences (tests/bench/bench_issue17.py).
w10_pairs=$(( quick ? 2 : 8 )) w10_secs=$(( quick ? 2 : 3 )) w10_cap_secs=$(( quick ? 2 : 4 ))
# The client settings of workload 4: linger 1 ms and Nagle off, as a
# latency-minded application sets them; the capacity run uses them too.
w10_client=(--acks all --linger-ms 1 --rdkafka socket.nagle.disable=true)

# w10_target TARGET TOPIC: against the cluster now up ($bootstrap), the
# direct producer's capacity (closed loop), then the paired open-loop runs
# at 10 % and 50 % of it.
w10_target() {
  local target=$1 topic=$2 cap pct rate pair c n cases=(direct proxy_linger5 proxy_linger0)
  # With --baseline, the older binary's two proxies join every round too
  # (before and after in the same rounds, on the same cluster).
  [ -n "$baseline" ] && cases+=(before_linger5 before_linger0)
  local -A addr pid metrics
  for c in "${cases[@]:1}"; do
    local proxy_binary=""
    [ "${c%%_*}" = before ] && proxy_binary=$baseline
    start_proxy --set producer.linger_ms="${c##*_linger}"
    addr[$c]=$proxy_addr pid[$c]=$proxy_pid metrics[$c]=$metrics_addr
  done
  # Warm-up, not counted: a broker JVM just started is still compiling, and
  # each proxy opens its upstream connections on its first client.
  for c in "${cases[@]}"; do
    local to=${addr[$c]:-$bootstrap}
    run workload=10 target="$target" case=warmup via="$c" -- rdk --bootstrap "$to" --topic "$topic" \
      "${w10_client[@]}" --count 5000000 --duration-s $w10_cap_secs
  done
  run workload=10 target="$target" case=capacity -- rdk --bootstrap "$bootstrap" --topic "$topic" \
    --idempotence 1 "${w10_client[@]}" --count 5000000 --duration-s $w10_cap_secs
  if cap=$("$python" "$issue17" rate "$results" workload=10 target="$target" case=capacity); then
    for pct in 10 50; do
      rate=$(awk -v m="$cap" -v p=$pct 'BEGIN {printf "%d", m * p / 100}')
      log "w10 $target: $w10_pairs rounds at $rate records/s ($pct % of the direct producer's $cap)"
      for pair in $(seq "$w10_pairs"); do
        n=$(( (pair - 1) % ${#cases[@]} ))
        for c in "${cases[@]:$n}" "${cases[@]:0:$n}"; do
          local open=("$bin_open" --topic "$topic" "${w10_client[@]}" --rate "$rate" --duration-s $w10_secs
                      --warmup-s 0.5 --flush-timeout-ms 10000)
          if [ "$c" = direct ]; then
            run workload=10 target="$target" case=direct load_pct=$pct pair="$pair" -- \
              "${open[@]}" --bootstrap "$bootstrap" --idempotence 1
            continue
          fi
          proxy_pid=${pid[$c]} metrics_addr=${metrics[$c]}
          proxy_run workload=10 target="$target" case="$c" load_pct=$pct pair="$pair" \
            proxy_linger_ms="${c##*_linger}" -- "${open[@]}" --bootstrap "${addr[$c]}"
        done
      done
    done
  else
    log "w10 $target: no capacity measured, the paired runs are skipped"
  fi
  for c in "${cases[@]:1}"; do proxy_pid=${pid[$c]}; stop_proxy; done
}

workload10() {  # added latency, paired rounds, test cluster and real Kafka 4.4.0
  log "w10: test cluster"
  start_cluster --brokers 3 --topic w10:16
  w10_target test_cluster w10
  stop_cluster
  if ! command -v java >/dev/null; then log "w10: real Kafka skipped, java is needed (scripts/setup.sh)"; return 0; fi
  start_kafka --topic w10:16 || return 0
  w10_target kafka w10
  stop_cluster
}

# Workload 11: the proxy's own ceiling with 100 B records, lz4 off. Several
# closed-loop clients at once (PP_W11_CLIENTS, default 3), so the proxy, not
# one client, is the limit; "pinned" gives the proxy core 0 to itself
# (clients and cluster on core 1, taskset), "shared" lets the scheduler
# place everything.
w11_clients=${PP_W11_CLIENTS:-3} w11_reps=$(( quick ? 1 : 2 ))

# w11_load BOOTSTRAP CPUS: w11_clients producers at once (on CPUS when
# given), then one JSON line summing them (bench_issue17.py merge).
w11_load() {
  local i prefix=() bg=()
  [ -n "$2" ] && prefix=(taskset -c "$2")
  for i in $(seq "$w11_clients"); do
    "${prefix[@]}" "$bin_rdk" --bootstrap "$1" --topic w11 --acks all --record-bytes 100 \
      --count 50000000 --duration-s $secs --flush-timeout-ms 10000 > "$work/w11.$i.json" &
    bg+=($!)
  done
  wait "${bg[@]}" || true
  "$python" "$issue17" merge "$work"/w11.*.json
}

workload11() {  # records/s per proxy CPU-second, 100 B records
  local rep layout layouts=(shared pinned direct)
  log "w11: $w11_clients clients of 100 B records, shared and pinned, $w11_reps repetitions"
  start_cluster --brokers 3 --topic w11:16
  start_pair --set producer.compression=none
  # With --baseline, the older binary takes the same load in the shared
  # layout, on the same cluster, between the others.
  [ -n "$baseline" ] && layouts=(shared before pinned direct)
  for rep in $(seq "$w11_reps"); do
    for layout in "${layouts[@]}"; do
      rm -f "$work"/w11.*.json
      use_proxy after
      if [ "$layout" = pinned ]; then
        taskset -a -pc 0 "$proxy_pid" >/dev/null; taskset -a -pc 1 "$cluster_pid" >/dev/null
        proxy_run workload=11 case=pinned rep="$rep" clients="$w11_clients" record_bytes=100 -- w11_load "$after_addr" 1
      else
        taskset -a -pc 0,1 "$proxy_pid" >/dev/null; taskset -a -pc 0,1 "$cluster_pid" >/dev/null
        if [ "$layout" = shared ]; then
          proxy_run workload=11 case=shared rep="$rep" clients="$w11_clients" record_bytes=100 -- w11_load "$after_addr" ""
        elif [ "$layout" = before ]; then
          use_proxy before
          proxy_run workload=11 case=before rep="$rep" clients="$w11_clients" record_bytes=100 -- \
            w11_load "$before_addr" ""
        else
          # The same clients straight to the cluster (not idempotent, as
          # behind the proxy): what the cluster and clients alone reach.
          run workload=11 case=direct rep="$rep" clients="$w11_clients" record_bytes=100 -- w11_load "$bootstrap" ""
        fi
      fi
    done
  done
  stop_pair; stop_cluster
}

# ---- workload 9: TLS upstream against real Apache Kafka 4.4.0 (issue 15) ----

# workload 7's broker with an SSL listener as well (certificates made per
# start by tests/kafka/test_pki.py); the PLAINTEXT listener stays for topic
# creation. Per repetition, order rotated: librdkafka idempotent over TLS,
# a legacy client (Produce v1) through the proxy with [upstream.tls], and
# librdkafka idempotent over plaintext, which prices TLS itself. Client to
# proxy is plaintext on loopback: the proxy has no TLS listener.
workload9() {
  local rep cases c n ssl_bootstrap ca plain_bootstrap
  if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
    log "w9: skipped, java and mvn are needed (scripts/setup.sh)"; return 0
  fi
  for rep in $(seq "$reps"); do
    cases=(direct_tls proxy_legacy_tls direct_plain)
    n=$(( (rep - 1) % 3 ))
    cases=("${cases[@]:$n}" "${cases[@]:0:$n}")
    log "w9 rep $rep: ${cases[*]}"
    start_kafka --topic w9:16 --ssl "$work/w9-pki.$rep" || return 0
    ssl_bootstrap=$(sed -n 's/^ssl_bootstrap=//p' "$work/kafka.out" | head -1)
    ca=$(sed -n 's/^ca_file=//p' "$work/kafka.out" | head -1)
    plain_bootstrap=$bootstrap bootstrap=$ssl_bootstrap
    start_proxy --set upstream.tls.enabled=true --set "upstream.tls.ca_file=\"$ca\""
    # Not recorded: the broker JVM compiles its produce and TLS paths during
    # the first seconds of load, which would handicap whichever case ran first.
    rdk --bootstrap "$plain_bootstrap" --topic w9 --acks all --count 100000 --duration-s 3 > /dev/null 2>&1 || true
    rdk --bootstrap "$ssl_bootstrap" --topic w9 --acks all --count 100000 --duration-s 3 \
      --rdkafka "security.protocol=ssl,ssl.ca.location=$ca" > /dev/null 2>&1 || true
    for c in "${cases[@]}"; do
      case $c in
        direct_tls) w7_case run workload=9 case=direct_tls rep="$rep" -- \
          rdk --bootstrap "$ssl_bootstrap" --topic w9 --acks all --idempotence 1 --count $w7_count \
            --rdkafka "security.protocol=ssl,ssl.ca.location=$ca" ;;
        proxy_legacy_tls) w7_case proxy_run workload=9 case=proxy_legacy_tls rep="$rep" -- \
          rdk --bootstrap "$proxy_addr" --topic w9 --acks all --legacy 1 --count $w7_count ;;
        direct_plain) w7_case run workload=9 case=direct_plain rep="$rep" -- \
          rdk --bootstrap "$plain_bootstrap" --topic w9 --acks all --idempotence 1 --count $w7_count ;;
      esac
    done
    stop_proxy; stop_cluster
  done
}

# ---- spool: ack = "spool" against ack = "upstream" ----------------------------

# `--only spool`: tests/bench/spool_bench.py, on its own (it starts its own
# test cluster and three proxies: upstream, spool with fsync group, spool with
# fsync always), then exits without rendering: it prints the Markdown table of
# docs/BENCHMARKS.md, "Spool", itself. --quick: 1 repetition of 3 s.
if [ "$only" = spool ]; then
  spool_args=(--build "$build" --reps "$reps" --secs "$secs" --json "$work/spool.json")
  "$python" "$root/tests/bench/spool_bench.py" "${spool_args[@]}"
  exit 0
fi

# ---- spool: draining after an outage, RSS while the spool holds it -----------

# `--only spool_drain`: tests/bench/spool_drain_bench.py, on its own (its own
# Kafka 4.4.0 broker, or the test cluster without java, and one proxy with
# ack = "spool"): the records/s from the upstream's return until the spool is
# empty, against a direct idempotent producer before and after in the same
# run, and the proxy's RSS sampled every second meanwhile. The issue's form,
# a 10-minute outage at 2,000 records/s of 1 KiB (about 1.2 GB spooled), takes
# about 25 minutes here; --quick: a 60 s outage. It prints the tables of
# docs/BENCHMARKS.md, "Spool: draining after an outage", itself.
if [ "$only" = spool_drain ]; then
  drain_args=(--build "$build" --json "$work/spool_drain.json")
  [ "$quick" -eq 1 ] || drain_args+=(--full)
  command -v java >/dev/null || { log "spool_drain: no java, the test cluster stands in for Kafka"; drain_args+=(--target test_cluster); }
  "$python" "$root/tests/bench/spool_drain_bench.py" "${drain_args[@]}" || true
  exit 0
fi

# ---- client TLS: a TLS listener against a plaintext one ----------------------

# `--only client_tls`: tests/bench/client_tls_bench.py, on its own (its own
# test cluster, a plaintext proxy and one whose listener is TLS with client
# certificates, the legacy load client against each in turns, then openssl
# s_time's handshakes per second); it prints one JSON line per measurement
# and the summary (ratio TLS / plaintext) for docs/BENCHMARKS.md, "Client TLS
# on the listener". Reports only: a ratio under its goal is not a failure.
if [ "$only" = client_tls ]; then
  "$python" "$root/tests/bench/client_tls_bench.py" --proxy "$bin_proxy" --cluster "$build/tests/broker/test-cluster" \
    --load "$build/tests/bench/bench_rdkafka_producer" --reps "$reps" --seconds "$secs" || true
  exit 0
fi

# ---- run -------------------------------------------------------------------

started=$(date -u '+%Y-%m-%d %H:%M UTC')
load_start=$(uptime)
t0=$(date +%s)
for w in $only; do "workload$w"; done
elapsed=$(( $(date +%s) - t0 ))
"$python" "$report" render "$results" --out "$root/docs/bench" --doc "$root/docs/BENCHMARKS.md" \
  --started "$started" --elapsed "$elapsed" --load-start "$load_start" --load-end "$(uptime)" \
  --command "scripts/bench.sh${args:+ $args}" --commit "$(git -C "$root" rev-parse --short HEAD)" \
  --settings "record_bytes=$record_bytes secs=$secs w2_secs=$w2_secs count=$count reps=$reps w2_batch=$w2_batch w3_reps=$w3_reps w3_secs=$w3_secs w8_pairs=$w8_pairs${baseline:+ baseline=$baseline}$(
    case " $only " in *" 7 "*|*" 9 "*) echo " w7_count=$w7_count w7_java_count=$w7_java_count w7_broker_heap=$w7_heap" ;; esac)$(
    case " $only " in *" 10 "*|*" 11 "*) echo " w10_pairs=$w10_pairs w10_secs=$w10_secs w11_clients=$w11_clients w11_reps=$w11_reps" ;; esac)"
log "done in ${elapsed}s; results in docs/bench/results.json and docs/BENCHMARKS.md"
