#!/usr/bin/python3
"""The helm chart's dashboard ConfigMap and PrometheusRule against the plain
files they are made from (helm/produce-proxy/files/).

usage: chart_assert.py HELM CHART_DIR
Prints one line per failed check and exits 1 if any failed.
"""
import json
import os
import subprocess
import sys

import yaml

CRD = "monitoring.coreos.com/v1/PrometheusRule"
DEFAULT_BUDGET = 67108864
failures = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)
    return ok


def render(helm, chart, *args):
    out = subprocess.run([helm, "template", "t", chart, *args], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        check(False, f"helm template {' '.join(args)} failed: {out.stderr.strip()}")
        return []
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def kinds(docs, kind):
    return [d for d in docs if d.get("kind") == kind]


def dashboards(docs):
    return [d for d in kinds(docs, "ConfigMap") if d["metadata"].get("labels", {}).get("grafana_dashboard") == "1"]


def main():
    helm, chart = sys.argv[1], sys.argv[2]
    with open(os.path.join(chart, "files", "grafana-dashboard.json")) as f:
        dashboard_text = f.read()
    with open(os.path.join(chart, "files", "prometheus-rules.yaml")) as f:
        rules_text = f.read()
    rules = yaml.safe_load(rules_text)
    json.loads(dashboard_text)

    # Off by default, whether or not the cluster has the CRD.
    docs = render(helm, chart, "--api-versions", CRD)
    check(not dashboards(docs) and not kinds(docs, "PrometheusRule"),
          "defaults: no dashboard ConfigMap, no PrometheusRule")

    # Enabled, on a cluster with the CRD: both, equal to the plain files.
    docs = render(helm, chart, "--set", "dashboard.enabled=true", "--set", "prometheusRule.enabled=true",
                  "--set", "prometheusRule.labels.release=kube-prometheus-stack", "--api-versions", CRD)
    cms = dashboards(docs)
    if check(len(cms) == 1, "dashboard.enabled: one ConfigMap labelled grafana_dashboard: \"1\""):
        cm = cms[0]
        check(list(cm["data"]) == ["produce-proxy.json"], f"its one key is produce-proxy.json ({list(cm['data'])})")
        check(cm["data"].get("produce-proxy.json") == dashboard_text,
              "its produce-proxy.json is files/grafana-dashboard.json, byte for byte")
        config_maps = [d["metadata"]["name"] for d in kinds(docs, "ConfigMap")]
        check(len(set(config_maps)) == len(config_maps), f"ConfigMap names are distinct ({config_maps})")
        check("namespace" not in cm["metadata"], "in the release's namespace unless dashboard.namespace is set")
    prs = kinds(docs, "PrometheusRule")
    if check(len(prs) == 1, "prometheusRule.enabled with the CRD: one PrometheusRule"):
        pr = prs[0]
        check(pr["apiVersion"] == "monitoring.coreos.com/v1", f"apiVersion {pr['apiVersion']}")
        check(pr["spec"] == rules, "its spec is files/prometheus-rules.yaml")
        check(pr["metadata"]["labels"].get("release") == "kube-prometheus-stack",
              "prometheusRule.labels reach the object (the operator's ruleSelector)")

    # No CRD: no PrometheusRule (the API server would refuse the object).
    docs = render(helm, chart, "--set", "prometheusRule.enabled=true")
    check(not kinds(docs, "PrometheusRule"), "prometheusRule.enabled without the CRD: no PrometheusRule")

    # The dashboard's placement options.
    docs = render(helm, chart, "--set", "dashboard.enabled=true", "--set", "dashboard.namespace=monitoring",
                  "--set", "dashboard.annotations.grafana_folder=Kafka")
    cms = dashboards(docs)
    if check(len(cms) == 1, "dashboard with namespace and annotations renders"):
        check(cms[0]["metadata"].get("namespace") == "monitoring", "dashboard.namespace")
        check(cms[0]["metadata"].get("annotations") == {"grafana_folder": "Kafka"}, "dashboard.annotations")

    # Another memory budget: the alert's threshold and the dashboard's variable
    # follow config.producer.buffer_memory_bytes; nothing else changes.
    budget = 268435456
    docs = render(helm, chart, "--set", "dashboard.enabled=true", "--set", "prometheusRule.enabled=true",
                  "--set", f"config.producer.buffer_memory_bytes={budget}", "--api-versions", CRD)
    cms, prs = dashboards(docs), kinds(docs, "PrometheusRule")
    if check(len(cms) == 1 and len(prs) == 1, f"buffer_memory_bytes={budget}: both render"):
        text = cms[0]["data"]["produce-proxy.json"]
        check(str(DEFAULT_BUDGET) not in text and text.count(str(budget)) == dashboard_text.count(str(DEFAULT_BUDGET)),
              "the dashboard's memory budget variable is the configured budget")
        check(text.replace(str(budget), str(DEFAULT_BUDGET)) == dashboard_text,
              "and the rest of the dashboard is as is")
        variable = [v for v in json.loads(text)["templating"]["list"] if v["name"] == "buffer_memory_bytes"]
        check(len(variable) == 1 and variable[0]["query"] == str(budget), "buffer_memory_bytes variable's default")
        exprs = {r["alert"]: r["expr"] for g in prs[0]["spec"]["groups"] for r in g["rules"]}
        check(f"0.9 * {budget}" in exprs.get("ProduceProxyMemoryBudgetHigh", ""),
              "ProduceProxyMemoryBudgetHigh compares with 90 % of the configured budget")
        want = yaml.safe_load(rules_text.replace(f"0.9 * {DEFAULT_BUDGET}", f"0.9 * {budget}"))
        check(prs[0]["spec"] == want, "and the other rules are as they are")
    check(rules_text.count(f"0.9 * {DEFAULT_BUDGET}") == 1, "the rules file has the one threshold the chart rewrites")

    # Lint, and a misspelt key refused by values.schema.json.
    lint = subprocess.run([helm, "lint", "--strict", chart, "--set", "dashboard.enabled=true", "--set",
                           "prometheusRule.enabled=true"], capture_output=True, text=True, timeout=120)
    check(lint.returncode == 0, "helm lint --strict with both enabled" + ("" if lint.returncode == 0 else
                                                                          ": " + lint.stdout + lint.stderr))
    bad = subprocess.run([helm, "template", "t", chart, "--set", "dashboard.enabeld=true"], capture_output=True,
                         text=True, timeout=120)
    check(bad.returncode != 0 and "enabeld" in bad.stderr, "a misspelt dashboard key is refused by the schema")

    print(f"chart observability tests: {'passed' if not failures else f'{len(failures)} FAILED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
