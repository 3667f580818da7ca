#!/usr/bin/env python3
"""Idempotent clients keep their order when the proxy gives up on a batch
(PIPELINE.md C.9, CLIENT_DEDUP.md rule 4).

  /usr/bin/python3 tests/e2e/idempotent_expiry_order_test.py --proxy BINARY --cluster TEST_CLUSTER [unittest args]

The test cluster answers NOT_LEADER_OR_FOLLOWER (appending nothing) to the
first produces of partition 0 for longer than the proxy's delivery timeout
(1.5 s), so the proxy fails some of a client's batches with REQUEST_TIMED_OUT
while the client keeps sending. The client (librdkafka through
confluent-kafka, kafka-clients 4.4.0) retries them. Nothing it sent after a
failed batch may reach the log ahead of that batch's retry: every record
once, in per-partition order, at the offset the client was told, and the
proxy must really have timed batches out.
"""
import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import idempotent_support as s  # noqa: E402

ARGS = None
COUNT = 4000
PARTITIONS = 2
# Each proxy attempt of the partition's head batch takes one refusal; at
# 50-200 ms backoff about nine fit in the 1.5 s delivery timeout. The order
# breaks (before PIPELINE.md C.9's rule) when the refusals end just as the
# head batch expires, so the batches behind it succeed at once: one round per
# count around nine, as the backoff's jitter moves the edge.
REFUSAL_ROUNDS = (9, 10, 11)
CLIENTS = {
    "confluent-idempotent": ("linger.ms=2", "batch.num.messages=20", "message.timeout.ms=90000",
                             "retry.backoff.ms=50"),
    "java-4": ("linger.ms=2", "batch.size=800", "delivery.timeout.ms=90000", "retry.backoff.ms=50"),
}


class IdempotentOrderThroughExpiry(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        topics = []
        for client in CLIENTS:
            for refusals in REFUSAL_ROUNDS:
                topics += ["--topic", "expiry-%s-%d:%d" % (client, refusals, PARTITIONS)]
        cls.cluster = s.Cluster(ARGS.cluster, "--brokers", "2", *topics)
        cls.proxy = s.start_proxy(ARGS.proxy, cls.cluster.bootstrap, extra_sets=[
            "producer.linger_ms=2", "upstream.request_timeout_ms=1000", "producer.delivery_timeout_ms=1500",
            "producer.retry_backoff_ms=50", "producer.retry_backoff_max_ms=200"])

    @classmethod
    def tearDownClass(cls):
        rc = cls.proxy.stop(timeout=60)
        text = cls.proxy.text()
        cls.cluster.stop()
        if rc != 0 or "AddressSanitizer" in text or "runtime error:" in text:
            raise AssertionError("produce-proxy exited %r; log tail:\n%s" % (rc, text[-6000:]))

    def timed_out(self):
        return s.metric_sum(self.proxy.metrics_port,
                            'produce_proxy_records_failed_total{error="REQUEST_TIMED_OUT"}')

    def run_through_expiry(self, client):
        before = self.timed_out()
        for refusals in REFUSAL_ROUNDS:
            topic = "expiry-%s-%d" % (client, refusals)
            self.assertEqual(self.cluster.command("error %s 0 NOT_LEADER_OR_FOLLOWER %d" % (topic, refusals)), "ok")
            results, summary, stderr = s.run_client(client, "127.0.0.1:%d" % self.proxy.listen_port, topic, COUNT,
                                                    PARTITIONS, extra=CLIENTS[client], timeout_s=150)
            self.assertEqual(summary["acked"], COUNT, "%s\n%s" % (summary, stderr[-3000:]))
            log = s.read_log(self.cluster.bootstrap, topic)
            problems = s.log_problems(log, COUNT, results)
            self.assertEqual(problems, [], "%s, %d refusals:\n  %s\nproxy log tail:\n%s" % (
                client, refusals, "\n  ".join(problems[:20]), self.proxy.text()[-4000:]))
        timed_out = self.timed_out() - before
        print("\n  %s: %d records failed upstream with REQUEST_TIMED_OUT and were retried by the client" % (
            client, timed_out), file=sys.stderr)
        self.assertGreater(timed_out, 0, "no batch reached the proxy's delivery timeout: the test proved nothing")

    def test_confluent_idempotent(self):
        self.run_through_expiry("confluent-idempotent")

    def test_java_4(self):
        self.run_through_expiry("java-4")


if __name__ == "__main__":
    s.main(sys.modules[__name__])
