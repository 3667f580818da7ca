#!/usr/bin/env bash
# `cmake --install` puts the binary, the unit and a default config in the
# usual places, the unit's ExecStart names the installed binary, the default
# config passes --check-config, and a re-install keeps an edited config.
#
# usage: install_test.sh BUILD_DIR
set -euo pipefail

build=${1:?usage: install_test.sh BUILD_DIR}
dest=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$dest" "$log"' EXIT
fail=0
install_to() { DESTDIR="$dest" cmake --install "$build" --prefix /usr >"$log" 2>&1 || { cat "$log"; exit 1; }; }

install_to
for f in usr/bin/produce-proxy etc/systemd/system/produce-proxy.service \
    etc/produce-proxy/produce-proxy.toml usr/share/doc/produce-proxy/produce-proxy.example.toml; do
  [ -f "$dest/$f" ] && echo "ok: /$f" || { echo "FAIL: /$f not installed"; fail=1; }
done
grep -q '^ExecStart=/usr/bin/produce-proxy ' "$dest/etc/systemd/system/produce-proxy.service" ||
  { echo "FAIL: ExecStart does not name /usr/bin/produce-proxy"; fail=1; }
if "$dest/usr/bin/produce-proxy" --help 2>&1 | grep -q -- --check-config; then
  "$dest/usr/bin/produce-proxy" --check-config --config "$dest/etc/produce-proxy/produce-proxy.toml" ||
    { echo "FAIL: the installed config does not pass --check-config"; fail=1; }
fi

echo '# edited by the operator' >>"$dest/etc/produce-proxy/produce-proxy.toml"
install_to
tail -1 "$dest/etc/produce-proxy/produce-proxy.toml" | grep -q 'edited by the operator' &&
  echo "ok: a re-install keeps the edited config" ||
  { echo "FAIL: a re-install overwrote the edited config"; fail=1; }
exit $fail
