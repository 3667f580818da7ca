#!/usr/bin/env python3
"""Real producer clients, straight to Apache Kafka 4.4.0 and through produce-proxy
(issue 12, items 1-3).

  /usr/bin/python3 tests/kafka/clients_matrix_test.py --proxy BINARY [unittest args, e.g. -k kcat]
  /usr/bin/python3 tests/kafka/clients_matrix_test.py --print-matrix     # the table of docs/CLIENTS.md

One 1-node KRaft cluster and one produce-proxy in front of it for the whole file.
Every row of MATRIX below is one client configuration with the outcome expected
today straight to Kafka (`direct`) and through the proxy (`proxy`):

- direct: one case against a fresh 3-partition topic. A row expected to fail
  must acknowledge nothing, leave nothing in the log, and report one of the
  listed error texts; a row expected to pass is checked like a proxy case.
- proxy: one case per codec of the row. The first codec's topic is left to
  auto-creation (the client's Metadata asks for it and the proxy passes that
  upstream; franz-go, which does not ask by default, is the exception); the
  others are created with 3 partitions and record i goes to partition i % 3.
  The second codec's case uses acks=1, the rest acks=all (idempotent rows:
  always acks=all, which idempotence needs; with acks=1 Java and franz-go
  silently turn it off and librdkafka refuses to start). A passing case must
  have every record exactly once, per-partition client order, keys, values,
  headers (where the client sends them), timestamps (where it sends them;
  else the proxy's receive time, inside the case's time window), the offsets
  the client was told equal to the log's, the Produce version(s) the row names
  seen by the proxy (its client_requests_total metric), the Metadata
  version(s) too for the clients that negotiate by ApiVersions, and the
  proxy's received/delivered counters up by exactly the record count.

An outcome that changes (a failing row passes, or fails with another text)
fails the test with "update the matrix doc": change the row here and
regenerate docs/CLIENTS.md with --print-matrix (test_doc_matches_matrix
checks the doc against MATRIX). Extending the matrix is one Row(...).
"""

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
import unittest

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "daemon"))

from kafka_cluster import KafkaCluster, api_versions  # noqa: E402
from daemon_support import Proxy, free_port, http_request  # noqa: E402

RUN_CLIENT = os.path.join(REPO, "tests", "clients", "run_client.py")
EXAMPLE_CONFIG = os.path.join(REPO, "config", "produce-proxy.example.toml")
DOC = os.path.join(REPO, "docs", "CLIENTS.md")
COUNT = 200                 # records per case
PARTITIONS = 3              # of every created topic
# run_client's --timestamp-base-ms: an hour before the run. Not the clients'
# fixed default (2023-11-14): Kafka's 7-day time retention deletes such
# records from the log within seconds of their arrival (seen: java-4 acked 200,
# read_topic found the log start offset already at the end). An hour back also
# keeps client timestamps apart from the proxy's receive-time stamps.
TS_BASE = (int(time.time()) - 3600) * 1000
CLIENT_TIMEOUT_S = 30       # run_client --timeout-s (the client's own deadline)
PROXY_BINARY = None         # --proxy


# --------------------------------------------------------------------------
# The matrix: THE place where today's outcomes are written down.

class _Ok:
    def __repr__(self):
        return "OK"


OK = _Ok()


class Fails:
    """Expected to fail; the client's error text contains one of `forms`."""

    def __init__(self, *forms):
        self.forms = forms

    def __repr__(self):
        return "Fails(%s)" % ", ".join(map(repr, self.forms))


KCAT_LEGACY = ("-X", "api.version.request=false", "-X", "broker.version.fallback=%s")
LEGACY_CODECS = ("none", "gzip", "snappy", "lz4")
ALL_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
KCAT_DOWN = ("Broker transport failure", "All broker connections are down")
JAVA_DISCONNECT = "NetworkException: The server disconnected before a response was received."
# Kafka closes the connection on a Produce version it no longer serves. Which
# of these sarama reports first depends on timing: the read that sees the
# close, or a send after sarama has already dropped the broker (seen once in
# a clean-clone CI run, 2026-12-03: every record failed, nothing in the log).
SARAMA_DISCONNECT = ("EOF", "connection reset by peer", "kafka: broker not connected")
KPY_DISCONNECT = "KafkaConnectionError: socket disconnected"


@dataclasses.dataclass(frozen=True)
class Row:
    name: str        # row id; test names derive from it
    client: str      # run_client.py CLIENT, or "kcat"
    library: str     # library and version (doc)
    sends: str       # Produce version / magic it sends (doc)
    produce: tuple   # Produce versions the proxy sees from it (asserted, when it gets that far)
    direct: object   # OK or Fails(...): straight to Kafka 4.4.0
    proxy: object    # OK or Fails(...): through produce-proxy
    codecs: tuple = ("none",)   # tried through the proxy when `proxy` is OK
    extra: tuple = ()           # client-native options (run_client --extra k=v; kcat argv)
    notes: str = ""
    idempotent: bool = False    # through the proxy: must take a producer id from it (InitProducerId)
    metadata: tuple = None      # Metadata versions the proxy sees from it (asserted; None: not recorded)


MATRIX = [
    Row("kcat-0.8.2.2", "kcat", "kcat 1.7.1 on librdkafka 2.0.2, `broker.version.fallback=0.8.2.2`",
        "v0 / magic 0", (0,), Fails(*KCAT_DOWN), OK, LEGACY_CODECS,
        tuple(a % "0.8.2.2" if "%" in a else a for a in KCAT_LEGACY),
        "`api.version.request=false`; no timestamps (the proxy stamps its receive time); "
        "offsets are not checked (kcat does not print them)"),
    Row("kcat-0.9.0.1", "kcat", "kcat 1.7.1 on librdkafka 2.0.2, `broker.version.fallback=0.9.0.1`",
        "v1 / magic 0", (1,), Fails(*KCAT_DOWN), OK, LEGACY_CODECS,
        tuple(a % "0.9.0.1" if "%" in a else a for a in KCAT_LEGACY),
        "as above"),
    Row("java-0.9", "java-0.9", "kafka-clients 0.9.0.1", "v1 / magic 0", (1,),
        Fails(JAVA_DISCONNECT), OK, LEGACY_CODECS, (),
        "no timestamps (the proxy stamps its receive time); zstd unknown to the client"),
    Row("java-0.10", "java-0.10", "kafka-clients 0.10.2.2", "v2 / magic 1", (2,),
        Fails(JAVA_DISCONNECT, "InvalidRequestException"), OK, LEGACY_CODECS, (),
        "zstd unknown to the client"),
    Row("sarama-0.8.2", "sarama-0.8.2", "IBM/sarama v1.61.1, `Version=0.8.2.0`", "v0 / magic 0", (0,),
        Fails(*SARAMA_DISCONNECT), OK, ("none", "gzip", "snappy"), (),
        "sarama refuses lz4 and zstd at this version; no timestamps"),
    Row("sarama-0.10.0", "sarama-0.10.0", "IBM/sarama v1.61.1, `Version=0.10.0.0`", "v2 / magic 1", (2,),
        Fails(*SARAMA_DISCONNECT), OK, LEGACY_CODECS, (),
        "sarama refuses zstd below 2.1"),
    Row("kafka-python-0.9", "kafka-python-0.9", "kafka-python 2.0.2, `api_version=(0,9)`", "v1 / magic 0", (1,),
        Fails(KPY_DISCONNECT), OK, LEGACY_CODECS, (),
        "no timestamps; zstd refused by the client below 2.1"),
    Row("kafka-python-0.10", "kafka-python-0.10", "kafka-python 2.0.2, `api_version=(0,10)`", "v2 / magic 1", (2,),
        Fails(KPY_DISCONNECT), OK, LEGACY_CODECS, (),
        "zstd refused by the client below 2.1"),
    Row("kafka-python-0.11", "kafka-python-0.11", "kafka-python 2.0.2, `api_version=(0,11)`", "v3 / magic 2", (3,),
        OK, OK, ("none", "lz4"), (),
        "headers; zstd refused by the client below 2.1"),
    Row("kafka-python", "kafka-python", "kafka-python 2.0.2, `api_version` probed", "v7 / magic 2", (7,),
        OK, OK, ("none", "zstd"), (), "headers"),
    Row("sarama", "sarama", "IBM/sarama v1.61.1, default `Version` (2.8.0.0)", "v9 / magic 2", (9,),
        OK, OK, ("none", "zstd"), (), "headers; not idempotent"),
    Row("franz-go", "franz-go", "twmb/franz-go v1.22.3 (kgo), defaults", "v13 / magic 2 (idempotent)", (13,),
        OK, OK, ("none", "zstd"), (),
        "idempotent both ways: through the proxy with a producer id the proxy hands out; topics by id (Produce "
        "v13) with the cluster's ids", True, metadata=(13,)),
    Row("confluent", "confluent", "confluent-kafka 1.7.0 on librdkafka 2.0.2, defaults", "v7 / magic 2", (7,),
        OK, OK, ("none", "zstd"), (), "headers; not idempotent"),
    Row("confluent-idempotent", "confluent-idempotent", "confluent-kafka 1.7.0 on librdkafka 2.0.2, "
        "`enable.idempotence=true`", "v7 / magic 2 (idempotent)", (7,),
        OK, OK, ("none", "zstd"), (),
        "headers; the proxy hands out the producer id and deduplicates retries", True),
    Row("kcat-idempotent", "kcat", "kcat 1.7.1 on librdkafka 2.0.2, `enable.idempotence=true`",
        "v7 / magic 2 (idempotent)", (7,), OK, OK, ("none", "zstd"), ("-X", "enable.idempotence=true"),
        "offsets are not checked (kcat does not print them)", True),
    Row("java-4", "java-4", "kafka-clients 4.4.0, defaults (idempotent, acks=all)", "v13 / magic 2 (idempotent)",
        (13,), OK, OK, ("none", "zstd"), (),
        "headers; topics by id (Produce v13, KIP-516) with the cluster's ids, which the proxy hands out in "
        "Metadata v13", True, metadata=(13,)),
    Row("java-4-no-idempotence", "java-4", "kafka-clients 4.4.0, `enable.idempotence=false`", "v13 / magic 2",
        (13,), OK, OK, ("none", "zstd"), ("enable.idempotence=false",),
        "topics by id, as above", metadata=(13,)),
    # Only the idempotent kafkajs: the plain one retries a whole Produce
    # request when one partition fails and so writes the others again
    # (tests/clients/README.md), which no "passes" cell can promise.
    Row("kafkajs-idempotent", "kafkajs-idempotent", "kafkajs 2.2.4 (npm), `idempotent: true`",
        "v7 / magic 2 (idempotent)", (7,), OK, OK, ("none", "gzip"), (),
        "headers; InitProducerId v1; the proxy hands out the producer id; gzip is kafkajs' only built-in codec "
        "(snappy, lz4, zstd are separate packages)", True, metadata=(6,)),
]


# The idempotent rows (java-4, confluent-idempotent, kcat-idempotent,
# franz-go, kafkajs-idempotent) pass through the proxy because its ApiVersions answer lists
# InitProducerId (API key 22, issue 16). The day it does not,
# test_proxy_api_versions fails with "update the matrix doc".
PROXY_ADVERTISES_INIT_PRODUCER_ID = True
INIT_PRODUCER_ID = 22


def render_table():
    """The Markdown table of docs/CLIENTS.md, from MATRIX."""
    def outcome(o, row, target):
        if o is OK:
            if target == "proxy":
                return "passes (%s)" % ", ".join(row.codecs)
            return "passes"
        return "fails: " + " or ".join("`%s`" % f for f in o.forms)
    def negotiated(row):
        versions = lambda vs: "/".join("v%d" % v for v in vs)
        if row.metadata is None:
            return "Produce %s" % versions(row.produce)
        return "Produce %s, Metadata %s" % (versions(row.produce), versions(row.metadata))
    lines = ["| row | client, version | Produce / magic sent | straight to Kafka 4.4.0 | through produce-proxy "
             "| negotiated through the proxy | notes |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in MATRIX:
        lines.append("| `%s` | %s | %s | %s | %s | %s | %s |" % (
            r.name, r.library, r.sends, outcome(r.direct, r, "direct"), outcome(r.proxy, r, "proxy"),
            negotiated(r), r.notes))
    return "\n".join(lines) + "\n"


DOC_BEGIN = "<!-- matrix:begin (generated by tests/kafka/clients_matrix_test.py --print-matrix) -->\n"
DOC_END = "<!-- matrix:end -->\n"


# --------------------------------------------------------------------------
# Running one client

def key(i):
    return "k-%d" % i


def value(i):
    v = "v-%d-" % i
    return v + "x" * max(0, 32 - len(v))


@dataclasses.dataclass
class Run:
    results: list        # [{"i","partition","offset","error"}] by i
    summary: dict        # run_client's summary (kcat: a synthesized one)
    stderr: str
    t0_ms: int           # wall clock before the client started
    t1_ms: int           # and after it ended
    seconds: float


def run_client(row, bootstrap, topic, codec, acks, partitions):
    t0 = int(time.time() * 1000)
    m0 = time.monotonic()
    if row.client == "kcat":
        cmd = ["kcat", "-P", "-b", bootstrap, "-t", topic, "-K:", "-z", codec, "-X", "acks=%s" % acks,
               "-X", "message.timeout.ms=%d" % (CLIENT_TIMEOUT_S * 700)] + list(row.extra)
        data = "".join("%s:%s\n" % (key(i), value(i)) for i in range(COUNT))
        p = subprocess.run(["timeout", "-k", "5", str(CLIENT_TIMEOUT_S + 15)] + cmd, input=data, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        ok = p.returncode == 0
        err = None if ok else (p.stderr.strip().splitlines() or ["kcat exit %d" % p.returncode])[-1]
        results = [{"i": i, "partition": -1, "offset": -1, "error": err} for i in range(COUNT)]
        summary = {"done": True, "acked": COUNT if ok else 0, "failed": 0 if ok else COUNT, "client": "kcat",
                   "first_error": err, "headers_sent": False, "timestamps_sent": False, "exit": p.returncode,
                   "offsets_reported": False}
        stderr = p.stderr
    else:
        cmd = [sys.executable, RUN_CLIENT, row.client, "--bootstrap", bootstrap, "--topic", topic,
               "--count", str(COUNT), "--compression", codec, "--acks", acks, "--headers",
               "--timeout-s", str(CLIENT_TIMEOUT_S), "--timestamp-base-ms", str(TS_BASE)]
        if partitions:
            cmd += ["--partitions", str(partitions)]
        for kv in row.extra:
            cmd += ["--extra", kv]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=CLIENT_TIMEOUT_S + 60)
        lines = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
        if not lines or not lines[-1].get("done"):
            raise AssertionError("run_client.py %s gave no summary (exit %d): %s" % (
                row.client, p.returncode, p.stderr[-2000:]))
        results, summary = lines[:-1], lines[-1]
        summary["offsets_reported"] = acks != "0"
        stderr = p.stderr
    return Run(results, summary, stderr, t0, int(time.time() * 1000) + 1, time.monotonic() - m0)


# --------------------------------------------------------------------------
# The test case (methods are generated from MATRIX below)

class ClientsMatrix(unittest.TestCase):
    maxDiff = 4000

    @classmethod
    def setUpClass(cls):
        if not PROXY_BINARY:
            raise unittest.SkipTest("--proxy BINARY is required")  # main() refuses to run without it
        cls.kafka = KafkaCluster(nodes=1)
        cls.kafka.start()
        try:
            cls.start_proxy(cls.kafka.bootstrap)
        except BaseException:
            cls.kafka.stop()
            raise
        cls.create_topics()
        cls.t_start = time.monotonic()
        print("\nKafka %s (up in %.1f s), produce-proxy %s at %s" % (
            cls.kafka.bootstrap, cls.kafka.startup_seconds, PROXY_BINARY, cls.proxy_bootstrap), file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        rc = cls.proxy.stop(timeout=60)
        text = cls.proxy.text()
        cls.kafka.stop()
        print("clients matrix: %.1f s of cases" % (time.monotonic() - cls.t_start), file=sys.stderr)
        keep = os.environ.get("PP_MATRIX_PROXY_LOG")
        if keep:
            with open(keep, "w") as f:
                f.write(text)
        if rc != 0 or "AddressSanitizer" in text or "runtime error:" in text:
            raise AssertionError("produce-proxy exited %r at the end; log tail:\n%s" % (rc, text[-6000:]))

    # ---- helpers

    @classmethod
    def start_proxy(cls, upstream):
        """Starts cls.proxy from EXAMPLE_CONFIG in front of `upstream` (its
        bootstrap), debug log, on two free loopback ports, and sets
        listen_port, metrics_port and proxy_bootstrap. If it is not ready
        within 60 s: stops it and raises AssertionError with its log's tail
        (the upstream is the caller's to stop)."""
        cls.listen_port, cls.metrics_port = free_port(), free_port()
        while cls.metrics_port == cls.listen_port:
            cls.metrics_port = free_port()
        cls.proxy = Proxy(PROXY_BINARY, config_path=EXAMPLE_CONFIG, sets=[
            'upstream.bootstrap_servers=["%s"]' % upstream,
            'listener.address="127.0.0.1:%d"' % cls.listen_port,
            'metrics.address="127.0.0.1:%d"' % cls.metrics_port,
            'log.level="debug"',
        ])
        if not cls.proxy.wait_ready(timeout=60):
            text = cls.proxy.text()
            cls.proxy.stop()
            raise AssertionError("produce-proxy not ready:\n" + text[-4000:])
        cls.proxy_bootstrap = "127.0.0.1:%d" % cls.listen_port

    @classmethod
    def create_topics(cls):
        """Every 3-partition topic of the file, in one CreateTopics (librdkafka's
        admin client: one JVM per create_topic would cost ~1.5 s a case), then
        wait with the harness until the broker serves each with a leader."""
        from confluent_kafka.admin import AdminClient, NewTopic
        names = [topic_name(row, target, codec) for row, target, codec, auto in CASES if not auto]
        admin = AdminClient({"bootstrap.servers": cls.kafka.bootstrap})
        for name, fut in admin.create_topics([NewTopic(n, PARTITIONS, 1) for n in names],
                                             request_timeout=60).items():
            fut.result(timeout=60)
        for n in names:
            cls.kafka.wait_until("topic %s served" % n, lambda n=n: len(cls.kafka.describe(n)) == PARTITIONS and all(
                p.leader >= 0 for p in cls.kafka.describe(n).values()), timeout=60)

    def metrics(self):
        status, body = http_request(self.metrics_port, "/metrics", timeout=10)
        self.assertEqual(status, 200)
        produce, metadata, counters = {}, {}, {}
        for line in body.splitlines():
            for api, seen in (("Produce", produce), ("Metadata", metadata)):
                if line.startswith("produce_proxy_client_requests_total{") and 'api="%s"' % api in line:
                    v = line.split('version="', 1)[1].split('"', 1)[0]
                    seen[v] = float(line.rsplit(" ", 1)[1])
            if line.startswith("produce_proxy_client_requests_total{") and 'api="InitProducerId"' in line:
                counters["init_producer_id"] = counters.get("init_producer_id", 0) + float(line.rsplit(" ", 1)[1])
            for name in ("produce_proxy_records_received_total", "produce_proxy_records_delivered_total"):
                if line.startswith(name + " "):
                    counters[name] = float(line.rsplit(" ", 1)[1])
        return produce, metadata, counters

    def evidence(self, run, extra=""):
        out = ["client summary: %s" % json.dumps(run.summary),
               "client stderr (tail):\n" + run.stderr[-3000:]]
        if extra:
            out.append(extra)
        out.append("proxy log (tail):\n" + self.proxy.text()[-5000:])
        return "\n".join(out)

    def read_log(self, topic):
        records = self.kafka.read_topic(topic)
        return {p: list(rs) for p, rs in records.items()}

    def assert_expected_failure(self, row, target, expected, run, log):
        """`expected` is a Fails: nothing acked, nothing in the log, a known error text."""
        s = run.summary
        where = "straight to Kafka 4.4.0" if target == "direct" else "through produce-proxy"
        if s["acked"] == COUNT:
            self.fail("%s now PASSES %s (%d/%d acked): update the matrix doc (MATRIX in %s and "
                      "docs/CLIENTS.md via --print-matrix)" % (row.name, where, COUNT, COUNT, __file__))
        self.assertEqual(s["acked"], 0, "%s %s: expected to fail, but %d records were acked\n%s" % (
            row.name, where, s["acked"], self.evidence(run)))
        self.assertTrue(all(r["error"] for r in run.results))
        in_log = sum(len(rs) for rs in log.values())
        self.assertEqual(in_log, 0, "%s %s: the client failed but %d records are in the log" % (
            row.name, where, in_log))
        text = "%s\n%s" % (s.get("first_error") or "", run.stderr if row.client == "kcat" else "")
        if not any(f in text for f in expected.forms):
            self.fail("%s %s fails with another error than recorded (%r): %r. If this is the new "
                      "normal, update the matrix doc (MATRIX and docs/CLIENTS.md)\n%s" % (
                          row.name, where, expected.forms, s.get("first_error"), self.evidence(run)))

    def assert_delivered(self, row, run, log, partitions, acks):
        """Every record exactly once, in client order per partition, intact, at the offsets the client was told."""
        s = run.summary
        if s["acked"] != COUNT:
            self.fail("%s: %d/%d acked, first error %r\n%s" % (row.name, s["acked"], COUNT, s.get("first_error"),
                                                              self.evidence(run)))
        if partitions:
            self.assertEqual(sorted(log), list(range(partitions)), "partitions of the topic")
        where = {}  # i -> (partition, offset)
        problems = []
        for p, recs in sorted(log.items()):
            last_i = -1
            for r in recs:
                k = r.key.decode() if r.key is not None else None
                if not k or not k.startswith("k-") or not k[2:].isdigit():
                    problems.append("p%d@%d: unexpected key %r" % (p, r.offset, r.key))
                    continue
                i = int(k[2:])
                if i in where:
                    problems.append("duplicate k-%d at p%d@%d and p%d@%d" % (i, *where[i], p, r.offset))
                where[i] = (p, r.offset)
                if i <= last_i:
                    problems.append("p%d@%d: k-%d after k-%d (client order broken)" % (p, r.offset, i, last_i))
                last_i = i
                if partitions and row.client != "kcat" and p != i % partitions:
                    problems.append("k-%d in partition %d, sent to %d" % (i, p, i % partitions))
                if r.value != value(i).encode():
                    problems.append("k-%d: value %r" % (i, r.value))
                want_headers = [("i", str(i).encode()), ("client", row.client.encode())] if s["headers_sent"] else []
                if r.headers != want_headers:
                    problems.append("k-%d: headers %r, want %r" % (i, r.headers, want_headers))
                if r.timestamp_type != "CreateTime":
                    problems.append("k-%d: timestamp type %s" % (i, r.timestamp_type))
                if s["timestamps_sent"]:
                    if r.timestamp != TS_BASE + i:
                        problems.append("k-%d: timestamp %d, the client sent %d" % (i, r.timestamp, TS_BASE + i))
                elif not run.t0_ms <= r.timestamp <= run.t1_ms:
                    problems.append("k-%d: timestamp %d outside the case's window [%d, %d] (the proxy's receive "
                                    "time is expected)" % (i, r.timestamp, run.t0_ms, run.t1_ms))
        missing = [i for i in range(COUNT) if i not in where]
        if missing:
            problems.append("%d records missing from the log, e.g. %s" % (len(missing), missing[:10]))
        if s.get("offsets_reported") and acks != "0":
            for res in run.results:
                got = (res["partition"], res["offset"])
                if res["i"] in where and got != where[res["i"]]:
                    problems.append("k-%d: the client was told p%d@%d, the log has it at p%d@%d" % (
                        res["i"], *got, *where[res["i"]]))
        if problems:
            self.fail("%s: %d problems in the log (%d records read):\n  %s\n%s" % (
                row.name, len(problems), sum(len(r) for r in log.values()), "\n  ".join(problems[:30]),
                self.evidence(run)))

    # ---- the two kinds of case

    def run_direct(self, row):
        topic = topic_name(row, "direct", "none")
        run = run_client(row, self.kafka.bootstrap, topic, "none", "all", PARTITIONS)
        log = self.read_log(topic)
        print("  direct %-22s %3d/%d acked in %.1f s" % (row.name, run.summary["acked"], COUNT, run.seconds),
              file=sys.stderr)
        if row.direct is OK:
            self.assert_delivered(row, run, log, PARTITIONS, "all")
        else:
            self.assert_expected_failure(row, "direct", row.direct, run, log)

    def run_proxy(self, row, codec, index):
        auto = proxy_auto_created(row, index)
        acks = "1" if index == 1 and not row.idempotent else "all"
        topic = topic_name(row, "proxy", codec)
        partitions = None if auto else PARTITIONS
        produce0, metadata0, c0 = self.metrics()
        run = run_client(row, self.proxy_bootstrap, topic, codec, acks, partitions)
        produce1, metadata1, c1 = self.metrics()
        self.assertTrue(self.proxy.alive(), "produce-proxy died during %s/%s\n%s" % (
            row.name, codec, self.evidence(run)))
        log = self.read_log(topic) if (row.proxy is OK or not auto) else {}
        print("  proxy  %-22s %-6s acks=%-3s %s %3d/%d acked in %.1f s" % (
            row.name, codec, acks, "auto-created" if auto else "3 partitions", run.summary["acked"], COUNT,
            run.seconds), file=sys.stderr)
        if row.proxy is not OK:
            self.assert_expected_failure(row, "proxy", row.proxy, run, log)
            return
        self.assert_delivered(row, run, log, None if auto else PARTITIONS, acks)
        if auto:
            self.assertEqual(sorted(log), [0], "an auto-created topic has the broker's num.partitions=1")
        seen = sorted(int(v) for v in produce1 if v.isdigit() and produce1[v] > produce0.get(v, 0))
        seen_metadata = sorted(int(v) for v in metadata1 if v.isdigit() and metadata1[v] > metadata0.get(v, 0))
        print("  proxy  %-22s %-6s negotiated Produce %s, Metadata %s" % (
            row.name, codec, seen, seen_metadata), file=sys.stderr)
        self.assertEqual(seen, sorted(row.produce), "Produce versions the proxy saw from %s" % row.name)
        if row.metadata is not None:
            self.assertEqual(seen_metadata, sorted(row.metadata), "Metadata versions the proxy saw from %s: update "
                             "the matrix doc if this is the new normal" % row.name)
        for name in ("produce_proxy_records_received_total", "produce_proxy_records_delivered_total"):
            self.assertEqual(c1.get(name, 0) - c0.get(name, 0), COUNT, "%s for %s/%s" % (name, row.name, codec))
        took_id = c1.get("init_producer_id", 0) > c0.get("init_producer_id", 0)
        self.assertEqual(took_id, row.idempotent, "%s/%s %s a producer id from the proxy" % (
            row.name, codec, "took" if took_id else "did not take"))

    def test_proxy_api_versions(self):
        av = api_versions("127.0.0.1", self.listen_port)
        self.assertIn(0, av, "the proxy advertises Produce")
        self.assertEqual(av[0][0], 0, "the proxy serves Produce from v0")
        if (INIT_PRODUCER_ID in av) != PROXY_ADVERTISES_INIT_PRODUCER_ID:
            self.fail("the proxy %s InitProducerId now (%r): the idempotent rows (java-4, confluent-idempotent, "
                      "franz-go) will change; update the matrix doc (MATRIX, PROXY_ADVERTISES_INIT_PRODUCER_ID, "
                      "docs/CLIENTS.md)" % ("advertises" if INIT_PRODUCER_ID in av else "no longer advertises",
                                            av.get(INIT_PRODUCER_ID)))
        print("  proxy advertises Produce v%d-v%d, InitProducerId %s" % (
            av[0][0], av[0][1], av.get(INIT_PRODUCER_ID, "absent")), file=sys.stderr)
        # Kafka 4.4.0 serves Produce v13, so the proxy offers topic ids (and
        # the Java 4.x rows name their topics by id).
        self.assertEqual(av[0][1], 13, "the proxy's highest Produce version in front of Kafka 4.4.0")

    def test_doc_matches_matrix(self):
        with open(DOC) as f:
            doc = f.read()
        self.assertIn(DOC_BEGIN, doc)
        section = doc.split(DOC_BEGIN, 1)[1].split(DOC_END, 1)[0]
        self.assertEqual(section, render_table(),
                         "docs/CLIENTS.md does not show MATRIX: update the matrix doc "
                         "(paste the output of clients_matrix_test.py --print-matrix)")


def _ident(s):
    return "".join(c if c.isalnum() else "_" for c in s)


def topic_name(row, target, codec):
    return "%s-%s-%s" % (target, row.name, codec)


def proxy_auto_created(row, index):
    # franz-go asks for no auto-creation by default (kgo.AllowAutoTopicCreation
    # is opt-in), and the proxy passes a client's allow_auto_topic_creation on
    # as it is (issue 14): its topics are created first, as against Kafka.
    return row.proxy is OK and index == 0 and not row.name.startswith("franz-go")


# (row, "direct"|"proxy", codec, auto-created?) for every case of the file
CASES = []


def _add_cases():
    names = set()
    for row in MATRIX:
        assert row.name not in names, "duplicate row " + row.name
        names.add(row.name)

        def direct(self, row=row):
            self.run_direct(row)
        setattr(ClientsMatrix, "test_direct_%s" % _ident(row.name), direct)
        CASES.append((row, "direct", "none", False))
        codecs = row.codecs if row.proxy is OK else row.codecs[:1]
        for index, codec in enumerate(codecs):
            CASES.append((row, "proxy", codec, proxy_auto_created(row, index)))
            def proxy(self, row=row, codec=codec, index=index):
                self.run_proxy(row, codec, index)
            setattr(ClientsMatrix, "test_proxy_%s_%s" % (_ident(row.name), codec), proxy)


_add_cases()


def main():
    global PROXY_BINARY
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--proxy")
    ap.add_argument("--print-matrix", action="store_true")
    a, rest = ap.parse_known_args()
    if a.print_matrix:
        sys.stdout.write(render_table())
        return
    if not a.proxy or not os.access(a.proxy, os.X_OK):
        sys.exit("clients_matrix_test.py: --proxy BINARY (an executable produce-proxy) is required")
    if not shutil.which("kcat"):
        sys.exit("clients_matrix_test.py: kcat not found; run scripts/setup.sh")
    PROXY_BINARY = os.path.abspath(a.proxy)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
