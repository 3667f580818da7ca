#!/usr/bin/env python3
"""Idempotent clients through cut client connections and dropped upstream
responses at once (issue 16, stage 2).

  /usr/bin/python3 tests/e2e/idempotent_faults_test.py --proxy BINARY --cluster TEST_CLUSTER [unittest args]

client --> CutRelay (cuts 5% of requests: half when the proxy's answer arrives,
half just after the request went through) --> produce-proxy --> test cluster
(drop-responses 0.05 close: the record is appended, the response dropped and
the connection closed). With an idempotent client (confluent-kafka,
kafka-clients 4.4.0) every record must be in the log exactly once, in
per-partition order, at the offset the client was told; the relay must have
cut, and the proxy must have counted front-end dedup hits
(client_duplicates_total) where the cuts fell after the answer.
"""
import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import idempotent_support as s  # noqa: E402
from cut_relay import CutRelay  # noqa: E402

ARGS = None
COUNT = 20000
PARTITIONS = 3
CLIENTS = {
    # small batches: many requests, so 5% of them is a few dozen cuts
    # and short reconnect backoffs, so a cut costs milliseconds, not seconds
    "confluent-idempotent": ("linger.ms=2", "batch.num.messages=20", "message.timeout.ms=240000",
                             "reconnect.backoff.ms=10", "reconnect.backoff.max.ms=100", "retry.backoff.ms=20"),
    "java-4": ("linger.ms=2", "batch.size=800", "delivery.timeout.ms=240000", "reconnect.backoff.ms=10",
               "reconnect.backoff.max.ms=100", "retry.backoff.ms=20"),
}


class IdempotentThroughFaults(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        topics = []
        for client in CLIENTS:
            topics += ["--topic", "faults-%s:%d" % (client, PARTITIONS)]
        cls.cluster = s.Cluster(ARGS.cluster, "--brokers", "2", *topics)
        # The proxy names the relay as its one broker in Metadata, so clients
        # keep going through the relay after bootstrapping.
        listen = s.free_port()
        cls.relay = CutRelay(listen, rate=0.05)
        cls.proxy = s.start_proxy(ARGS.proxy, cls.cluster.bootstrap, listen=listen, extra_sets=[
            "producer.linger_ms=2", "producer.retry_backoff_ms=20", "producer.retry_backoff_max_ms=200",
            'listener.advertised_address="127.0.0.1:%d"' % cls.relay.port])

    @classmethod
    def tearDownClass(cls):
        rc = cls.proxy.stop(timeout=60)
        text = cls.proxy.text()
        cls.cluster.stop()
        cls.relay.close()
        if rc != 0 or "AddressSanitizer" in text or "runtime error:" in text:
            raise AssertionError("produce-proxy exited %r; log tail:\n%s" % (rc, text[-6000:]))

    def duplicates(self, outcome):
        return s.metric_sum(self.proxy.metrics_port,
                            'produce_proxy_client_duplicates_total{outcome="%s"}' % outcome)

    def run_through_faults(self, client):
        topic = "faults-" + client
        relay = self.relay
        relay.reset()
        acked0, flight0 = self.duplicates("acked"), self.duplicates("in_flight")
        self.cluster.command("drop-responses 0.05 close")
        try:
            results, summary, stderr = s.run_client(client, "127.0.0.1:%d" % relay.port, topic, COUNT, PARTITIONS,
                                                    extra=CLIENTS[client], timeout_s=240)
        finally:
            self.cluster.command("drop-responses 0")
        acked, in_flight = self.duplicates("acked") - acked0, self.duplicates("in_flight") - flight0
        upstream_dups = sum(p["duplicates"] for p in self.cluster.stats()["partitions"] if p["topic"] == topic)
        print("\n  %s: %d requests through the relay, %d cut at the answer, %d cut early; front-end "
              "duplicates acked=%d in_flight=%d; upstream duplicates %d" % (
                  client, relay.requests, relay.cuts_at_answer, relay.cuts_early, acked, in_flight, upstream_dups),
              file=sys.stderr)
        self.assertEqual(summary["acked"], COUNT, "%s\n%s" % (summary, stderr[-3000:]))
        log = s.read_log(self.cluster.bootstrap, topic)
        problems = s.log_problems(log, COUNT, results)
        self.assertEqual(problems, [], "%s:\n  %s\nproxy log tail:\n%s" % (
            client, "\n  ".join(problems[:20]), self.proxy.text()[-4000:]))
        self.assertGreater(relay.cuts_at_answer + relay.cuts_early, 0, "the relay cut nothing")
        self.assertGreater(acked + in_flight, 0, "no front-end dedup hit: the cuts were not retried?")

    def test_confluent_idempotent(self):
        self.run_through_faults("confluent-idempotent")

    def test_java_4(self):
        self.run_through_faults("java-4")


if __name__ == "__main__":
    s.main(sys.modules[__name__])
