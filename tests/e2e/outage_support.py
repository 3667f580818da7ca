#!/usr/bin/python3
"""Shared pieces of the outage tests of issue 40 ("never hold a client past its
deadline"): paced producer clients in their own processes, the test cluster
going dark while they run, and the upstream log read back to count each
client's duplicates and lost acknowledged records.

  tests/e2e/outage_deadline_test.py          the test cluster (label e2e)
  tests/e2e/slow_upstream_deadline_test.py   a slow upstream, no outage (e2e)
  tests/kafka/outage_deadline_test.py        real Kafka 4.4.0 (label kafka)
  tests/bench/outage_duplicates.py           duplicates per 100,000 records

A client is a process of tests/e2e/client_runner.py (ClientProc: so four
clients really run at once, each with its own GIL and librdkafka): it offers
`rate` records/s for `duration` s, then waits (bounded) for every delivery
report and writes its results. Record i has key "<name>-<i>", a value unique
to it ("<name>-<i>-" padded) and goes to partition i % partitions, so the log
read back tells duplicates and losses per record.

PP_OUTAGE_KEEP=DIR keeps, for a post-mortem, each proxy's log and each client's
per-record outcome with the log's count of every key.

Stdlib, Debian's python3-confluent-kafka and python3-kafka only. Every wait is
bounded in time; everything binds to 127.0.0.1.
"""
import collections
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "daemon"))
from daemon_support import Proxy, TestCluster, free_port, http_request  # noqa: E402,F401
from client_runner import ClientProcess  # noqa: E402

PYTHON = "/usr/bin/python3"
RUN_CLIENT = os.path.join(REPO, "tests", "clients", "run_client.py")

# librdkafka settings of the first measurement, and of its legacy mode.
SHORT_TIMEOUTS = {"request.timeout.ms": 5000, "socket.timeout.ms": 10000, "message.timeout.ms": 120000}
DEFAULT_TIMEOUTS = {}  # librdkafka 2.0.2: request 30 s, socket 60 s, message 300 s
LEGACY = {"api.version.request": False, "broker.version.fallback": "0.9.0.1"}  # Produce v1, magic 0
IDEMPOTENT = {"enable.idempotence": True}

DEADLINE_METRIC = "produce_proxy_client_deadline_records_total"
DEADLINE_ANSWERS = "produce_proxy_client_deadline_answers_total"


def say(fmt, *args):
    sys.stderr.write("  " + (fmt % args if args else fmt) + "\n")
    sys.stderr.flush()


# ---------------------------------------------------------------------------
# The client processes (tests/e2e/client_runner.py)


class ClientProc(ClientProcess):
    """One paced client process (client_runner.py). spec: name, kind
    ("confluent" | "kafka-python"), bootstrap, topic, partitions, rate,
    duration (s of sending), conf (librdkafka properties or KafkaProducer
    keywords), flush_s (bound on the wait for the last delivery reports).
    Values are 48 bytes; wait_ready(timeout) says whether it got ready."""

    DEFAULTS = {"client_id": "pp-outage-", "value_bytes": 48, "metadata_s": 30}
    CONF = {"confluent": {"linger.ms": 5, "queue.buffering.max.kbytes": 1048576}}


class JavaChunks(threading.Thread):
    """A client of tests/clients/run_client.py (which sends its --count records
    at once) paced by starting one run of `chunk` records every `every` s, each
    with its own --key-prefix "<name>c<n>", so every key stays unique. Used for
    kafka-clients 0.10.2 (java-0.10), whose JVM cannot be paced otherwise."""

    def __init__(self, client, name, bootstrap, topic, partitions, chunk, every, duration, timeout_s, extra=()):
        super().__init__(daemon=True)
        self.args = (client, name, bootstrap, topic, partitions, chunk, every, duration, timeout_s, list(extra))
        self.name_ = name
        self.results = []       # (prefix, per-record lines, summary)
        self.errors = []
        self.lock = threading.Lock()

    def run(self):
        client, name, bootstrap, topic, partitions, chunk, every, duration, timeout_s, extra = self.args
        threads, start, n = [], time.monotonic(), 0
        while time.monotonic() - start < duration:
            prefix = "%sc%d" % (name, n)
            t = threading.Thread(target=self._one, args=(client, prefix, bootstrap, topic, partitions, chunk,
                                                         timeout_s, extra), daemon=True)
            t.start()
            threads.append(t)
            n += 1
            time.sleep(max(0.0, start + n * every - time.monotonic()))
        for t in threads:
            t.join(timeout_s + 60)

    def _one(self, client, prefix, bootstrap, topic, partitions, chunk, timeout_s, extra):
        cmd = [PYTHON, RUN_CLIENT, client, "--bootstrap", bootstrap, "--topic", topic, "--count", str(chunk),
               "--partitions", str(partitions), "--acks", "all", "--key-prefix", prefix, "--timeout-s", str(timeout_s),
               # now, not run_client's 2023 default: Kafka rolls and deletes by time a segment of
               # records that old (7-day retention), taking the first chunks out of the log
               "--timestamp-base-ms", str(int(time.time() * 1000))]
        for kv in extra:
            cmd += ["--extra", kv]
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout_s + 45)
            lines = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
        except (subprocess.TimeoutExpired, ValueError) as e:
            with self.lock:
                self.errors.append("%s: %s" % (prefix, e))
            return
        with self.lock:
            if not lines or not lines[-1].get("done"):
                self.errors.append("%s: no summary: %s" % (prefix, p.stderr[-500:]))
            else:
                self.results.append((prefix, lines[:-1], lines[-1]))

    def outcome(self):
        """{key: 1 | error text} of every record of every chunk, and the chunk errors."""
        out = {}
        keep = os.environ.get("PP_OUTAGE_KEEP")
        if keep:
            os.makedirs(keep, exist_ok=True)
            with self.lock, open(os.path.join(keep, "%s-chunks-%d.json" % (self.name_, os.getpid())), "w") as f:
                json.dump({"results": self.results, "errors": self.errors}, f)
        with self.lock:
            for prefix, recs, _ in self.results:
                for r in recs:
                    out["%s-%d" % (prefix, r["i"])] = 1 if r["error"] is None else r["error"]
            return out, list(self.errors)


# ---------------------------------------------------------------------------
# Reading back and counting


def read_keys(bootstrap, topic, timeout=120):
    """Counter of keys in the upstream log of `topic`, read to its end with kcat."""
    out = subprocess.run(["timeout", str(timeout), "kcat", "-C", "-q", "-b", bootstrap, "-t", topic, "-o",
                          "beginning", "-e", "-f", "%k\n", "-X", "fetch.message.max.bytes=1048576"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        raise AssertionError("kcat -C %s exited %d: %s" % (topic, out.returncode, out.stderr[-2000:]))
    return collections.Counter(l for l in out.stdout.splitlines() if l)


def count(name, via, outcome, log_keys):
    """One table row: outcome is {key: 1 | error}; log_keys a Counter of the
    client's topic. Returns a dict of the numbers."""
    sent = len(outcome)
    acked = sum(1 for v in outcome.values() if v == 1)
    unreported = sum(1 for v in outcome.values() if v == 0)
    failed = sent - acked - unreported
    in_log = sum(1 for k in outcome if log_keys.get(k, 0) > 0)
    dups = sum(c - 1 for k, c in log_keys.items() if c > 1)
    strangers = sum(c for k, c in log_keys.items() if k not in outcome)
    lost = [k for k, v in outcome.items() if v == 1 and log_keys.get(k, 0) == 0]
    errors = collections.Counter(v for v in outcome.values() if v not in (0, 1))
    keep = os.environ.get("PP_OUTAGE_KEEP")
    if keep:  # for a post-mortem: every record's outcome and how often the log has it
        os.makedirs(keep, exist_ok=True)
        with open(os.path.join(keep, "%s-%s-%d.json" % (name, via, os.getpid())), "w") as f:
            json.dump({"outcome": outcome, "log": dict(log_keys)}, f)
    return {"client": name, "via": via, "sent": sent, "acked": acked, "failed": failed, "unreported": unreported,
            "in_log": in_log, "log_rows": sum(log_keys.values()), "duplicates": dups, "strangers": strangers,
            "lost_acked": len(lost), "lost_examples": lost[:5], "errors": dict(errors.most_common(4)),
            "per_100k": (100000.0 * dups / sent) if sent else 0.0}


def outcome_of(result):
    name = result["name"]
    return {"%s-%d" % (name, i): s for i, s in enumerate(result["status"])}


def table(rows, extra=""):
    head = ("client", "via", "sent", "acked", "failed", "no report", "in log", "log rows", "duplicates",
            "dup/100k", "lost acked")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        lines.append("| %s | %s | %d | %d | %d | %d | %d | %d | %d | %.0f | %d |" % (
            r["client"], r["via"], r["sent"], r["acked"], r["failed"], r["unreported"], r["in_log"], r["log_rows"],
            r["duplicates"], r["per_100k"], r["lost_acked"]))
    text = "\n".join(lines)
    errs = ["%s: %s" % (r["client"], r["errors"]) for r in rows if r["errors"]]
    if errs:
        text += "\nclient errors: " + "; ".join(errs)
    return text + (("\n" + extra) if extra else "")


def deadline_metrics(metrics_port):
    """{(metric, outcome): value} of the issue-40 metrics (empty before the fix)."""
    try:
        status, body = http_request(metrics_port, "/metrics", timeout=10)
    except OSError:
        return {}
    out = {}
    for line in body.splitlines():
        for m in (DEADLINE_METRIC, DEADLINE_ANSWERS):
            if line.startswith(m + "{") or line.startswith(m + " "):
                outcome = line.split('outcome="', 1)[1].split('"', 1)[0] if 'outcome="' in line else ""
                out[(m, outcome)] = out.get((m, outcome), 0) + float(line.rsplit(" ", 1)[1])
    return out


def metric_total(port, name):
    try:
        status, body = http_request(port, "/metrics", timeout=10)
    except OSError:
        return None
    total = None
    for line in body.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            total = (total or 0) + float(line.rsplit(" ", 1)[1])
    return total


# ---------------------------------------------------------------------------
# The proxy


def proxy_config(listen, bootstrap, metrics, level="info", extra=""):
    servers = ",".join('"%s"' % b for b in bootstrap.split(","))
    return """
[listener]
address = "127.0.0.1:%d"
[upstream]
bootstrap_servers = [%s]
[metrics]
address = "127.0.0.1:%d"
[log]
level = "%s"
%s""" % (listen, servers, metrics, level, extra)


def start_proxy(binary, bootstrap, sets=(), level="info"):
    listen, metrics = free_port(), free_port()
    proxy = Proxy(binary, config_text=proxy_config(listen, bootstrap, metrics, level), sets=list(sets))
    if not proxy.wait_ready(timeout=60):
        text = proxy.text()
        proxy.stop()
        raise AssertionError("produce-proxy not ready:\n" + text[-4000:])
    proxy.listen_port, proxy.metrics_port = listen, metrics
    proxy.bootstrap = "127.0.0.1:%d" % listen
    return proxy


def stop_proxy(proxy):
    """Stops the proxy (once; a second call returns the first one's answer)."""
    if getattr(proxy, "stopped", None) is not None:
        return proxy.stopped
    rc = proxy.stop(timeout=60)
    text = proxy.text()
    keep = os.environ.get("PP_OUTAGE_KEEP")
    if keep:
        os.makedirs(keep, exist_ok=True)
        with open(os.path.join(keep, "proxy-%d.log" % proxy.listen_port), "w") as f:
            f.write(text)
    proxy.log.close()
    proxy.dir.cleanup()
    proxy.stopped = (rc, text)
    return proxy.stopped


# ---------------------------------------------------------------------------
# The test-cluster scenario: every broker down for `outage_s`, then up


PARTITIONS = 3

# (name, via, librdkafka properties on top of the timeouts)
CLUSTER_CLIENTS = (
    ("direct", "direct", {}),
    ("proxy", "proxy", {}),
    ("legacy", "proxy", LEGACY),
    ("idempotent", "proxy", IDEMPOTENT),
)


def cluster_outage(proxy_bin, cluster_bin, outage_s, timeouts, rate, warmup_s=5.0, after_s=10.0, flush_s=120.0,
                   clients=CLUSTER_CLIENTS, tag="", brokers=3):
    """Runs the scenario once: test cluster (`brokers` brokers, one topic of
    PARTITIONS per client), one proxy, every client paced at `rate` records/s;
    after warmup_s every broker goes `down`, after outage_s they come back `up`,
    the clients send after_s more, then drain (at most flush_s). Returns
    {"rows": [...], "metrics": {...}, "seconds": {...}, "proxy_rc": rc, "proxy_log": tail}."""
    t0 = time.monotonic()
    tag = tag or "o%d" % outage_s
    topics = {name: "outage-%s-%s" % (tag, name) for name, _, _ in clients}
    args = ["--brokers", str(brokers)]
    for t in topics.values():
        args += ["--topic", "%s:%d" % (t, PARTITIONS)]
    cluster = TestCluster(cluster_bin, *args)
    proxy = procs = None
    workdir = tempfile.TemporaryDirectory(prefix="pp-outage-")
    try:
        proxy = start_proxy(proxy_bin, cluster.bootstrap)
        duration = warmup_s + outage_s + after_s
        procs = []
        for name, via, conf in clients:
            procs.append(ClientProc({
                "name": name, "kind": "confluent", "topic": topics[name], "partitions": PARTITIONS,
                "bootstrap": cluster.bootstrap if via == "direct" else proxy.bootstrap, "rate": rate,
                "duration": duration, "flush_s": flush_s, "conf": {**timeouts, **conf}}, workdir.name))
        for p in procs:
            if not p.wait_ready(60):
                raise AssertionError("client %s not ready: %s" % (p.spec["name"], p.err_tail()))
        t_ready = time.monotonic()
        time.sleep(warmup_s)
        before = deadline_metrics(proxy.metrics_port)
        for b in range(1, brokers + 1):
            cluster.command("down %d" % b)
        t_down = time.monotonic()
        say("%s: every broker down at +%.1f s for %d s", tag, t_down - t0, outage_s)
        time.sleep(outage_s)
        for b in range(1, brokers + 1):
            cluster.command("up %d" % b)
        t_up = time.monotonic()
        results = {p.spec["name"]: p.finish(timeout=after_s + flush_s + 60) for p in procs}
        t_done = time.monotonic()
        metrics = deadline_metrics(proxy.metrics_port)
        delivered = metric_total(proxy.metrics_port, "produce_proxy_records_delivered_total")
        rows = []
        for name, via, _ in clients:
            keys = read_keys(cluster.bootstrap, topics[name])
            rows.append(count(name, via, outcome_of(results[name]), keys))
        rc, text = stop_proxy(proxy)
        proxy = None
        return {"rows": rows, "metrics": metrics, "metrics_before": before, "records_delivered": delivered,
                "proxy_rc": rc, "proxy_log": text[-6000:],
                "seconds": {"total": time.monotonic() - t0, "to_ready": t_ready - t0, "outage": t_up - t_down,
                            "drain_after_up": t_done - t_up}}
    finally:
        for p in procs or ():
            p.kill()
        if proxy is not None:
            stop_proxy(proxy)
        cluster.stop()
        workdir.cleanup()


def in_flight_records(metrics):
    return metrics.get((DEADLINE_METRIC, "in_flight"), 0.0)


def check_outage(test, res, label):
    """The issue's assertions on one cluster_outage result (a unittest.TestCase)."""
    rows = {r["client"]: r for r in res["rows"]}
    in_flight = in_flight_records(res["metrics"])
    direct = rows["direct"]["duplicates"] if "direct" in rows else 0
    bound = direct + in_flight
    problems = []
    for r in res["rows"]:
        if r["lost_acked"]:
            problems.append("%s: %d acknowledged records not in the log, e.g. %s" % (
                r["client"], r["lost_acked"], r["lost_examples"]))
        if r["strangers"]:
            problems.append("%s: %d records in its topic it never sent" % (r["client"], r["strangers"]))
        if r["acked"] == 0:
            problems.append("%s: nothing acknowledged" % r["client"])
        if r["via"] == "proxy":
            if r["client"].startswith("idempotent"):
                # Exactly once: a retry of a batch in flight waits for the
                # original, one withdrawn is not in the log, and a batch ahead
                # of a failed one's retry is refused without a sequence gap
                # (CLIENT_DEDUP.md): librdkafka sees no gap to answer with an
                # epoch bump that would renumber records possibly in the log.
                if r["duplicates"]:
                    problems.append("%s: %d duplicates through the proxy (%d records answered in flight)" % (
                        r["client"], r["duplicates"], in_flight))
            elif r["duplicates"] > bound:
                problems.append("%s: %d duplicates through the proxy > direct baseline %d + %d records in flight "
                                "at the deadline (client_deadline_records_total{outcome=\"in_flight\"})" % (
                                    r["client"], r["duplicates"], direct, in_flight))
    if res["proxy_rc"] not in (0, 1):
        problems.append("produce-proxy exited %r" % res["proxy_rc"])
    test.assertEqual(problems, [], "%s:\n  %s\nproxy log tail:\n%s" % (label, "\n  ".join(problems),
                                                                       res["proxy_log"][-3000:]))


def describe(res, label):
    m = res["metrics"]
    extra = ("deadline answers: withdrawn %s in_flight %s; deadline records: withdrawn %s in_flight %s; "
             "records_delivered_total %s; seconds %s" % (
                 m.get((DEADLINE_ANSWERS, "withdrawn"), "-"), m.get((DEADLINE_ANSWERS, "in_flight"), "-"),
                 m.get((DEADLINE_METRIC, "withdrawn"), "-"), m.get((DEADLINE_METRIC, "in_flight"), "-"),
                 res.get("records_delivered"), {k: round(v, 1) for k, v in res["seconds"].items()}))
    return "%s\n%s" % (label, table(res["rows"], extra))

