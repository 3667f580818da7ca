#!/usr/bin/env python3
"""Issue 40 against a real 3-node Apache Kafka 4.4.0: an outage must not turn
client retries into duplicates through the proxy.

  /usr/bin/python3 tests/kafka/outage_deadline_test.py --proxy BINARY [--full] [unittest args]

One KRaft cluster (3 combined nodes, rf 3, min.insync.replicas=2), a fresh
proxy per case, each client on its own topic of 3 partitions, at once:

  direct       confluent-kafka, non-idempotent, straight to Kafka (the baseline)
  proxy        confluent-kafka, non-idempotent, through the proxy
  legacy       confluent-kafka in legacy mode (Produce v1, magic 0)
  idempotent   confluent-kafka, enable.idempotence=true
  (the confluent clients: request.timeout.ms=5000, socket.timeout.ms=10000,
   message.timeout.ms=120000)
  kpy010       kafka-python 2.0.2, api_version=(0,10) (Produce v2), its default
               timeouts (request_timeout_ms 30 s), retries=5
  java010      kafka-clients 0.10.2.2 (tests/clients java-0.10), its default
               timeouts (request.timeout.ms 30 s), retries=5; paced by starting
               one run_client.py run of 450 records every 3 s

Cases:
1. every broker killed (kill -9) for OUTAGE s, then all restarted on their data;
2. the ISR below min.insync.replicas, so Kafka itself answers
   NOT_ENOUGH_REPLICAS: these topics get min.insync.replicas=3 and one broker
   is stopped (stopping 2 of 3 combined KRaft nodes would also lose the
   controller quorum, and then no ISR ever shrinks), then restarted.

Asserted per client, as in tests/e2e/outage_deadline_test.py: no acknowledged
record lost; the idempotent one has no duplicate; the others at most the direct
baseline's duplicates plus the records the proxy reported in flight at their
deadline (client_deadline_records_total{outcome="in_flight"}).

CI form: 20 s outages (longer in effect: the restarts take 10-40 s), 2.5-3.2
min on 2 cores. --full: 45 s outages (past the 30 s request timeouts of
kafka-python and Java whatever the restarts take).
"""
import argparse
import os
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))

from kafka_cluster import KafkaCluster  # noqa: E402
import outage_support as s  # noqa: E402

ARGS = None
PARTITIONS = 3
RATE = 300            # records/s of each confluent client
KPY_RATE = 200        # kafka-python
JAVA_CHUNK, JAVA_EVERY = 450, 3.0
WARMUP_S, AFTER_S, RECOVERY_ALLOWANCE_S = 5.0, 8.0, 25.0

CONFLUENT = (("direct", "direct", {}), ("proxy", "proxy", {}), ("legacy", "proxy", s.LEGACY),
             ("idempotent", "proxy", s.IDEMPOTENT))


def create_topics(bootstrap, names, configs=None):
    """All at once with kafka-python's admin client (one JVM per topic would take seconds each)."""
    from kafka.admin import KafkaAdminClient, NewTopic
    admin = KafkaAdminClient(bootstrap_servers=bootstrap.split(","), client_id="pp-outage-admin",
                             request_timeout_ms=30000)
    try:
        admin.create_topics([NewTopic(n, PARTITIONS, 3, topic_configs=dict(configs or {})) for n in names],
                            timeout_ms=30000)
    finally:
        admin.close()


class OutageAgainstKafka(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.kafka = KafkaCluster(nodes=3)
        cls.kafka.start()
        s.say("3-node Kafka ready in %.0f s", cls.kafka.startup_seconds)

    @classmethod
    def tearDownClass(cls):
        cls.kafka.stop()

    def wait_leaders(self, topics, full_isr, timeout=60):
        k = self.kafka
        for t in topics:
            k.wait_until("leaders of %s" % t, lambda t=t: all(
                p.leader >= 0 and (not full_isr or len(p.isr) == 3) for p in k.describe(t).values())
                and len(k.describe(t)) == PARTITIONS, timeout)

    def run_case(self, case, fault, recover, topic_configs=None):
        k = self.kafka
        outage = 45 if ARGS.full else 20
        names = [n for n, _, _ in CONFLUENT] + ["kpy010", "java010"]
        topics = {n: "%s-%s" % (case, n) for n in names}
        create_topics(k.bootstrap, topics.values(), topic_configs)
        self.wait_leaders(topics.values(), True)
        proxy = s.start_proxy(ARGS.proxy, k.bootstrap)
        self.addCleanup(s.stop_proxy, proxy)
        workdir = tempfile.TemporaryDirectory(prefix="pp-kafka-outage-")
        self.addCleanup(workdir.cleanup)
        duration = WARMUP_S + outage + RECOVERY_ALLOWANCE_S + AFTER_S
        procs = []
        for name, via, conf in CONFLUENT:
            procs.append(s.ClientProc({
                "name": name, "kind": "confluent", "topic": topics[name], "partitions": PARTITIONS,
                "bootstrap": k.bootstrap if via == "direct" else proxy.bootstrap, "rate": RATE,
                "duration": duration, "flush_s": 150, "conf": {**s.SHORT_TIMEOUTS, **conf}}, workdir.name))
        procs.append(s.ClientProc({
            "name": "kpy010", "kind": "kafka-python", "topic": topics["kpy010"], "partitions": PARTITIONS,
            "bootstrap": proxy.bootstrap, "rate": KPY_RATE, "duration": duration, "flush_s": 150,
            "conf": {"api_version": [0, 10], "retries": 5}}, workdir.name))
        for p in procs:
            self.addCleanup(p.kill)
        # timeout-s 150: run_client then leaves request.timeout.ms at 0.10.2's default 30 s
        java = s.JavaChunks("java-0.10", "java010", proxy.bootstrap, topics["java010"], PARTITIONS, JAVA_CHUNK,
                            JAVA_EVERY, duration, 150, extra=["retries=5"])
        for p in procs:
            self.assertTrue(p.wait_ready(60), "%s: %s" % (p.spec["name"], p.err_tail()))
        java.start()
        t0 = time.monotonic()
        time.sleep(WARMUP_S)
        fault()
        t_fault = time.monotonic()
        s.say("%s: fault at +%.1f s, %d s outage", case, t_fault - t0, outage)
        time.sleep(outage)
        recover()
        t_back = time.monotonic()
        s.say("%s: recovered at +%.1f s (%.1f s after the fault)", case, t_back - t0, t_back - t_fault)
        results = {p.spec["name"]: p.finish(timeout=duration + 200) for p in procs}
        java.join(timeout=300)
        metrics = s.deadline_metrics(proxy.metrics_port)
        rows = []
        for name, via, _ in CONFLUENT:
            rows.append(s.count(name, via, s.outcome_of(results[name]), s.read_keys(k.bootstrap, topics[name])))
        rows.append(s.count("kpy010", "proxy", s.outcome_of(results["kpy010"]), s.read_keys(k.bootstrap,
                                                                                            topics["kpy010"])))
        java_outcome, java_errors = java.outcome()
        rows.append(s.count("java010", "proxy", java_outcome, s.read_keys(k.bootstrap, topics["java010"])))
        rc, text = s.stop_proxy(proxy)
        res = {"rows": rows, "metrics": metrics, "proxy_rc": rc, "proxy_log": text[-6000:],
               "records_delivered": None,
               "seconds": {"total": time.monotonic() - t0, "outage": t_back - t_fault}}
        label = "Kafka 4.4.0, %s" % case
        print("\n" + s.describe(res, label) + ("\njava chunks that failed: %s" % java_errors if java_errors else ""),
              file=sys.stderr)
        self.assertEqual(java_errors, [], "java-0.10 runs without a summary")
        s.check_outage(self, res, label)

    def test_1_all_brokers_stopped(self):
        k = self.kafka

        def fault():
            for b in k.broker_ids:
                k.kill9(b)

        def recover():
            nodes = [k._nodes[b] for b in k.broker_ids]
            for n in nodes:
                k._launch(n)
            deadline = time.monotonic() + 90
            for n in nodes:
                k._wait_ready(n, deadline, expect_brokers=set(k.broker_ids))

        self.run_case("all-down", fault, recover)

    def test_2_isr_below_min_insync_replicas(self):
        k = self.kafka
        victim = k.broker_ids[0]

        def fault():
            k.stop_broker(victim)

        def recover():
            k.restart(victim, timeout=90)

        self.run_case("isr-short", fault, recover, topic_configs={"min.insync.replicas": "3"})


def main():
    global ARGS
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--proxy", required=True)
    ap.add_argument("--full", action="store_true")
    ARGS, rest = ap.parse_known_args()
    unittest.main(module=sys.modules[__name__], argv=[sys.argv[0]] + rest, verbosity=2, warnings="ignore")


if __name__ == "__main__":
    main()
