#!/usr/bin/python3
"""The dashboard and the alert rules as files, before anything runs them.

  /usr/bin/python3 structure_test.py REPO_DIR [unittest args]

- The rules file has exactly the seven alerts operators and docs/operations.md
  know by name, each with a severity, a summary, a description and the
  runbook_url docs/operations.md#<alert name in lower case>.
- prometheus-rules.test.yaml (promtool test rules) has, for every alert, a
  case where it fires, with its labels and annotations, and one where it is
  quiet.
- Once docs/operations.md has runbook sections, it has one `### <alert>`
  heading for each alert.
- Every produce_proxy_* name in the dashboard and the rules is a metric of
  docs/metrics.md (generated from the code), so a renamed metric fails here.
- The dashboard: a current schemaVersion, every query through the
  ${DS_PROMETHEUS} data source variable, unique panel ids, panels that do
  not overlap, and the metric families the panels must show.
"""
import json
import os
import re
import sys
import unittest

import yaml

REPO = None
ALERTS = ["ProduceProxyNotReady", "ProduceProxyProducerFatal", "ProduceProxyRecordsFailing",
          "ProduceProxyMemoryBudgetHigh", "ProduceProxyUpstreamAuthFailures",
          "ProduceProxyRequestsParkedOrRefused", "ProduceProxyAnsweringByDeadline"]
SEVERITIES = {"critical", "warning"}
# What the dashboard must show (issue: records in and out, window per
# partition, resets and leader changes, retries, the budget, latency, the
# clients' migration, deadline answers).
DASHBOARD_FAMILIES = [
    "produce_proxy_records_received_total", "produce_proxy_records_delivered_total",
    "produce_proxy_records_failed_total", "produce_proxy_inflight_batches", "produce_proxy_partition_window",
    "produce_proxy_window_resets_total", "produce_proxy_leader_changes_total", "produce_proxy_retries_total",
    "produce_proxy_buffered_bytes", "produce_proxy_memory_used_bytes",
    "produce_proxy_client_request_duration_seconds", "produce_proxy_upstream_request_duration_seconds",
    "produce_proxy_client_produce_requests_total", "produce_proxy_client_deadline_answers_total",
    "produce_proxy_client_deadline_records_total"]
MIN_SCHEMA_VERSION = 39  # Grafana 11.0
DS = "${DS_PROMETHEUS}"


def path(*parts):
    return os.path.join(REPO, *parts)


def load_rules():
    with open(path("helm", "produce-proxy", "files", "prometheus-rules.yaml")) as f:
        doc = yaml.safe_load(f)
    return [r for g in doc["groups"] for r in g["rules"]]


def load_dashboard():
    with open(path("helm", "produce-proxy", "files", "grafana-dashboard.json")) as f:
        return json.load(f)


def dashboard_panels(dashboard):
    for p in dashboard["panels"]:
        yield p
        yield from p.get("panels", [])


def dashboard_exprs(dashboard):
    exprs = [t["expr"] for p in dashboard_panels(dashboard) for t in p.get("targets", [])]
    for v in dashboard["templating"]["list"]:
        if v["type"] == "query":
            exprs.append(v["query"]["query"] if isinstance(v["query"], dict) else v["query"])
    return exprs


def documented_metrics():
    """Metric names of docs/metrics.md; a histogram also as _bucket, _sum, _count."""
    with open(path("docs", "metrics.md")) as f:
        text = f.read()
    names = set()
    section = None
    for line in text.splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        m = re.match(r"\| `(produce_proxy_\w+)` \|", line)
        if m:
            names.add(m.group(1))
            if section == "Histograms":
                names.update(m.group(1) + s for s in ("_bucket", "_sum", "_count"))
    return names


def metric_names(expr):
    return set(re.findall(r"\bproduce_proxy_\w+", expr))


class Rules(unittest.TestCase):

    def test_the_seven_alerts_by_name(self):
        self.assertEqual([r.get("alert") for r in load_rules()], ALERTS)

    def test_labels_and_annotations(self):
        for r in load_rules():
            with self.subTest(alert=r["alert"]):
                self.assertIn(r.get("labels", {}).get("severity"), SEVERITIES)
                ann = r.get("annotations", {})
                self.assertEqual(sorted(ann), ["description", "runbook_url", "summary"])
                self.assertEqual(ann["runbook_url"], "docs/operations.md#" + r["alert"].lower())
                self.assertIn("{{ $labels.instance }}", ann["summary"])

    def test_every_alert_fires_and_stays_quiet_in_the_unit_tests(self):
        with open(path("tests", "ops", "observability", "prometheus-rules.test.yaml")) as f:
            unit = yaml.safe_load(f)
        rules = {r["alert"]: r for r in load_rules()}
        fires, quiet = set(), set()
        for case in unit["tests"]:
            for t in case.get("alert_rule_test", []):
                name = t["alertname"]
                self.assertIn(name, rules, "a unit test for an alert the rules do not have")
                if not t.get("exp_alerts"):
                    quiet.add(name)
                    continue
                fires.add(name)
                for alert in t["exp_alerts"]:
                    self.assertEqual(alert["exp_labels"].get("severity"), rules[name]["labels"]["severity"], name)
                    self.assertEqual(sorted(alert.get("exp_annotations", {})),
                                     ["description", "runbook_url", "summary"],
                                     f"{name}: the unit test checks every annotation")
        self.assertEqual(sorted(fires), sorted(ALERTS), "alerts with a case where they fire")
        self.assertEqual(sorted(quiet), sorted(ALERTS), "alerts with a case where they stay quiet")

    def test_runbook_sections_once_written(self):
        doc = path("docs", "operations.md")
        text = ""
        if os.path.exists(doc):
            with open(doc) as f:
                text = f.read()
        headings = set(re.findall(r"^###\s+(ProduceProxy\w+)\s*$", text, re.M))
        if not headings:
            self.skipTest("docs/operations.md has no runbook sections yet")
        self.assertEqual(sorted(headings & set(ALERTS)), sorted(ALERTS), "a ### section for every alert")

    def test_rule_metrics_are_documented(self):
        known = documented_metrics()
        self.assertGreater(len(known), 30, "docs/metrics.md parsed")
        for r in load_rules():
            with self.subTest(alert=r["alert"]):
                self.assertEqual(metric_names(r["expr"]) - known, set())


class Dashboard(unittest.TestCase):

    def test_schema_version_and_data_source_variable(self):
        d = load_dashboard()
        self.assertGreaterEqual(d["schemaVersion"], MIN_SCHEMA_VERSION)
        self.assertNotIn("__inputs", d, "the data source is a template variable, not an import input")
        ds = [v for v in d["templating"]["list"] if v["name"] == "DS_PROMETHEUS"]
        self.assertEqual(len(ds), 1)
        self.assertEqual((ds[0]["type"], ds[0]["query"]), ("datasource", "prometheus"))
        for v in d["templating"]["list"]:
            if v["type"] == "query":
                self.assertEqual(v["datasource"], {"type": "prometheus", "uid": DS}, v["name"])
        for p in dashboard_panels(d):
            if p["type"] == "row":
                continue
            with self.subTest(panel=p["title"]):
                self.assertEqual(p["datasource"], {"type": "prometheus", "uid": DS})
                self.assertTrue(p["targets"])
                for t in p["targets"]:
                    self.assertEqual(t["datasource"], {"type": "prometheus", "uid": DS})
                    self.assertTrue(t["expr"].strip())
                self.assertTrue(p.get("description"), "every panel says what it shows")

    def test_layout(self):
        d = load_dashboard()
        panels = list(dashboard_panels(d))
        ids = [p["id"] for p in panels]
        self.assertEqual(len(ids), len(set(ids)), "unique panel ids")
        boxes = [(p["title"], p["gridPos"]) for p in panels]
        for title, g in boxes:
            self.assertLessEqual(g["x"] + g["w"], 24, title)
        for i, (a, ga) in enumerate(boxes):
            for b, gb in boxes[i + 1:]:
                overlap = (ga["x"] < gb["x"] + gb["w"] and gb["x"] < ga["x"] + ga["w"] and
                           ga["y"] < gb["y"] + gb["h"] and gb["y"] < ga["y"] + ga["h"])
                self.assertFalse(overlap, f"{a!r} overlaps {b!r}")

    def test_metrics_are_documented_and_the_required_ones_shown(self):
        known = documented_metrics()
        used = set()
        for e in dashboard_exprs(load_dashboard()):
            used |= metric_names(e)
        self.assertEqual(used - known, set(), "names not in docs/metrics.md")
        bases = used | {re.sub(r"_(bucket|sum|count)$", "", n) for n in used}
        self.assertEqual([f for f in DASHBOARD_FAMILIES if f not in bases], [], "families without a panel")


if __name__ == "__main__":
    REPO = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:])
