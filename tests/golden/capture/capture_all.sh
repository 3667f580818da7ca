#!/usr/bin/env bash
# Re-captures every golden vector in tests/golden/ from scratch:
#   1. builds and starts a one-broker librdkafka mock cluster on 127.0.0.1,
#   2. records loopback traffic on its port with tshark,
#   3. runs each real client case in cases.py (kcat, kafka-python,
#      confluent-kafka), one at a time, each under `timeout`,
#   4. stops the capture and the mock, splits the TCP streams into Kafka
#      frames (split_frames.py) and checks the result (check_golden.py).
#
# Needs root (or capture rights) and `scripts/setup.sh --capture-tools`.
# Everything talks to 127.0.0.1 only. The pcap and the mock binary live in a
# temporary directory that is removed at the end (pass --keep to keep it).
#
# Usage: tests/golden/capture/capture_all.sh [--keep] [case ...]
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
GOLDEN="${GOLDEN_OUT:-$(dirname "$HERE")}"  # GOLDEN_OUT: write elsewhere (trial runs)
PY=/usr/bin/python3   # Debian's python has the kafka modules

keep=0
cases=()
for arg in "$@"; do
  case "$arg" in
    --keep) keep=1 ;;
    *) cases+=("$arg") ;;
  esac
done

for tool in tshark cc kcat timeout "$PY"; do
  command -v "$tool" >/dev/null || {
    echo "capture: $tool missing; run scripts/setup.sh --capture-tools" >&2; exit 1; }
done

work="$(mktemp -d /tmp/golden-capture.XXXXXX)"
mock_pid=""
tshark_pid=""
cleanup() {
  # Stop only what this script started, by pid.
  [ -n "$tshark_pid" ] && kill -INT "$tshark_pid" 2>/dev/null || true
  exec 3>&- 2>/dev/null || true
  [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  if [ "$keep" -eq 1 ]; then
    echo "capture: kept $work" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

cc -O1 -Wall -o "$work/mock_cluster" "$HERE/mock_cluster.c" -lrdkafka

# The mock serves until its stdin closes; fd 3 holds the pipe open.
mkfifo "$work/mock.ctl"
timeout 900 "$work/mock_cluster" golden 2 <"$work/mock.ctl" >"$work/bootstrap" \
  2>"$work/mock.log" &
mock_pid=$!
exec 3>"$work/mock.ctl"
for _ in $(seq 100); do
  [ -s "$work/bootstrap" ] && break
  sleep 0.1
done
bootstrap="$(head -n1 "$work/bootstrap")"
case "$bootstrap" in
  127.0.0.1:*) ;;
  *) echo "capture: mock cluster did not start: $(cat "$work/mock.log")" >&2; exit 1 ;;
esac
port="${bootstrap##*:}"
echo "capture: mock cluster on $bootstrap" >&2

timeout 900 tshark -i lo -f "tcp port $port" -w "$work/capture.pcap" -q \
  2>"$work/tshark.log" &
tshark_pid=$!
for _ in $(seq 100); do
  grep -q "Capture started\|Capturing on" "$work/tshark.log" 2>/dev/null && break
  sleep 0.1
done
sleep 1   # dumpcap may report before its filter is live

"$PY" "$HERE/cases.py" "$bootstrap" "$work/runs.jsonl" "${cases[@]}"

sleep 1
kill -INT "$tshark_pid"
wait "$tshark_pid" || true
tshark_pid=""
exec 3>&-
wait "$mock_pid" || true
mock_pid=""

cd "$HERE"
"$PY" "$HERE/split_frames.py" "$work/capture.pcap" "$port" "$work/runs.jsonl" "$GOLDEN"
"$PY" "$HERE/check_golden.py" "$GOLDEN"
