#!/usr/bin/env bash
# The chart ships the dashboard and the alert rules as they are in
# helm/produce-proxy/files/: `helm template` renders the ConfigMap for
# Grafana's sidecar (dashboard.enabled) and the PrometheusRule
# (prometheusRule.enabled, only where the cluster serves the CRD), their
# content equals the plain files, and config.producer.buffer_memory_bytes
# reaches the one place each depends on it. Assertions: chart_assert.py.
#
# usage: chart_test.sh CHART_DIR [TOOLS_DIR]
# helm is looked for as tests/ops/helm_test.sh does ($HELM,
# /opt/produce-proxy-tools/helm, PATH, TOOLS_DIR/helm, else
# scripts/install_helm.sh into TOOLS_DIR/helm). Exit 77 (ctest SKIP) only
# when helm cannot be installed at all.
set -euo pipefail

chart=${1:?usage: chart_test.sh CHART_DIR [TOOLS_DIR]}
tools=${2:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)

helm=""
for candidate in "${HELM:-}" /opt/produce-proxy-tools/helm/helm "$(command -v helm || true)" "$tools/helm/helm"; do
  if [ -n "$candidate" ] && [ -x "$candidate" ]; then helm=$candidate; break; fi
done
if [ -z "$helm" ]; then
  echo "helm not found; installing it into $tools/helm"
  if ! helm=$("$repo/scripts/install_helm.sh" "$tools/helm"); then
    echo "SKIP: helm is not installed and could not be installed (see above)"
    exit 77
  fi
fi
python=/usr/bin/python3
[ -x "$python" ] || python=python3
echo "using $("$helm" version --short) at $helm"
exec "$python" "$here/chart_assert.py" "$helm" "$chart"
