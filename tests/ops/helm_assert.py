#!/usr/bin/python3
"""Assertions on the objects `helm template` rendered for the produce-proxy chart.

usage: helm_assert.py MODE RENDERED.yaml [TOML_OUT]
MODE is native, container or podmonitor (native plus a PodMonitor). Writes the
ConfigMap's produce-proxy.toml to TOML_OUT when given, for --check-config.
Prints one line per failed check and exits 1 if any failed.
"""
import sys
import tomllib

import yaml

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
    return ok


def main():
    mode, rendered = sys.argv[1], sys.argv[2]
    docs = [d for d in yaml.safe_load_all(open(rendered)) if d]
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    check(sorted(by_kind) == sorted(["ConfigMap", "Deployment"] + (["PodMonitor"] if mode == "podmonitor" else [])),
          f"rendered kinds {sorted(by_kind)}")

    cm = by_kind["ConfigMap"][0]
    toml_text = cm["data"]["produce-proxy.toml"]
    config = tomllib.loads(toml_text)
    if len(sys.argv) > 3:
        open(sys.argv[3], "w").write(toml_text)
    check(config["upstream"]["bootstrap_servers"], "config has upstream.bootstrap_servers")
    metrics_address = config.get("metrics", {}).get("address", "127.0.0.1:9464")
    metrics_port = int(metrics_address.rsplit(":", 1)[1])
    check(not metrics_address.startswith("127."), "metrics.address is reachable from the kubelet")
    drain_ms = config.get("shutdown", {}).get("drain_timeout_ms", 30000)

    dep = by_kind["Deployment"][0]
    pod = dep["spec"]["template"]
    spec = pod["spec"]
    init = spec.get("initContainers", [])
    containers = spec["containers"]
    proxies_init = [c for c in init if c["name"] == "produce-proxy"]
    proxies_main = [c for c in containers if c["name"] == "produce-proxy"]
    if mode in ("native", "podmonitor"):
        check(len(proxies_init) == 1 and not proxies_main, "native: the proxy is an init container only")
        proxy = proxies_init[0]
        check(proxy.get("restartPolicy") == "Always", "native: restartPolicy Always (a native sidecar)")
        check(proxy.get("startupProbe", {}).get("httpGet", {}).get("path") == "/readyz",
              "native: the app waits for /readyz")
    else:
        check(len(proxies_main) == 1 and not init, "container: the proxy is a second container")
        proxy = proxies_main[0]
        check("restartPolicy" not in proxy, "container: no restartPolicy on a plain container")
        check(proxy.get("lifecycle", {}).get("preStop", {}).get("exec"), "container: a preStop wait")
    check(len([c for c in containers if c["name"] != "produce-proxy"]) == 1, "one app container")

    ports = {p["name"]: p["containerPort"] for p in proxy.get("ports", [])}
    check(ports.get("metrics") == metrics_port, f"metrics containerPort {ports} is {metrics_port}")
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        get = proxy.get(probe, {}).get("httpGet", {})
        check(get.get("path") == path and get.get("port") == "metrics", f"{probe} GET {path} on metrics")

    sc = proxy.get("securityContext", {})
    check(sc.get("runAsNonRoot") is True, "runAsNonRoot")
    check(sc.get("readOnlyRootFilesystem") is True, "readOnlyRootFilesystem")
    check(sc.get("allowPrivilegeEscalation") is False, "allowPrivilegeEscalation false")
    check(sc.get("capabilities", {}).get("drop") == ["ALL"], "capabilities drop ALL")
    check(sc.get("seccompProfile", {}).get("type") == "RuntimeDefault", "seccompProfile RuntimeDefault")
    check(proxy.get("resources", {}).get("limits", {}).get("memory"), "a memory limit")
    check(proxy.get("resources", {}).get("requests", {}).get("cpu"), "a cpu request")

    grace = spec.get("terminationGracePeriodSeconds", 30)
    check(grace * 1000 > drain_ms, f"terminationGracePeriodSeconds {grace} above drain {drain_ms} ms")

    args = proxy.get("args", [])
    check(args[:2] == ["--config", "/etc/produce-proxy/produce-proxy.toml"], f"args {args}")
    mounts = {m["name"]: m for m in proxy.get("volumeMounts", [])}
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    mount = mounts.get("produce-proxy-config", {})
    check(mount.get("mountPath") == "/etc/produce-proxy" and mount.get("readOnly"), "config mounted read-only")
    check(volumes.get("produce-proxy-config", {}).get("configMap", {}).get("name") == cm["metadata"]["name"],
          "the config volume is the rendered ConfigMap")

    ann = pod["metadata"].get("annotations", {})
    check(ann.get("prometheus.io/scrape") == "true", "prometheus.io/scrape")
    check(ann.get("prometheus.io/port") == str(metrics_port), "prometheus.io/port")
    check(ann.get("prometheus.io/path") == "/metrics", "prometheus.io/path")
    check(ann.get("checksum/config"), "checksum/config rolls pods on config change")

    selector = dep["spec"]["selector"]["matchLabels"]
    labels = pod["metadata"]["labels"]
    check(all(labels.get(k) == v for k, v in selector.items()), "the Deployment selects its pods")
    if mode == "podmonitor":
        pm = by_kind["PodMonitor"][0]
        check(pm["spec"]["selector"]["matchLabels"] == selector, "the PodMonitor selects the pods")
        endpoint = pm["spec"]["podMetricsEndpoints"][0]
        check(endpoint["port"] == "metrics" and endpoint["path"] == "/metrics", "PodMonitor scrapes /metrics")

    for f in failures:
        print(f"FAIL ({mode}): {f}")
    print(f"{mode}: {'ok' if not failures else f'{len(failures)} failed'} "
          f"(grace {grace}s, metrics port {metrics_port})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
