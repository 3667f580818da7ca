#!/usr/bin/env bash
# Installs kustomize (for tests/ops/sidecar_render_test.py) into DIR, unless a
# working one is already there: `go install` from the Go module proxy, built
# with the Go toolchain on this machine (Debian 12 packages no kustomize).
#
# usage: scripts/install_kustomize.sh [DIR]
#   DIR defaults to ${PP_CACHE_DIR:-~/.cache/produce-proxy}/tools.
# Prints the kustomize path on success; exits non-zero with the reason otherwise.
set -euo pipefail

version=v5.4.3
dir=${1:-${PP_CACHE_DIR:-$HOME/.cache/produce-proxy}/tools}

if [ -x "$dir/kustomize" ] && "$dir/kustomize" version >/dev/null 2>&1; then
  echo "$dir/kustomize"
  exit 0
fi
command -v go >/dev/null || { echo "install_kustomize: go is not installed (apt-get install golang-go)" >&2; exit 1; }

mkdir -p "$dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# GOBIN into a scratch directory first, so a failed build leaves no half binary.
if ! GOBIN="$work" GOFLAGS=-mod=mod go install "sigs.k8s.io/kustomize/kustomize/v5@$version" >"$work/go.log" 2>&1; then
  cat "$work/go.log" >&2
  echo "install_kustomize: go install sigs.k8s.io/kustomize/kustomize/v5@$version failed" >&2
  exit 1
fi
install -m 0755 "$work/kustomize" "$dir/kustomize.new"
mv -f "$dir/kustomize.new" "$dir/kustomize"
"$dir/kustomize" version >/dev/null || { echo "install_kustomize: $dir/kustomize does not run" >&2; exit 1; }
echo "$dir/kustomize"
