#!/usr/bin/env python3
"""Every PromQL expression of the Grafana dashboard and of the alert rules
(helm/produce-proxy/files/), evaluated by a real Prometheus (Debian's
/usr/bin/prometheus, loopback, a temporary storage directory, 1 s scrapes,
the rules loaded and evaluated every second) scraping real produce-proxy
processes:

  A  the embedded upstream (upstream.bootstrap_servers = ["embedded"]),
     healthy: kcat in legacy mode (Produce v1, magic 0) and modern mode
     (v7, magic 2), and kafka-python (v2, magic 1) producing throughout;
  B  before the test cluster (tests/broker), with faults injected there:
     NOT_LEADER_OR_FOLLOWER (a retry), a leader move (a leader change and a
     window reset), TOPIC_AUTHORIZATION_FAILED (failed records and an epoch
     bump), and a 4 s round trip under a client's 2 s timeout (an answer at
     the deadline, in flight);
  C  TLS to the test cluster's plaintext port: every handshake fails
     (upstream_auth_failures_total), and it never becomes ready.

Asserted:
- each dashboard query, with Grafana's variables substituted, parses and
  returns at least one finite value for A alone, as Grafana asks it (a range
  query for a time series, an instant query where the panel says so); the
  queries of FAULT_FAMILIES (series that only exist once something failed)
  return data with all three proxies selected instead;
- each variable's label_values() query lists values, A's instance among them;
- each rule's expression evaluates (status success), and each series it
  selects exists: for A, or for B/C in FAULT_FAMILIES;
- the rules as Prometheus evaluates them: every rule's health is ok; the
  alerts the faults make are there (RecordsFailing for B, AnsweringByDeadline
  for B, UpstreamAuthFailures and NotReady for C) and none is for A.
ProducerFatal, MemoryBudgetHigh and RequestsParkedOrRefused are not made to
fire here (a fatal proxy exits; the others need minutes at a full budget):
promtool test rules (prometheus-rules.test.yaml) fires each of them.

usage: promql_test.py --proxy BINARY --cluster TEST_CLUSTER [unittest args]
~20 s.
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "daemon"))
from daemon_support import Proxy, TestCluster, free_port, http_request, kcat_produce, run_tests  # noqa: E402

ARGS = None
PROMETHEUS = "/usr/bin/prometheus"
EXAMPLE_CONFIG = os.path.join(REPO, "config", "produce-proxy.example.toml")
FILES = os.path.join(REPO, "helm", "produce-proxy", "files")
DASHBOARD = os.path.join(FILES, "grafana-dashboard.json")
RULES = os.path.join(FILES, "prometheus-rules.yaml")
# Families with no series until something fails (docs/metrics.md: their
# label values appear when first seen).
FAULT_FAMILIES = {"produce_proxy_records_failed_total", "produce_proxy_retries_total",
                  "produce_proxy_producer_epoch_bumps_total", "produce_proxy_upstream_auth_failures_total"}
# Grafana's variables: the built-in intervals for a 1 s scrape, All for the
# multi-value ones, the memory budget's default.
GRAFANA_VARIABLES = {"__rate_interval": "30s", "__range": "5m", "job": ".*", "topic": ".*",
                     "buffer_memory_bytes": "67108864"}
# Alerts the faults above make, by the proxy they are for; the states each may
# be in (the `for` of NotReady and AnsweringByDeadline outlasts the test).
EXPECTED_ALERTS = {("ProduceProxyRecordsFailing", "B"): {"firing"},
                   ("ProduceProxyAnsweringByDeadline", "B"): {"pending", "firing"},
                   ("ProduceProxyUpstreamAuthFailures", "C"): {"firing"},
                   ("ProduceProxyNotReady", "C"): {"pending", "firing"}}
WORLD = {}


class Prometheus:
    """/usr/bin/prometheus on a free loopback port with a temporary config and
    storage directory; 1 s scrapes of `targets`, `rule_file` evaluated every 1 s."""

    def __init__(self, targets, rule_file):
        self.dir = tempfile.TemporaryDirectory(prefix="pp-prometheus-")
        config = os.path.join(self.dir.name, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
                    f"rule_files: ['{rule_file}']\n"
                    "scrape_configs:\n  - job_name: produce-proxy\n    static_configs:\n"
                    f"      - targets: [{', '.join(repr(t) for t in targets)}]\n")
        self.log = open(os.path.join(self.dir.name, "prometheus.log"), "w+")
        self.proc = None
        for _ in range(3):  # the free port may be taken before Prometheus binds it
            self.port = free_port()
            self.proc = subprocess.Popen(
                [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={self.dir.name}/data",
                 f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
                stdout=self.log, stderr=subprocess.STDOUT)
            if self._wait_ready(30):
                return
            self.stop()
        raise RuntimeError("prometheus did not start:\n" + self.text())

    def _wait_ready(self, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline and self.proc.poll() is None:
            try:
                if http_request(self.port, "/-/ready", timeout=2)[0] == 200:
                    return True
            except OSError:
                pass
            time.sleep(0.2)
        return False

    def text(self):
        self.log.flush()
        with open(self.log.name, errors="replace") as f:
            return f.read()

    def api(self, path, **params):
        """The JSON answer of GET /api/v1/PATH; an HTTP error's JSON body too."""
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}?" + urllib.parse.urlencode(params, doseq=True)
        try:
            with urllib.request.urlopen(url, timeout=20) as r:
                return json.load(r)
        except urllib.error.HTTPError as e:
            return json.load(e)

    def query(self, expr):
        return self.api("query", query=expr)

    def query_range(self, expr, seconds=60, step=5):
        now = time.time()
        return self.api("query_range", query=expr, start=now - seconds, end=now, step=step)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def finite_values(answer):
    """Every finite sample value of a query answer (vector, matrix or scalar)."""
    data = answer.get("data", {})
    values = []
    for series in data.get("result", []) if data.get("resultType") in ("vector", "matrix") else []:
        values += [v for _, v in series.get("values", [])] + ([series["value"][1]] if "value" in series else [])
    if data.get("resultType") == "scalar":
        values.append(data["result"][1])
    return [float(v) for v in values if math.isfinite(float(v))]


def substitute(expr, instance):
    """Grafana's interpolation of the dashboard's variables."""
    values = {**GRAFANA_VARIABLES, "instance": instance}

    def one(m):
        if m.group(1) not in values:
            raise AssertionError(f"unknown variable ${m.group(1)} in {expr}")
        return values[m.group(1)]
    return re.sub(r"\$(\w+)", one, expr)


def dashboard_queries():
    """(where, expr, instant) of every panel target, rows' panels included."""
    with open(DASHBOARD) as f:
        dashboard = json.load(f)
    queries = []
    for panel in dashboard["panels"]:
        for p in [panel] + panel.get("panels", []):
            for t in p.get("targets", []):
                queries.append((f"{p['title']} [{t['refId']}]", t["expr"], bool(t.get("instant"))))
    return dashboard, queries


def families(expr):
    return {re.sub(r"_(bucket|sum|count)$", "", n) for n in re.findall(r"\bproduce_proxy_\w+", expr)}


def rules():
    import yaml
    with open(RULES) as f:
        return [r for g in yaml.safe_load(f)["groups"] for r in g["rules"]]


def selectors(expr):
    """The series selectors of a PromQL expression (metric name and matchers)."""
    return sorted(set(m.group(0) for m in re.finditer(r"\b(?:produce_proxy_\w+|up)\b(?:\{[^}]*\})?", expr)
                      if not expr[m.end():].lstrip().startswith("(")))


def wait_for(what, predicate, timeout=60, interval=0.5):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what} (last: {last})")


def background_producer(port, stop, sent):
    """kafka-python (Produce v2, magic 1) into A, ten records a second, so
    every rate and quantile has something to show while the queries run."""
    from kafka import KafkaProducer
    producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{port}", api_version=(0, 10), acks="all",
                             max_block_ms=10000, request_timeout_ms=30000, linger_ms=5)
    while not stop.is_set():
        producer.send("steady", f"bg-{sent[0]}".encode())
        sent[0] += 1
        stop.wait(0.1)
    producer.flush(10)
    producer.close(5)


def inject_faults(cluster, port):
    """On B: a retry, a leader move, failed records, an answer at the deadline."""
    from kafka import KafkaProducer
    producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{port}", api_version=(0, 10), acks="all", retries=0,
                             max_block_ms=10000, request_timeout_ms=30000, linger_ms=0)
    for p in (0, 1):
        producer.send("faults", b"warm", partition=p).get(timeout=30)
    cluster.command("error faults 0 NOT_LEADER_OR_FOLLOWER 2")
    producer.send("faults", b"after a retry", partition=0).get(timeout=30)
    leader = [p["leader"] for p in cluster.stats()["partitions"] if p["topic"] == "faults" and p["partition"] == 1][0]
    cluster.command(f"leader faults 1 {1 if leader != 1 else 2}")
    producer.send("faults", b"after a leader move", partition=1).get(timeout=30)
    cluster.command("error faults 0 TOPIC_AUTHORIZATION_FAILED 1")
    try:
        producer.send("faults", b"refused", partition=0).get(timeout=30)
    except Exception:  # noqa: BLE001 - the failure is the point
        pass
    producer.close(5)
    # The upstream answers in 4 s, the client waits 2 s: the proxy answers at
    # the deadline (timeout_ms less a margin), the records in flight.
    impatient = KafkaProducer(bootstrap_servers=f"127.0.0.1:{port}", api_version=(0, 10), acks="all", retries=0,
                              max_block_ms=10000, request_timeout_ms=2000, linger_ms=0)
    impatient.send("faults", b"warm", partition=1).get(timeout=30)
    cluster.command("rtt 4000")
    try:
        impatient.send("faults", b"late", partition=1).get(timeout=10)
    except Exception:  # noqa: BLE001 - REQUEST_TIMED_OUT is the point
        pass
    cluster.command("rtt 0")
    impatient.close(5)


def setUpModule():
    if not os.access(PROMETHEUS, os.X_OK):
        raise AssertionError(f"{PROMETHEUS} missing: scripts/setup.sh installs Debian's prometheus")
    cleanups = WORLD.setdefault("cleanups", [])
    try:
        start_world(cleanups)
    except BaseException:
        tearDownModule()
        raise


def start_world(cleanups):
    cluster = TestCluster(ARGS.cluster, "--brokers", "2", "--topic", "faults:2")
    cleanups.append(cluster.stop)
    proxies, ports = {}, {}
    extra = {"A": ['upstream.bootstrap_servers=["embedded"]'],
             "B": [f'upstream.bootstrap_servers=["{cluster.bootstrap.split(",")[0]}"]'],
             "C": [f'upstream.bootstrap_servers=["{cluster.bootstrap.split(",")[0]}"]', "upstream.tls.enabled=true",
                   "upstream.request_timeout_ms=1000"]}
    for name, sets in extra.items():
        client, metrics = free_port(), free_port()
        proxies[name] = Proxy(ARGS.proxy, config_path=EXAMPLE_CONFIG, sets=[
            *sets, f'listener.address="127.0.0.1:{client}"', f'metrics.address="127.0.0.1:{metrics}"'])
        cleanups.append(lambda p=proxies[name]: p.stop(10))
        ports[name] = (client, metrics)
    for name in ("A", "B"):
        if not proxies[name].wait_ready(90):
            raise AssertionError(f"proxy {name} not ready:\n{proxies[name].text()[-3000:]}")
    wait_for("proxy C's /metrics", lambda: _status(ports["C"][1], "/metrics") == 200)
    instances = {name: f"127.0.0.1:{m}" for name, (_, m) in ports.items()}
    prometheus = Prometheus(list(instances.values()), RULES)
    cleanups.append(prometheus.stop)
    WORLD.update(cluster=cluster, proxies=proxies, instances=instances, prometheus=prometheus)
    # Prometheus starts scraping a few seconds after it is ready (its scrape
    # manager's first reload): the counters need a sample from before the
    # faults, or rate() cannot see them rise.
    wait_for("the first scrapes", lambda: len(finite_values(prometheus.query("up == 1"))) == len(instances))
    time.sleep(2)

    client_a = ports["A"][0]
    for extra_args in ((), ("-X", "api.version.request=false", "-X", "broker.version.fallback=0.9.0.1")):
        out = kcat_produce(client_a, "demo", [f"kcat-{i}" for i in range(200)], *extra_args)
        if out.returncode != 0:
            raise AssertionError(f"kcat {extra_args}: {out.stderr}")
    stop, sent = threading.Event(), [0]
    thread = threading.Thread(target=background_producer, args=(client_a, stop, sent), daemon=True)
    thread.start()
    cleanups.append(lambda: (stop.set(), thread.join(20)))
    inject_faults(cluster, ports["B"][0])

    # Prometheus has seen it all: A's steady traffic and each fault's series.
    a = instances["A"]
    wait_for("A's delivered records/s", lambda: finite_values(prometheus.query(
        f'rate(produce_proxy_records_delivered_total{{instance="{a}"}}[30s]) > 0')))
    for expr in ("produce_proxy_records_failed_total", "produce_proxy_retries_total",
                 "produce_proxy_producer_epoch_bumps_total", "produce_proxy_upstream_auth_failures_total",
                 "produce_proxy_leader_changes_total > 0", "produce_proxy_window_resets_total > 0",
                 'produce_proxy_client_deadline_answers_total{outcome="in_flight"} > 0'):
        wait_for(expr, lambda e=expr: prometheus.query(e)["data"]["result"])
    time.sleep(3)  # a few more scrapes, so 30 s rates have two samples of each


def _status(port, path):
    try:
        return http_request(port, path, timeout=2)[0]
    except OSError:
        return None


def tearDownModule():
    for cleanup in reversed(WORLD.get("cleanups", [])):
        try:
            cleanup()
        except Exception as e:  # noqa: BLE001 - stop everything else regardless
            print(f"cleanup: {e!r}", file=sys.stderr)
    WORLD.get("cleanups", []).clear()


class Dashboard(unittest.TestCase):
    maxDiff = None

    def evaluate(self, expr, instant):
        prometheus = WORLD["prometheus"]
        answer = prometheus.query(expr) if instant else prometheus.query_range(expr)
        self.assertEqual(answer.get("status"), "success", f"{expr}: {answer.get('error')}")
        return finite_values(answer)

    def test_every_query_returns_data_for_a_healthy_proxy(self):
        _, queries = dashboard_queries()
        self.assertGreater(len(queries), 30)
        empty = []
        for where, expr, instant in queries:
            if families(expr) & FAULT_FAMILIES:
                continue
            if not self.evaluate(substitute(expr, WORLD["instances"]["A"]), instant):
                empty.append(f"{where}: {expr}")
        self.assertEqual(empty, [], "dashboard queries without a finite value for the healthy proxy")

    def test_fault_queries_return_data_under_faults(self):
        _, queries = dashboard_queries()
        fault = [(w, e, i) for w, e, i in queries if families(e) & FAULT_FAMILIES]
        print(f"\nfault-only dashboard queries ({len(fault)}): " + "; ".join(w for w, _, _ in fault), file=sys.stderr)
        self.assertEqual({f for _, e, _ in fault for f in families(e) & FAULT_FAMILIES}, FAULT_FAMILIES,
                         "each fault family is on the dashboard, and the faults here make each of them")
        empty = [f"{w}: {e}" for w, e, i in fault if not self.evaluate(substitute(e, ".*"), i)]
        self.assertEqual(empty, [], "fault queries without a finite value with the faulty proxies")

    def test_variables_list_values(self):
        dashboard, _ = dashboard_queries()
        prometheus, a = WORLD["prometheus"], WORLD["instances"]["A"]
        for v in dashboard["templating"]["list"]:
            if v["type"] != "query":
                continue
            with self.subTest(variable=v["name"]):
                m = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", v["query"]["query"])
                self.assertIsNotNone(m, v["query"]["query"])
                answer = prometheus.api(f"label/{m.group(2)}/values", **{"match[]": substitute(m.group(1), a)})
                self.assertEqual(answer.get("status"), "success", answer)
                self.assertTrue(answer["data"], f"{v['name']}: no values")
                if v["name"] == "instance":
                    self.assertIn(a, answer["data"])


class Rules(unittest.TestCase):
    maxDiff = None

    def test_every_expression_evaluates_on_series_that_exist(self):
        prometheus, a = WORLD["prometheus"], WORLD["instances"]["A"]
        missing = []
        for rule in rules():
            answer = prometheus.query(rule["expr"])
            self.assertEqual(answer.get("status"), "success", f"{rule['alert']}: {answer.get('error')}")
            for selector in selectors(rule["expr"]):
                result = prometheus.query(selector)["data"]["result"]
                if not (families(selector) & FAULT_FAMILIES):
                    result = [s for s in result if s["metric"].get("instance") == a]
                if not result:
                    missing.append(f"{rule['alert']}: {selector}")
        self.assertEqual(missing, [], "selectors without series")

    def test_prometheus_evaluates_every_rule(self):
        def loaded():
            return {r["name"]: r for g in WORLD["prometheus"].api("rules")["data"]["groups"] for r in g["rules"]}
        self.assertEqual(sorted(loaded()), sorted(r["alert"] for r in rules()))
        try:
            wait_for("every rule's health ok", lambda: all(r["health"] == "ok" for r in loaded().values()), timeout=30)
        except AssertionError:
            pass
        self.assertEqual({n: (r["health"], r.get("lastError", "")) for n, r in loaded().items() if r["health"] != "ok"},
                         {})

    def test_faults_fire_their_alerts_and_the_healthy_proxy_none(self):
        prometheus = WORLD["prometheus"]
        by_instance = {v: k for k, v in WORLD["instances"].items()}

        def alerts():
            found = {}
            for alert in prometheus.api("alerts")["data"]["alerts"]:
                key = (alert["labels"]["alertname"], by_instance.get(alert["labels"].get("instance"), "?"))
                found[key] = alert["state"]
            return found

        def all_there():
            found = alerts()
            ok = all(found.get(key) in states for key, states in EXPECTED_ALERTS.items())
            return found if ok else None
        try:
            found = wait_for("the faults' alerts", all_there, timeout=60)
        except AssertionError:
            found = alerts()
        wrong = {f"{name} for {proxy}": f"{found.get((name, proxy), 'absent')}, expected {' or '.join(sorted(states))}"
                 for (name, proxy), states in EXPECTED_ALERTS.items() if found.get((name, proxy)) not in states}
        self.assertEqual(wrong, {}, "alerts the faults should make")
        self.assertEqual(sorted(k for k in found if k[1] == "A"), [], "alerts for the healthy proxy")
        unexpected = sorted(k for k in found if k not in EXPECTED_ALERTS)
        self.assertEqual(unexpected, [], "alerts nothing here should make")


if __name__ == "__main__":
    run_tests(sys.modules[__name__], "--cluster")
