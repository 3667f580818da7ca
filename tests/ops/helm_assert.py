#!/usr/bin/python3
"""Assertions on the objects `helm template` rendered for the produce-proxy chart.

usage: helm_assert.py MODE RENDERED.yaml [TOML_OUT]
MODE is native, container or podmonitor (native plus a PodMonitor), or
node-hostPort / node-service (node.enabled: a DaemonSet, with a Service in
the second), or spool-emptyDir / spool-pvc / spool-existing (native with
spool.volume: an emptyDir, a PVC the chart creates, an existing claim named
`spool-claim`). Writes the ConfigMap's produce-proxy.toml to TOML_OUT when
given, for --check-config.
Prints one line per failed check and exits 1 if any failed.
"""
import re
import sys
import tomllib

import yaml

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
    return ok


LOOPBACK = re.compile(r"^((?i:localhost)|127\.\d+\.\d+\.\d+|\[::1\]):\d+$")


def check_security_context(proxy):
    sc = proxy.get("securityContext", {})
    check(sc.get("runAsNonRoot") is True, "runAsNonRoot")
    check(sc.get("readOnlyRootFilesystem") is True, "readOnlyRootFilesystem")
    check(sc.get("allowPrivilegeEscalation") is False, "allowPrivilegeEscalation false")
    check(sc.get("capabilities", {}).get("drop") == ["ALL"], "capabilities drop ALL")
    check(sc.get("seccompProfile", {}).get("type") == "RuntimeDefault", "seccompProfile RuntimeDefault")


SPOOL_MOUNT = "/var/lib/produce-proxy"


def spool_volume(mode, by_kind, config, spec, proxy):
    """spool.volume: the volume mounted writable where config.spool.dir
    points, the pod's fsGroup able to write it; a PVC (created and kept on
    uninstall, or the existing claim) with one replica and the Recreate
    strategy. Without it: no spool volume and no [spool] section."""
    mounts = {m["name"]: m for m in proxy.get("volumeMounts", [])}
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    if not mode.startswith("spool-"):
        check("produce-proxy-spool" not in mounts and "produce-proxy-spool" not in volumes, "no spool volume by default")
        check("spool" not in config, "no [spool] by default")
        return
    check(config.get("spool", {}).get("dir") == SPOOL_MOUNT + "/spool", f"spool.dir under the mount: {config.get('spool')}")
    mount = mounts.get("produce-proxy-spool", {})
    check(mount.get("mountPath") == SPOOL_MOUNT and not mount.get("readOnly"), f"spool mounted writable: {mount}")
    check(spec.get("securityContext", {}).get("fsGroup") == proxy["securityContext"]["runAsGroup"],
          "fsGroup: the proxy's group writes the spool volume")
    volume = volumes.get("produce-proxy-spool", {})
    dep = by_kind["Deployment"][0]
    if mode == "spool-emptyDir":
        check("emptyDir" in volume, f"spool: an emptyDir: {volume}")
        check("strategy" not in dep["spec"], "emptyDir: the default rolling update")
        return
    claim = volume.get("persistentVolumeClaim", {}).get("claimName")
    check(dep["spec"].get("strategy", {}).get("type") == "Recreate", "PVC: Recreate, one writer at a time")
    check(dep["spec"]["replicas"] == 1, "PVC: one replica")
    if mode == "spool-existing":
        check(claim == "spool-claim", f"the existing claim: {claim}")
        check("PersistentVolumeClaim" not in by_kind, "no PVC created for an existing claim")
        return
    pvcs = by_kind.get("PersistentVolumeClaim", [{}])
    pvc = pvcs[0]
    check(pvc.get("metadata", {}).get("name") == claim, f"the claim mounted is the one created: {claim}")
    check(pvc.get("spec", {}).get("accessModes") == ["ReadWriteOnce"], "PVC ReadWriteOnce")
    check(pvc.get("spec", {}).get("resources", {}).get("requests", {}).get("storage"), "PVC size")
    check(pvc.get("metadata", {}).get("annotations", {}).get("helm.sh/resource-policy") == "keep",
          "PVC kept on uninstall")


def node_mode(mode, by_kind, config):
    """One proxy per node: a DaemonSet (no app, no Deployment) whose listener
    is beyond loopback only with client authentication, the client Secret
    mounted read-only where the config names its files, and either a
    hostPort advertised as the node's IP or a node-local Service."""
    expose = mode.split("-", 1)[1]
    want = ["ConfigMap", "DaemonSet"] + (["Service"] if expose == "service" else [])
    check(sorted(by_kind) == sorted(want), f"rendered kinds {sorted(by_kind)}, want {sorted(want)}")
    if "DaemonSet" not in by_kind:
        return
    listener = config.get("listener", {})
    address = listener.get("address", "127.0.0.1:9092")
    tls, sasl = listener.get("tls", {}), listener.get("sasl", {})
    mtls = tls.get("enabled") is True and tls.get("client_auth") == "required"
    check(not LOOPBACK.match(address), f"node: the listener {address} is reachable from other pods")
    check(mtls or bool(sasl.get("mechanisms")),
          "node: beyond loopback only with client certificates required or SASL")
    check(listener.get("allow_unauthenticated") is not True, "node: allow_unauthenticated is not set")
    port = int(address.rsplit(":", 1)[1])

    ds = by_kind["DaemonSet"][0]
    pod = ds["spec"]["template"]
    spec = pod["spec"]
    proxies = [c for c in spec["containers"] if c["name"] == "produce-proxy"]
    check(len(spec["containers"]) == 1 and len(proxies) == 1 and not spec.get("initContainers"),
          "node: the DaemonSet runs the proxy alone")
    if not proxies:
        return
    proxy = proxies[0]
    check_security_context(proxy)
    selector = ds["spec"]["selector"]["matchLabels"]
    check(all(pod["metadata"]["labels"].get(k) == v for k, v in selector.items()), "node: the DaemonSet selects its pods")
    check(pod["metadata"].get("annotations", {}).get("checksum/config"), "node: checksum/config rolls pods")
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        check(proxy.get(probe, {}).get("httpGet", {}).get("path") == path, f"node: {probe} GET {path}")

    kafka = [p for p in proxy.get("ports", []) if p["name"] == "kafka"]
    check(len(kafka) == 1 and kafka[0]["containerPort"] == port, f"node: kafka containerPort {kafka} is {port}")
    args = proxy.get("args", [])
    env = {e["name"]: e for e in proxy.get("env", [])}
    if expose == "hostPort":
        check(kafka and kafka[0].get("hostPort") == port, "hostPort: the node's port is the listener's")
        check(env.get("NODE_IP", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "status.hostIP",
              "hostPort: NODE_IP from status.hostIP")
        check(f"listener.advertised_address=$(NODE_IP):{port}" in args,
              f"hostPort: Metadata advertises the node's IP, args {args}")
    else:
        check(kafka and "hostPort" not in kafka[0], "service: no hostPort")
        svc = by_kind["Service"][0]
        check(svc["spec"].get("internalTrafficPolicy") == "Local", "service: internalTrafficPolicy Local")
        check(svc["spec"]["selector"] == selector, "service: selects the DaemonSet's pods")
        sp = svc["spec"]["ports"]
        check(len(sp) == 1 and sp[0]["port"] == port and sp[0]["targetPort"] == "kafka", f"service: ports {sp}")
        want_adv = f"{svc['metadata']['name']}.default.svc:{port}"
        check(listener.get("advertised_address") == want_adv,
              f"service: Metadata advertises {listener.get('advertised_address')}, want {want_adv}")

    mounts = {m["name"]: m for m in proxy.get("volumeMounts", [])}
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    auth = mounts.get("produce-proxy-client-auth", {})
    check(auth.get("readOnly") is True, "node: the client Secret is mounted read-only")
    secret = volumes.get("produce-proxy-client-auth", {}).get("secret", {})
    check(secret.get("secretName"), "node: the client-auth volume is a Secret")
    check(not any("subPath" in m for m in mounts.values()), "node: no subPath (it would hide Secret updates)")
    mode_bits = secret.get("defaultMode", 0o644)
    check(mode_bits & 0o007 == 0, f"node: the Secret's files are not world-readable ({oct(mode_bits)})")
    fs_group = spec.get("securityContext", {}).get("fsGroup")
    check(mode_bits & 0o004 or fs_group == proxy["securityContext"].get("runAsGroup"),
          "node: the proxy's group owns the Secret's files (fsGroup)")
    files = [tls.get(k) for k in ("cert_file", "key_file", "ca_file") if tls.get("enabled") and tls.get(k)]
    files += [sasl["users_file"]] if sasl.get("mechanisms") else []
    root = auth.get("mountPath", "") + "/"
    for f in files:
        check(f.startswith(root), f"node: {f} is in the mounted Secret {root}")


def main():
    mode, rendered = sys.argv[1], sys.argv[2]
    docs = [d for d in yaml.safe_load_all(open(rendered)) if d]
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    if mode.startswith("node-"):
        cm = by_kind["ConfigMap"][0]
        toml_text = cm["data"]["produce-proxy.toml"]
        if len(sys.argv) > 3:
            open(sys.argv[3], "w").write(toml_text)
        node_mode(mode, by_kind, tomllib.loads(toml_text))
        for f in failures:
            print(f"FAIL ({mode}): {f}")
        print(f"{mode}: {'ok' if not failures else f'{len(failures)} failed'}")
        return 1 if failures else 0
    extra = {"podmonitor": ["PodMonitor"], "spool-pvc": ["PersistentVolumeClaim"]}.get(mode, [])
    check(sorted(by_kind) == sorted(["ConfigMap", "Deployment"] + extra), f"rendered kinds {sorted(by_kind)}")

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
    if mode in ("native", "podmonitor") or mode.startswith("spool-"):
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

    check_security_context(proxy)
    spool_volume(mode, by_kind, config, spec, proxy)
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
