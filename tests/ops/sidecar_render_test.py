#!/usr/bin/python3
"""The sidecar in a workload the user already has: the pod a parent chart or
a kustomization renders carries the same produce-proxy sidecar as the pod
the produce-proxy chart renders itself.

usage: sidecar_render_test.py chart|kustomize --repo DIR [--proxy BINARY] [--tools DIR]

chart: helm/examples/parent-chart, with helm/produce-proxy as its dependency
  (`helm dependency update` in a copy), is rendered for several sets of
  produce-proxy values (the example's own; container mode; TLS and SASL
  Secrets; changed image, ports, probes, resources, arguments); each time its
  pod's produce-proxy container (image, args, ports, probes, resources,
  securityContext, volume mounts; init or plain container), its volumes, pod
  annotations, terminationGracePeriodSeconds, the app's
  KAFKA_BOOTSTRAP_SERVERS and the ConfigMap's produce-proxy.toml must equal
  what `helm template` of the chart itself renders for the same values, and
  the dependency must render no Deployment of its own. The dependency's
  whole context (.Subcharts.produceProxy) must render as the example's dict.
kustomize: helm/kustomize/produce-proxy-sidecar (a Component), applied to a
  plain Deployment, and the example helm/examples/kustomize: the labelled
  Deployment's sidecar must equal the chart's own for the same config (the
  ConfigMap's name aside: kustomize's carries a hash of the content, which is
  what rolls the pods), the config must parse to the chart's, and an
  unlabelled Deployment must stay untouched.
Both: every rendered config passes `produce-proxy --check-config` when the
binary is given.

helm: $HELM, /opt/produce-proxy-tools/helm/helm, PATH, TOOLS/helm/helm, else
scripts/install_helm.sh TOOLS/helm. kustomize: $KUSTOMIZE, PATH, else
scripts/install_kustomize.sh (into ${PP_CACHE_DIR:-~/.cache/produce-proxy}/tools),
else `kubectl kustomize`. Exit 77 (skipped) when a tool cannot be had.
"""
import argparse
import copy
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import tomllib

import yaml

SKIP = 77
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}")
    return ok


def run(cmd, timeout=120):
    """cmd's result; on timeout its whole process group is killed (an
    install's compilers too) and the result says so with returncode -1."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return subprocess.CompletedProcess(cmd, -1, out, err + f"\ntimed out after {timeout} s")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def works(cmd):
    try:
        return run(cmd, timeout=30).returncode == 0
    except OSError:
        return False


def find_helm(repo, tools):
    for c in (os.environ.get("HELM"), "/opt/produce-proxy-tools/helm/helm", shutil.which("helm"),
              os.path.join(tools, "helm", "helm")):
        if c and os.access(c, os.X_OK) and works([c, "version", "--short"]):
            return c
    got = run([os.path.join(repo, "scripts", "install_helm.sh"), os.path.join(tools, "helm")], timeout=300)
    if got.returncode == 0:
        return got.stdout.strip().splitlines()[-1]
    print(f"SKIP: helm is not installed and could not be installed:\n{got.stderr}")
    sys.exit(SKIP)


def find_kustomize(repo):
    """The kustomize command as a list: [kustomize, "build"] or [kubectl, "kustomize"]."""
    for c in (os.environ.get("KUSTOMIZE"), shutil.which("kustomize")):
        if c and os.access(c, os.X_OK) and works([c, "version"]):
            return [c, "build"]
    # A first build from source takes minutes on a busy machine.
    got = run([os.path.join(repo, "scripts", "install_kustomize.sh")], timeout=480)
    if got.returncode == 0:
        return [got.stdout.strip().splitlines()[-1], "build"]
    kubectl = shutil.which("kubectl")
    if kubectl and works([kubectl, "kustomize", "--help"]):
        print(f"note: kustomize could not be installed ({got.stderr.strip()[-300:]}); using kubectl kustomize")
        return [kubectl, "kustomize"]
    print(f"SKIP: no kustomize, it could not be installed, and no kubectl:\n{got.stderr}")
    sys.exit(SKIP)


def docs_of(text):
    return [d for d in yaml.safe_load_all(text) if d]


def sidecar_view(docs, deployment=None):
    """What the sidecar puts into one Deployment's pod, and its config.

    deployment: the Deployment's name, or None for the only one that has a
    produce-proxy container."""
    deps = [d for d in docs if d["kind"] == "Deployment"]
    if deployment is not None:
        deps = [d for d in deps if d["metadata"]["name"] == deployment]
    else:
        deps = [d for d in deps
                if any(c["name"] == "produce-proxy"
                       for c in d["spec"]["template"]["spec"].get("initContainers", [])
                       + d["spec"]["template"]["spec"].get("containers", []))]
    if not check(len(deps) == 1, f"one Deployment with the sidecar, found {len(deps)}"):
        return None
    pod = deps[0]["spec"]["template"]
    spec = pod["spec"]
    placed = {where: [c for c in spec.get(where) or [] if c["name"] == "produce-proxy"]
              for where in ("initContainers", "containers")}
    check(sum(len(v) for v in placed.values()) == 1, f"one produce-proxy container: {placed}")
    where = "initContainers" if placed["initContainers"] else "containers"
    container = (placed[where] or [None])[0]
    apps = [c for c in spec.get("containers", []) if c["name"] != "produce-proxy"]
    volumes = [v for v in spec.get("volumes", []) if v["name"].startswith("produce-proxy")]
    config_volume = next((v for v in volumes if v["name"] == "produce-proxy-config"), {})
    cm_name = config_volume.get("configMap", {}).get("name")
    cms = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == cm_name]
    check(len(cms) == 1, f"the config volume names a rendered ConfigMap ({cm_name})")
    annotations = pod["metadata"].get("annotations") or {}
    env = {e["name"]: e.get("value") for a in apps for e in a.get("env", [])}
    return {
        "where": where,
        "container": container,
        "volumes": volumes,
        "configmap_name": cm_name,
        "config_text": cms[0]["data"]["produce-proxy.toml"] if cms else "",
        "annotations": {k: v for k, v in annotations.items()
                        if k.startswith("prometheus.io/") or k == "checksum/config"},
        "grace": spec.get("terminationGracePeriodSeconds"),
        "bootstrap_env": env.get("KAFKA_BOOTSTRAP_SERVERS"),
        "app_images": [a["image"] for a in apps],
    }


def compare(label, got, want, keys):
    for key in keys:
        a, b = got[key], want[key]
        if check(a == b, f"{label}: {key} differs from the chart's own pod"):
            continue
        if isinstance(a, dict) and isinstance(b, dict):  # only what differs
            a, b = ({k: d.get(k) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)} for d in (a, b))
        print(f"  got:  {json.dumps(a, sort_keys=True)}\n  want: {json.dumps(b, sort_keys=True)}")


def check_config(proxy, label, text, tmp):
    if not proxy:
        return
    path = os.path.join(tmp, re.sub(r"[^A-Za-z0-9_.-]", "_", label) + ".toml")
    with open(path, "w") as f:
        f.write(text)
    got = run([proxy, "--check-config", "--config", path])
    check(got.returncode == 0, f"{label}: produce-proxy --check-config: {got.stderr.strip()}")


def helm_template(helm, chart, values, tmp, name):
    # helm -f splits its argument on commas.
    path = os.path.join(tmp, re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".values.json")
    with open(path, "w") as f:
        json.dump(values, f)
    got = run([helm, "template", "t", chart, "-f", path])
    if not check(got.returncode == 0, f"helm template {chart} ({name}): {got.stderr.strip()}"):
        return []
    return docs_of(got.stdout)


# produce-proxy values beside the example parent chart's own (values.yaml
# under produceProxy:), each rendered both ways. Secret files do not exist
# here, so those configs skip --check-config.
VARIANTS = {
    "example's values": ({}, True),
    "container mode": ({"sidecar": {"mode": "container", "preStopSleepSeconds": 7}}, True),
    "TLS and SASL Secrets": ({
        "tls": {"secretName": "kafka-tls"},
        "saslSecret": {"name": "kafka-sasl"},
        "config": {"upstream": {
            "tls": {"enabled": True, "ca_file": "/etc/produce-proxy-tls/ca.crt"},
            "sasl": {"mechanism": "SCRAM-SHA-512", "username": "proxy",
                     "password_file": "/etc/produce-proxy/sasl/password"}}},
    }, False),
    "image, port, probes, resources, args": ({
        "sidecar": {"image": {"tag": "9.9.9", "pullPolicy": "Always"}, "extraArgs": ["--log-level", "debug"],
                    "livenessProbe": {"periodSeconds": 3}, "resources": {"limits": {"memory": "1Gi"}}},
        "metrics": {"annotations": False},
        "config": {"metrics": {"address": "0.0.0.0:9555"}, "shutdown": {"drain_timeout_ms": 90000},
                   "producer": {"linger_ms": 20}},
    }, True),
}


def merge(base, over):
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def test_chart(args, helm, tmp):
    example = os.path.join(args.repo, "helm", "examples", "parent-chart")
    chart = os.path.join(args.repo, "helm", "produce-proxy")
    parent = os.path.join(tmp, "parent-chart")
    shutil.copytree(example, parent, ignore=shutil.ignore_patterns("charts", "Chart.lock"))
    # The copy lives elsewhere: point its file:// dependency at this tree's chart.
    with open(os.path.join(parent, "Chart.yaml")) as f:
        meta = yaml.safe_load(f)
    deps = [d for d in meta["dependencies"] if d["name"] == "produce-proxy"]
    check(len(deps) == 1 and deps[0]["repository"] == "file://../../produce-proxy",
          "the example depends on helm/produce-proxy by a file:// path")
    alias = deps[0].get("alias", "produce-proxy")
    deps[0]["repository"] = "file://" + chart
    with open(os.path.join(parent, "Chart.yaml"), "w") as f:
        yaml.safe_dump(meta, f)
    got = run([helm, "dependency", "update", "--skip-refresh", parent])
    if not check(got.returncode == 0, f"helm dependency update: {got.stderr.strip()}"):
        return
    got = run([helm, "lint", "--strict", parent])
    check(got.returncode == 0, f"helm lint --strict of the parent chart:\n{got.stdout}{got.stderr}")
    with open(os.path.join(example, "values.yaml")) as f:
        example_values = yaml.safe_load(f)[alias]

    for label, (values, checkable) in VARIANTS.items():
        print(f"--- parent chart vs the chart's own pod: {label}")
        parent_docs = helm_template(helm, parent, {alias: values}, tmp, "parent-" + label)
        own_values = merge({k: v for k, v in example_values.items() if k != "deployment"}, values)
        own_docs = helm_template(helm, chart, own_values, tmp, "own-" + label)
        if not parent_docs or not own_docs:
            continue
        kinds = sorted(d["kind"] for d in parent_docs)
        check(kinds == ["ConfigMap", "Deployment"],
              f"{label}: the parent renders its Deployment and the sidecar's ConfigMap only, not {kinds}")
        got, want = sidecar_view(parent_docs), sidecar_view(own_docs)
        if got is None or want is None:
            continue
        compare(label, got, want, ["where", "container", "volumes", "configmap_name", "config_text",
                                   "annotations", "grace", "bootstrap_env"])
        check(got["app_images"] == ["example/app:1"], f"{label}: the parent's app container {got['app_images']}")
        if checkable:
            check_config(args.proxy, "parent " + label, got["config_text"], tmp)

    # The other documented context: the dependency's whole scope.
    print("--- the parent chart with .Subcharts.produceProxy as the context")
    template = os.path.join(parent, "templates", "deployment.yaml")
    with open(template) as f:
        text = f.read()
    dict_form = next((line for line in text.splitlines() if line.startswith("{{- $proxy := dict ")), None)
    if check(dict_form, "the example builds its context with dict"):
        before = helm_template(helm, parent, {}, tmp, "parent-dict")
        with open(template, "w") as f:
            f.write(text.replace(dict_form, "{{- $proxy := .Subcharts.%s }}" % alias))
        after = helm_template(helm, parent, {}, tmp, "parent-subcharts")
        check(before and before == after, "the .Subcharts context renders what the dict context renders")


def test_kustomize(args, helm, kustomize, tmp):
    chart = os.path.join(args.repo, "helm", "produce-proxy")
    component = os.path.join(args.repo, "helm", "kustomize", "produce-proxy-sidecar")
    example = os.path.join(args.repo, "helm", "examples", "kustomize")
    # The component alone, on a Deployment written here, against the chart's defaults.
    plain = os.path.join(tmp, "plain")
    os.makedirs(plain)
    with open(os.path.join(plain, "deployment.yaml"), "w") as f:
        yaml.safe_dump({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "app", "labels": {"produce-proxy.io/sidecar": "true"}},
            "spec": {"selector": {"matchLabels": {"app": "app"}}, "template": {
                "metadata": {"labels": {"app": "app"}},
                "spec": {"containers": [{"name": "app", "image": "example/app:1", "env": [
                    {"name": "KAFKA_BOOTSTRAP_SERVERS", "value": "127.0.0.1:9092"}]}]}}}}, f)
    with open(os.path.join(plain, "kustomization.yaml"), "w") as f:
        yaml.safe_dump({"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
                        "resources": ["deployment.yaml"],
                        "components": [os.path.relpath(component, plain)]}, f)
    with open(os.path.join(example, "config", "produce-proxy.toml"), "rb") as f:
        example_bootstrap = tomllib.load(f)["upstream"]["bootstrap_servers"]
    cases = [
        ("component on a plain Deployment", plain, {}, None),
        ("helm/examples/kustomize", example, {"config": {"upstream": {"bootstrap_servers": example_bootstrap}}},
         "orders"),
    ]
    for label, directory, values, deployment in cases:
        print(f"--- kustomize vs the chart's own pod: {label}")
        got = run([*kustomize, directory])
        if not check(got.returncode == 0, f"{label}: {' '.join(kustomize)}: {got.stderr.strip()}"):
            continue
        docs = docs_of(got.stdout)
        own = sidecar_view(helm_template(helm, chart, values, tmp, "own-" + label.replace("/", "_")))
        view = sidecar_view(docs, deployment)
        if own is None or view is None:
            continue
        compare(label, view, own, ["where", "container", "grace", "bootstrap_env"])
        # The ConfigMap's name: the chart's is the release's, kustomize's has
        # a hash of the content; the volume must name the one rendered.
        strip = lambda vols: [{**v, "configMap": {**v["configMap"], "name": "THE CONFIGMAP"}} if "configMap" in v
                              else v for v in vols]
        view["volumes"], own["volumes"] = strip(view["volumes"]), strip(own["volumes"])
        compare(label, view, own, ["volumes"])
        check(view["configmap_name"].startswith("produce-proxy-") and view["configmap_name"] != "produce-proxy",
              f"{label}: the ConfigMap's name {view['configmap_name']} carries a content hash (a change rolls pods)")
        want_annotations = {k: v for k, v in own["annotations"].items() if k != "checksum/config"}
        check(view["annotations"] == want_annotations,
              f"{label}: annotations {view['annotations']}, the chart's {want_annotations}")
        try:
            same = tomllib.loads(view["config_text"]) == tomllib.loads(own["config_text"])
        except tomllib.TOMLDecodeError as e:
            same = False
            print(f"  {e}")
        if not check(same, f"{label}: the config differs from the chart's config.* rendering"):
            print(f"  kustomize:\n{view['config_text']}\n  chart:\n{own['config_text']}")
        check_config(args.proxy, "kustomize " + label, view["config_text"], tmp)
        if deployment:
            other = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] != deployment]
            untouched = all("produce-proxy" not in json.dumps(d) for d in other)
            check(other and untouched, f"{label}: an unlabelled Deployment gets no sidecar")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("part", choices=["chart", "kustomize"])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--proxy", default="")
    parser.add_argument("--tools", default=tempfile.gettempdir())
    args = parser.parse_args()
    helm = find_helm(args.repo, args.tools)
    print(f"using {helm}")
    if args.proxy and not os.access(args.proxy, os.X_OK):
        check(False, f"--proxy {args.proxy} is not an executable")
    with tempfile.TemporaryDirectory() as tmp:
        if args.part == "chart":
            test_chart(args, helm, tmp)
        else:
            kustomize = find_kustomize(args.repo)
            print(f"using {' '.join(kustomize)}")
            test_kustomize(args, helm, kustomize, tmp)
    print(f"sidecar {args.part}: {'ok' if not failures else f'{len(failures)} FAILED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
