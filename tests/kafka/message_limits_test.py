#!/usr/bin/env python3
"""A topic's max.message.bytes, learned from real Kafka (issue 14).

  /usr/bin/python3 tests/kafka/message_limits_test.py --proxy BINARY [unittest args]

Real Apache Kafka 4.4.0 (1 node), a topic created with max.message.bytes=4096,
the built produce-proxy in front (no compression, metadata_max_age_ms 2 s so an
altered config is seen soon) and a legacy client (Debian's confluent-kafka,
librdkafka in 0.9 mode: Produce v1, magic 0, acks=all, no client retries):

- once the topic is in use the proxy learns its limit with DescribeConfigs
  (logged);
- a 6,000-byte record is answered MESSAGE_TOO_LARGE by the proxy itself,
  with the reason logged, and is not in the log;
- a burst of 600 records of 200 bytes, which the client sends in requests far
  over 4 KiB, goes upstream in batches that fit: not one MESSAGE_TOO_LARGE
  split (before this, every large batch was refused by the broker and halved
  by the proxy), all delivered once and in order;
- the topic's limit altered to 16384 is learned by a later refresh and the
  6,000-byte record is then delivered.

Every check asserts; every wait is bounded; every process is started and
stopped here; all servers listen on 127.0.0.1.
"""

import argparse
import os
import sys
import time
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "daemon"))

from kafka_cluster import KafkaCluster  # noqa: E402
from proxy_under_test import plain_config, start_proxy  # noqa: E402

ARGS = None
TOPIC = "small-messages"
MSG_SIZE_TOO_LARGE = 10
BURST = 600


def proxy_config(bootstrap):
    return lambda client_port, metrics_port: plain_config(
        bootstrap, client_port, metrics_port, upstream="metadata_max_age_ms = 2000", producer="linger_ms = 20")


class LegacyClient:
    """confluent-kafka in 0.9 mode; produce() returns {value: offset or error code}."""

    def __init__(self, port):
        from confluent_kafka import Producer  # Debian's python3-confluent-kafka
        self.producer = Producer({
            "bootstrap.servers": "127.0.0.1:%d" % port,
            "api.version.request": False, "broker.version.fallback": "0.9.0.1",
            "acks": "all", "linger.ms": 100, "message.send.max.retries": 0,
            "request.timeout.ms": 30000, "message.timeout.ms": 60000,
        })

    def produce(self, values, timeout=60):
        outcome = {}

        def on_delivery(err, msg):
            outcome[msg.value()] = msg.offset() if err is None else ("error", err.code())

        for v in values:
            self.producer.produce(TOPIC, value=v, partition=0, on_delivery=on_delivery)
        left = self.producer.flush(timeout)
        assert left == 0, "%d records unflushed" % left
        return outcome


def wait_for(predicate, what, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError("timed out after %.0f s waiting for %s" % (timeout, what))


class MessageLimits(unittest.TestCase):

    def test_a_topics_limit_is_learned_enforced_at_the_front_and_kept_by_batches(self):
        kafka = KafkaCluster(nodes=1)
        kafka.start()
        self.addCleanup(kafka.stop)
        kafka.create_topic(TOPIC, partitions=1, configs={"max.message.bytes": 4096})
        proxy, client_port, _ = start_proxy(self, ARGS.proxy, proxy_config(kafka.bootstrap))
        client = LegacyClient(client_port)

        first = client.produce([b"first"])
        self.assertIsInstance(first[b"first"], int, first)
        learned = "topic %s takes record batches up to 4096 bytes (max.message.bytes)" % TOPIC
        wait_for(lambda: learned in proxy.text(), "the limit to be learned", 30)

        big = b"B" * 6000
        started = time.monotonic()
        refused = client.produce([big])
        self.assertEqual(refused[big], ("error", MSG_SIZE_TOO_LARGE))
        self.assertLess(time.monotonic() - started, 10, "refused by the proxy, not after upstream retries")
        log = proxy.text()
        self.assertIn("refused with MESSAGE_TOO_LARGE: record 0 needs a batch of", log)
        self.assertIn("the topic's max.message.bytes upstream is 4096", log)

        burst = [b"%06d-" % i + b"r" * 193 for i in range(BURST)]
        delivered = client.produce(burst)
        failed = {v: o for v, o in delivered.items() if not isinstance(o, int)}
        self.assertEqual(failed, {}, "records of the burst failed")
        self.assertNotIn("MESSAGE_TOO_LARGE: split", proxy.text(),
                         "a batch over the topic's limit went upstream")

        kafka.alter_topic_config(TOPIC, {"max.message.bytes": 16384})
        relearned = "topic %s takes record batches up to 16384 bytes" % TOPIC
        wait_for(lambda: relearned in proxy.text(), "the altered limit to be learned", 40)
        after = client.produce([big])
        self.assertIsInstance(after[big], int, after)

        values = [r.value for r in kafka.read_topic(TOPIC, timeout=60)[0]]
        self.assertEqual(values, [b"first"] + burst + [big], "lost, duplicated or reordered records")
        for i, v in enumerate(burst):
            self.assertEqual(delivered[v], i + 1, "the client was told another offset")
        self.assertTrue(proxy.alive(), proxy.text()[-3000:])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest)
