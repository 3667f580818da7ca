#!/usr/bin/env bash
# The systemd unit passes `systemd-analyze verify` and rates an exposure of at
# most 2.0 in `systemd-analyze security --offline=yes`; prints the score. The
# example drop-ins beside it (produce-proxy.service.d/*.conf.example) load
# without a warning, hand over the users file and the TLS key as
# LoadCredential=, and the config they document names exactly those
# credentials; with EXECUTABLE, that config passes --check-config. The unit
# has the state directory the example config puts spool.dir in.
#
# usage: systemd_test.sh UNIT_FILE [EXECUTABLE]
# verify insists that ExecStart's binary exists, so a temporary copy of the
# unit points ExecStart at EXECUTABLE (the built produce-proxy) or /bin/true.
# Exit 77 (ctest SKIP) only when systemd-analyze is not installed.
set -euo pipefail

unit=${1:?usage: systemd_test.sh UNIT_FILE [EXECUTABLE]}
exe=${2:-}
max_exposure=2.0

if ! command -v systemd-analyze >/dev/null; then
  echo "SKIP: systemd-analyze is not installed (apt-get install systemd)"
  exit 77
fi
if ! systemd-analyze --help | grep -q -- '--offline'; then
  echo "SKIP: this systemd-analyze has no --offline (systemd < 250)"
  exit 77
fi
[ -x "$exe" ] || exe=/bin/true

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
copy="$tmp/produce-proxy.service"
sed -E "s|^ExecStart=[^ ]+|ExecStart=$exe|" "$unit" >"$copy"
grep -q "^ExecStart=$exe " "$copy" || { echo "FAIL: no ExecStart= line to rewrite in $unit"; exit 1; }

fail=0
# verify prints nothing and exits 0 for a clean unit; warnings count as failures.
if ! out=$(systemd-analyze verify --man=no "$copy" 2>&1) || [ -n "$out" ]; then
  echo "FAIL: systemd-analyze verify:"
  echo "$out"
  fail=1
else
  echo "ok: systemd-analyze verify is clean"
fi

report=$(systemd-analyze security --offline=yes "$copy" 2>&1) || true
score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<<"$report")
if [ -z "$score" ]; then
  echo "FAIL: no exposure level in the security report:"
  echo "$report"
  exit 1
fi
echo "systemd-analyze security exposure: $score (must be <= $max_exposure)"
# What still counts against the unit, for the record.
grep '✗' <<<"$report" | sed 's/^/  /' || true
if awk -v s="$score" -v m="$max_exposure" 'BEGIN { exit !(s > m) }'; then
  echo "FAIL: exposure $score is above $max_exposure"
  fail=1
fi
# The same bound through systemd-analyze's own check (its scale is 0-100).
if ! systemd-analyze security --offline=yes --threshold=20 "$copy" >/dev/null 2>&1; then
  echo "FAIL: systemd-analyze security --threshold=20 failed"
  fail=1
fi

# Example drop-ins, installed beside the copy as systemd would find them.
unit_name=$(basename "$unit")
[ -e "$(dirname "$unit")/$unit_name.d/node-listener.conf.example" ] ||
  { echo "FAIL: no $unit_name.d/node-listener.conf.example beside $unit"; fail=1; }
for example in "$(dirname "$unit")/$unit_name.d"/*.conf.example; do
  [ -e "$example" ] || continue
  name=$(basename "$example" .example)
  mkdir -p "$tmp/$unit_name.d"
  cp "$example" "$tmp/$unit_name.d/$name"
  # verify reports a drop-in's unknown keys and bad values only at debug level.
  log=$(SYSTEMD_LOG_LEVEL=debug systemd-analyze verify --man=no "$copy" 2>&1) || true
  if ! grep -q "DropIn Path: $tmp/$unit_name.d/$name" <<<"$log"; then
    echo "FAIL: systemd-analyze verify did not load $name"; fail=1
  elif grep "$name:[0-9]" <<<"$log"; then
    echo "FAIL: $name does not parse cleanly (above)"; fail=1
  else
    echo "ok: $name loads cleanly with the unit"
  fi
  rm "$tmp/$unit_name.d/$name"
  creds=$(sed -n 's/^LoadCredential=\([^:]*\):.*/\1/p' "$example" | sort)
  grep -qx users <<<"$creds" && grep -q '\.key$' <<<"$creds" ||
    { echo "FAIL: $name should load the users file and the TLS key as credentials: $creds"; fail=1; }
  named=$(grep -oE "/run/credentials/$unit_name/[A-Za-z0-9._-]+" "$example" | sed 's|.*/||' | sort -u)
  if [ "$named" != "$creds" ]; then
    echo "FAIL: $name: the config names credentials [$named], LoadCredential= loads [$creds]"; fail=1
  fi
  # The config it documents (the commented block from [listener] on), with
  # the credentials made here, must pass the proxy's own check.
  printf '[listener.tls]\nenabled = false\n[upstream]\nbootstrap_servers = ["k:9092"]\n' >"$tmp/probe.toml"
  if [ "$exe" = /bin/true ] || ! "$exe" --check-config --config "$tmp/probe.toml" >/dev/null 2>&1 ||
    ! command -v openssl >/dev/null; then
    echo "note: no produce-proxy that knows [listener.tls], or no openssl: $name's config not checked"
    continue
  fi
  creds_dir="$tmp/credentials"
  mkdir -p "$creds_dir"
  for c in $creds; do
    case $c in
      *.crt) openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$c" -keyout "$creds_dir/${c%.crt}.key" \
               -out "$creds_dir/$c" 2>/dev/null ;;
      users) printf 'orders-secret\n' | "$exe" users add orders-service --mechanism SCRAM-SHA-512 \
               --mechanism PLAIN --users-file "$creds_dir/users" >/dev/null ;;
    esac
  done
  { sed -n '/^#   \[listener\]$/,/^# and check it/p' "$example" | sed '$d' | sed -E 's/^#( {3})?//' |
      sed "s|/run/credentials/$unit_name/|$creds_dir/|"
    printf '\n[upstream]\nbootstrap_servers = ["k:9092"]\n'; } >"$tmp/$name.toml"
  if "$exe" --check-config --config "$tmp/$name.toml"; then
    echo "ok: the config $name documents passes --check-config"
  else
    echo "FAIL: the config $name documents:"; cat "$tmp/$name.toml"; fail=1
  fi
done

# The hardening the issue asks for is there in so many words (a score can
# hide a missing one behind others).
for directive in Type=notify WatchdogSec= Restart=on-failure TimeoutStopSec= DynamicUser=yes \
    ProtectSystem=strict ProtectHome=yes PrivateTmp=yes PrivateDevices=yes NoNewPrivileges=yes \
    'CapabilityBoundingSet=$' 'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX$' \
    'SystemCallFilter=@system-service$' MemoryDenyWriteExecute=yes LockPersonality=yes \
    ProtectKernelTunables=yes ProtectKernelModules=yes ProtectKernelLogs=yes \
    ProtectControlGroups=yes RestrictNamespaces=yes RestrictRealtime=yes ProtectClock=yes \
    ProtectHostname=yes UMask=0077; do
  grep -q "^$directive" "$unit" || { echo "FAIL: $unit lacks $directive"; fail=1; }
done
# TimeoutStopSec must leave the default drain (shutdown.drain_timeout_ms, as
# the example config documents it) room to finish before systemd's SIGKILL.
example="$(dirname "$unit")/../config/produce-proxy.example.toml"
drain_ms=$(sed -n 's/^drain_timeout_ms = \([0-9]*\).*/\1/p' "$example")
stop_s=$(sed -n 's/^TimeoutStopSec=\([0-9]*\)s$/\1/p' "$unit")
if [ -z "$drain_ms" ] || [ -z "$stop_s" ] || [ $((stop_s * 1000)) -le "$drain_ms" ]; then
  echo "FAIL: TimeoutStopSec=${stop_s:-?}s is not above the default drain_timeout_ms=${drain_ms:-?}"
  fail=1
else
  echo "ok: TimeoutStopSec=${stop_s}s > drain_timeout_ms=${drain_ms}"
fi
# The spool's place: the unit's state directory, which the example config
# names for spool.dir under systemd.
if grep -q '^StateDirectory=produce-proxy$' "$unit" && grep -q '^# dir = "/var/lib/produce-proxy/spool"' "$example"; then
  echo "ok: StateDirectory=produce-proxy, and the example config puts spool.dir in it"
else
  echo "FAIL: StateDirectory=produce-proxy in $unit and spool.dir = /var/lib/produce-proxy/spool in $example"
  fail=1
fi
exit $fail
