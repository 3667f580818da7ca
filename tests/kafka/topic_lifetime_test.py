#!/usr/bin/env python3
"""Which topics the proxy follows, against real Apache Kafka 4.4.0 (issue 14).

The built produce-proxy in front of a 1-node cluster with
upstream.max_topics = 3 and upstream.metadata_max_idle_ms = 5000:

1. Names and the cap: a Metadata request for an illegal name is answered
   INVALID_TOPIC_EXCEPTION without asking upstream; with two topics
   followed, one Produce naming two new ones gets the first served and the
   second POLICY_VIOLATION (the cap holds within a request); with three
   followed, a fourth is answered POLICY_VIOLATION in Metadata and in
   Produce, while the three keep working; once two of them have been unused
   for the idle time they are forgotten (a log line says so) and the fourth
   is served.
2. A forgotten topic keeps its sequence: records through the proxy (kcat in
   its 0.9 mode: Produce v1, magic 0), the topic left idle until the proxy
   forgets it and frees its partition's state, then more records. Kafka
   still holds the producer's state for the partition, so a sequence
   restarted at 0 would be OUT_OF_ORDER_SEQUENCE and cost an epoch bump:
   the test asserts no bump happened, and every record is in the log once,
   in order.
3. A topic deleted and created again between two rounds of records: the new
   topic id tells the proxy the log is new and holds no state for its
   producer, so the sequence restarts at 0 under a new epoch (one bump,
   reason topic_recreated) instead of going on. Kafka 4.4.0 would accept a
   continued sequence; Kafka 4.5 (KAFKA-15591) refuses it on a never-written
   partition. The new topic holds the second round once, in order.

usage: topic_lifetime_test.py --proxy BINARY
"""
import argparse
import os
import re
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "daemon"))
from kafka_cluster import KafkaCluster  # noqa: E402
from proxy_under_test import plain_config  # noqa: E402
from daemon_support import Proxy, free_port, http_request, kcat_produce  # noqa: E402
import hostile_wire as wire  # noqa: E402
from auto_create_test import metadata_v7  # noqa: E402

ARGS = None
INVALID_TOPIC_EXCEPTION = 17
POLICY_VIOLATION = 44
IDLE_MS = 5000
KCAT_09 = ("-X", "api.version.request=false", "-X", "broker.version.fallback=0.9.0.1")


def proxy_config(bootstrap, client_port, metrics_port):
    return plain_config(bootstrap, client_port, metrics_port,
                        upstream="max_topics = 3\nmetadata_max_idle_ms = %d" % IDLE_MS)


def produce_error(port, topic):
    """Error code of one Produce v7 of one record to topic-0 through the proxy."""
    batch = wire.record_batch(wire.record_with_empty_headers(0), 1)
    with wire.connect(port, 30) as s:
        s.sendall(wire.produce_v7(1, topic.encode(), batch, acks=-1))
        payload = wire.read_frame(s)
    assert payload is not None, "the proxy closed the connection instead of answering"
    return wire.produce_error_code(payload)


def bumps_other_than_the_first_id(metrics_port):
    """producer_epoch_bumps_total over every reason but the first producer id."""
    status, body = http_request(metrics_port, "/metrics")
    assert status == 200, status
    total = 0.0
    for line in body.splitlines():
        if line.startswith("produce_proxy_producer_epoch_bumps_total{") and 'reason="new_producer_id"' not in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def bumps_by_reason(metrics_port, reason):
    """producer_epoch_bumps_total{reason=REASON}, 0 when absent."""
    status, body = http_request(metrics_port, "/metrics")
    assert status == 200, status
    for line in body.splitlines():
        if line.startswith("produce_proxy_producer_epoch_bumps_total{") and 'reason="%s"' % reason in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def wait_for(predicate, timeout, interval=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


class TopicLifetime(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.kafka = KafkaCluster(nodes=1)
        cls.kafka.start()
        for name in ("a1", "a2", "a3", "a4", "seq", "again"):
            cls.kafka.create_topic(name, partitions=1)

    @classmethod
    def tearDownClass(cls):
        cls.kafka.stop()

    def start_proxy(self):
        client, metrics = free_port(), free_port()
        proxy = Proxy(ARGS.proxy, proxy_config(self.kafka.bootstrap, client, metrics))
        self.addCleanup(proxy.stop, 30)
        self.assertTrue(proxy.wait_ready(60), proxy.text()[-4000:])
        return proxy, client, metrics

    def test_illegal_names_and_the_topic_cap(self):
        proxy, client, _ = self.start_proxy()
        self.assertEqual(metadata_v7(client, "no spaces allowed", False), INVALID_TOPIC_EXCEPTION)
        self.assertEqual(metadata_v7(client, "x" * 250, False), INVALID_TOPIC_EXCEPTION)
        for name in ("a1", "a2"):
            self.assertTrue(wait_for(lambda: metadata_v7(client, name, False) == 0, 30), name)
        # Two new topics in one Produce with room for one: the cap holds
        # within the request, not only across requests.
        batch = wire.record_batch(wire.record_with_empty_headers(0), 1)
        with wire.connect(client, 30) as s:
            s.sendall(wire.produce_v7_topics(1, [b"a3", b"a4"], batch, acks=-1))
            payload = wire.read_frame(s)
        self.assertIsNotNone(payload, "the proxy closed the connection instead of answering")
        self.assertEqual(wire.produce_error_codes(payload), {"a3": 0, "a4": POLICY_VIOLATION},
                         "one request's new topics pass max_topics = 3")
        self.assertEqual(metadata_v7(client, "a4", False), POLICY_VIOLATION, "a fourth topic passes max_topics = 3")
        self.assertEqual(produce_error(client, "a4"), POLICY_VIOLATION)
        self.assertEqual(produce_error(client, "a1"), 0, "the topics followed keep working")
        self.assertEqual(sum(len(r) for r in self.kafka.read_topic("a4").values()), 0,
                         "nothing of the refused produce landed")

        # a1 stays in use; a2 and a3 go idle and are forgotten.
        def a4_served():
            produce_error(client, "a1")
            return metadata_v7(client, "a4", False) == 0

        self.assertTrue(wait_for(a4_served, 4 * IDLE_MS / 1000, interval=1.0), proxy.text()[-3000:])
        self.assertRegex(proxy.text(), r"forgot \d+ topics unused for 5000 ms")
        self.assertEqual(produce_error(client, "a4"), 0)
        self.assertTrue(proxy.alive())

    def test_a_forgotten_topic_continues_its_sequence(self):
        proxy, client, metrics = self.start_proxy()
        first = [f"k{i}:first-{i}" for i in range(10)]
        done = kcat_produce(client, "seq", first, "-K:", *KCAT_09)
        self.assertEqual(done.returncode, 0, done.stderr)
        bumps_before = bumps_other_than_the_first_id(metrics)
        self.assertTrue(wait_for(lambda: re.search(r"forgot \d+ topics .*'seq'", proxy.text()), 4 * IDLE_MS / 1000),
                        proxy.text()[-3000:])
        second = [f"k{i}:second-{i}" for i in range(10)]
        done = kcat_produce(client, "seq", second, "-K:", *KCAT_09)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(bumps_other_than_the_first_id(metrics), bumps_before,
                         "a restarted sequence would have been OUT_OF_ORDER_SEQUENCE and an epoch bump")
        self.assertNotIn("OUT_OF_ORDER", proxy.text())
        values = [r.value.decode() for r in self.kafka.read_topic("seq")[0]]
        self.assertEqual(values, [line.split(":", 1)[1] for line in first + second])

    def test_a_recreated_topic_starts_its_new_log_at_sequence_zero(self):
        proxy, client, metrics = self.start_proxy()
        first = [f"k{i}:first-{i}" for i in range(10)]
        done = kcat_produce(client, "again", first, "-K:", *KCAT_09)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.kafka.delete_topic("again")
        self.kafka.create_topic("again", partitions=1)
        second = [f"k{i}:second-{i}" for i in range(10)]
        done = kcat_produce(client, "again", second, "-K:", *KCAT_09)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(bumps_by_reason(metrics, "topic_recreated"), 1,
                         "the sequence restarts under a new epoch, never continued into the new log")
        self.assertNotIn("OUT_OF_ORDER", proxy.text())
        values = [r.value.decode() for r in self.kafka.read_topic("again")[0]]
        self.assertEqual(values, [line.split(":", 1)[1] for line in second])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest)
