#!/usr/bin/env bash
# The .deb as an operator gets it: cpack packages a built release tree (the
# one the test command builds, PP_RELEASE_PROXY's), lintian finds no error or
# warning, and in a clean Debian 12 root made by mmdebstrap from Debian's
# packages, `apt-get install ./produce-proxy_*.deb` resolves its Depends from
# Debian, after which, inside the root:
#   - the installed config passes produce-proxy --check-config;
#   - `systemd-analyze verify` passes on the installed unit (it checks that
#     ExecStart's binary exists, so a unit naming another path fails);
#   - dpkg registered /etc/produce-proxy/produce-proxy.toml as a conffile;
#   - postinst created the produce-proxy system user the unit's User= names;
#   - re-installing the package keeps an edited config.
#
# usage: package_test.sh RELEASE_BUILD_DIR [DEB]
#   DEB (or $PP_PACKAGE_DEB): test that .deb instead of packaging the tree.
# The root (variant apt, plus systemd for systemd-analyze and
# systemd-sysusers) is cached as a tarball in
# ${PP_CACHE_DIR:-~/.cache/produce-proxy}/package-test, keyed by the suite,
# the package list and the mirrors (remade after 30 days), with the .debs apt
# fetched into it, so a rerun needs no network. PP_DEBIAN_MIRROR overrides
# deb.debian.org.
# Needs root (mmdebstrap's root mode, chroot). Exit 77 (ctest SKIP), saying
# why, when not root, when mmdebstrap or lintian is missing (scripts/setup.sh
# installs both), or when Debian's mirror cannot be reached for a root or
# packages not cached yet.
set -euo pipefail

build=${1:?usage: package_test.sh RELEASE_BUILD_DIR [DEB]}
deb=${2:-${PP_PACKAGE_DEB:-}}
cache=${PP_CACHE_DIR:-$HOME/.cache/produce-proxy}/package-test
mirror=${PP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm
variant=apt
include=systemd
sources="deb $mirror $suite main
deb $mirror $suite-updates main
deb ${mirror%/debian}/debian-security $suite-security main"
started=$SECONDS

# A skip after a failed check is still a failure.
skip() {
  if [ "${fail:-0}" -ne 0 ]; then echo "not checked: $*"; exit 1; fi
  echo "SKIP: $*"; exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root (mmdebstrap's root mode and chroot)"
for tool in mmdebstrap lintian cpack dpkg-deb unshare; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/setup.sh installs it)"
done

tmp=$(mktemp -d)
# The root's mounts live in a private mount namespace that ends with it; the
# guard keeps rm -rf off anything still mounted all the same.
cleanup() {
  if [ -d "$tmp/root" ] && findmnt -rn -o TARGET | grep -q "^$tmp/root"; then
    echo "cleanup: $tmp/root still has mounts; left in place" >&2
    return
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
mirror_reachable() {
  timeout 30 /usr/lib/apt/apt-helper download-file "$mirror/dists/$suite/Release" "$tmp/Release" >/dev/null 2>&1
}

# 1. The package.
if [ -z "$deb" ]; then
  [ -f "$build/CPackConfig.cmake" ] || { echo "FAIL: $build has no CPackConfig.cmake (configure it)"; exit 1; }
  [ -x "$build/daemon/produce-proxy" ] || { echo "FAIL: $build/daemon/produce-proxy is not built"; exit 1; }
  cpack --config "$build/CPackConfig.cmake" -B "$tmp/cpack" >"$tmp/cpack.log" 2>&1 ||
    { cat "$tmp/cpack.log"; echo "FAIL: cpack"; exit 1; }
  deb=$(echo "$tmp"/cpack/produce-proxy_*.deb)
fi
[ -f "$deb" ] || { echo "FAIL: no package at $deb"; exit 1; }
echo "package: $(basename "$deb") ($((SECONDS - started)) s)"
dpkg-deb -f "$deb" Depends | sed 's/^/  Depends: /'

contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
for f in ./usr/bin/produce-proxy ./usr/lib/systemd/system/produce-proxy.service \
    ./etc/produce-proxy/produce-proxy.toml ./usr/lib/sysusers.d/produce-proxy.conf \
    ./usr/share/doc/produce-proxy/copyright; do
  grep -qx -- "$f" <<<"$contents" && echo "ok: ships ${f#.}" || { echo "FAIL: ${f#.} is not in the package"; fail=1; }
done
# A local install's unit belongs in /etc/systemd/system; a package's never.
if grep -q '^\./etc/systemd/' <<<"$contents"; then
  echo "FAIL: the package ships a unit under /etc/systemd"; fail=1
fi

# 2. lintian: errors and warnings fail; info tags are shown; overrides ship
# in the package, each with its reason.
if lintian --display-info --fail-on error,warning "$deb" >"$tmp/lintian.log" 2>&1; then
  echo "ok: lintian reports no error or warning"
else
  echo "FAIL: lintian:"; fail=1
fi
grep -v 'running with root privileges' "$tmp/lintian.log" | sed 's/^/  /' || true
echo "lintian done ($((SECONDS - started)) s)"

# 3. A clean bookworm root, cached.
key=$(printf '%s\n' 1 "$suite" "$variant" "$include" "$sources" | sha256sum | cut -c1-16)
tarball="$cache/$suite-$variant-$key.tar"
mkdir -p "$cache/archives/partial"
# A month-old root is made again, so the test keeps meeting today's bookworm.
find "$cache" -maxdepth 1 -name "$suite-*.tar" -mtime +30 -delete
if [ ! -f "$tarball" ]; then
  mirror_reachable || skip "Debian's mirror $mirror cannot be reached to make a $suite root"
  echo "making the $suite root (cache miss: $tarball)"
  # The package lists stay in the root, so a rerun installs without apt-get update.
  partial="$cache/.partial-$key.tar"
  rm -f "$partial"
  if ! mmdebstrap --quiet --variant="$variant" --include="$include" --skip=cleanup/apt/lists --format=tar \
      "$suite" "$partial" - <<<"$sources" >"$tmp/mmdebstrap.log" 2>&1; then
    cat "$tmp/mmdebstrap.log"
    rm -f "$partial"
    mirror_reachable || skip "Debian's mirror $mirror stopped answering during mmdebstrap"
    echo "FAIL: mmdebstrap"; exit 1
  fi
  # Roots of an older package list or mirror are not needed any more.
  find "$cache" -maxdepth 1 -name "$suite-*.tar" ! -name "$(basename "$tarball")" -delete
  mv "$partial" "$tarball"
  echo "root made ($((SECONDS - started)) s)"
fi
mkdir "$tmp/root"
tar -C "$tmp/root" -xf "$tarball"
cp "$deb" "$tmp/root/tmp/"
cp /etc/resolv.conf "$tmp/root/etc/resolv.conf" 2>/dev/null || true

# 4. Inside the root. apt's downloads go to the cache (a bind mount).
cat >"$tmp/root/tmp/checks.sh" <<'EOF'
#!/bin/sh
set -u
deb=$1
fail=0
export DEBIAN_FRONTEND=noninteractive
apt_install() { apt-get install -y -q --no-install-recommends "$deb" </dev/null >/tmp/apt.log 2>&1; }
if ! apt_install; then
  echo "apt-get install failed from the cached lists; updating them"
  apt-get update -q >/tmp/update.log 2>&1 || { cat /tmp/update.log; exit 77; }
  apt_install || { cat /tmp/apt.log; echo "FAIL: apt-get install $deb"; exit 1; }
fi
echo "ok: apt-get install resolved the Depends from Debian:"
sed -n 's/^Setting up \([^ ]*\) .*/  \1/p' /tmp/apt.log | tr '\n' ' '; echo

conf=/etc/produce-proxy/produce-proxy.toml
if out=$(produce-proxy --check-config --config "$conf" 2>&1); then
  echo "ok: produce-proxy --check-config: $out"
else
  echo "FAIL: produce-proxy --check-config --config $conf: $out"; fail=1
fi

unit=/usr/lib/systemd/system/produce-proxy.service
if ! out=$(systemd-analyze verify --man=no "$unit" 2>&1) || [ -n "$out" ]; then
  echo "FAIL: systemd-analyze verify $unit:"; echo "$out"; fail=1
else
  echo "ok: systemd-analyze verify $unit is clean"
fi

conffiles=$(dpkg-query --showformat='${Conffiles}' -W produce-proxy)
if echo "$conffiles" | grep -q "^ $conf [0-9a-f]\{32\}$"; then
  echo "ok: $conf is a conffile"
else
  echo "FAIL: $conf is not a registered conffile: '$conffiles'"; fail=1
fi

user=$(sed -n 's/^User=//p' "$unit")
if [ "$user" != produce-proxy ]; then
  echo "FAIL: the unit's User= is '$user', not produce-proxy"; fail=1
elif entry=$(getent passwd produce-proxy); then
  uid=$(echo "$entry" | cut -d: -f3)
  shell=$(echo "$entry" | cut -d: -f7)
  if [ "$uid" -lt 1000 ] && [ "$shell" = /usr/sbin/nologin ] && getent group produce-proxy >/dev/null; then
    echo "ok: postinst created the system user: $entry"
  else
    echo "FAIL: produce-proxy is not a system user with its group and no shell: $entry"; fail=1
  fi
else
  echo "FAIL: postinst did not create the produce-proxy user"; fail=1
fi

echo '# edited by the operator' >>"$conf"
if dpkg -i "$deb" </dev/null >/tmp/dpkg.log 2>&1 && tail -1 "$conf" | grep -q 'edited by the operator'; then
  echo "ok: a re-install keeps the edited config"
else
  cat /tmp/dpkg.log; echo "FAIL: a re-install did not keep the edited config"; fail=1
fi
exit $fail
EOF
chmod +x "$tmp/root/tmp/checks.sh"
set +e
unshare --mount --pid --fork --propagation private /bin/sh -ec '
  root=$1 archives=$2 deb=$3
  mount -t proc proc "$root/proc"
  mount --bind "$archives" "$root/var/cache/apt/archives"
  exec chroot "$root" /tmp/checks.sh "/tmp/$deb"' sh "$tmp/root" "$cache/archives" "$(basename "$deb")"
rc=$?
set -e
if [ $rc -eq 77 ]; then
  mirror_reachable || skip "Debian's mirror $mirror cannot be reached for packages not cached yet"
  echo "FAIL: apt-get update failed though the mirror answers"; rc=1
fi
[ $rc -eq 0 ] || fail=1
echo "package test done in $((SECONDS - started)) s"
exit $fail
