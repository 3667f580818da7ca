#!/usr/bin/env python3
"""One client's refused record harms no other client (issue 14, isolation).

  /usr/bin/python3 tests/kafka/record_errors_test.py --proxy BINARY [unittest args]

Real Apache Kafka 4.4.0 (1 node), a compacted topic of one partition, and the
built produce-proxy in front. Two legacy clients (Debian's confluent-kafka,
librdkafka in 0.9 mode: Produce v1, magic 0, acks=all, no client retries)
produce into that one partition at the same time:

- "good" sends keyed records, each value unique and numbered;
- "bad" sends records without a key, which a compacted topic refuses
  (INVALID_RECORD, with `record_errors` naming each such record).

The proxy puts both clients' records into shared upstream batches, so the
broker refuses batches that also carry good records. Then (PIPELINE.md C.11):
every good record is acknowledged and in the log exactly once, in the order
sent, at the offset the client was told; every bad record is answered
INVALID_RECORD; no keyless record is in the log; the proxy logged the
isolation (the batches really were shared) and its metrics agree. Before
issue 14, the good records of every shared batch failed with INVALID_RECORD.

Every check asserts; every loop is bounded in count and time; every process
is started and stopped here; all servers listen on 127.0.0.1.
"""

import argparse
import os
import re
import sys
import threading
import time
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "daemon"))

from kafka_cluster import KafkaCluster  # noqa: E402
from proxy_under_test import plain_config  # noqa: E402
from daemon_support import Proxy, free_port, http_request, metric_value  # noqa: E402

ARGS = None
TOPIC = "compacted"
GOOD_RECORDS = 3000
BAD_RECORDS = 300
GOOD_RATE = 600   # records/s: a batch of the partition is nearly always in flight
BAD_RATE = 60
STREAM_BOUND_S = 60
INVALID_RECORD = 87
# Only a refused batch that also carried another run's records counts.
ISOLATION_LOG = re.compile(r"INVALID_RECORD for record \d+ of batch seq .*its client run of \d+ records fails, "
                           r"[1-9]\d* records of other runs are resent")


def proxy_config(bootstrap, client_port, metrics_port):
    return plain_config(bootstrap, client_port, metrics_port, producer="linger_ms = 20")


class Client(threading.Thread):
    """One legacy client: `count` records at `rate`/s, key from `key_of(i)`
    (None: no key), value b"<name>-<i>". Collects every delivery report."""

    def __init__(self, port, name, count, rate, key_of):
        super().__init__(daemon=True)
        self.port, self.name, self.count, self.rate, self.key_of = port, name, count, rate, key_of
        self.lock = threading.Lock()
        self.acked = {}    # value -> offset
        self.failed = {}   # value -> error code
        self.error = None
        self.unflushed = None

    def value(self, i):
        return b"%s-%06d" % (self.name.encode(), i)

    def run(self):
        try:
            self._run()
        except Exception as e:  # noqa: BLE001 - surfaced by the test
            self.error = repr(e)

    def _run(self):
        from confluent_kafka import Producer  # Debian's python3-confluent-kafka
        producer = Producer({
            "bootstrap.servers": "127.0.0.1:%d" % self.port,
            "api.version.request": False, "broker.version.fallback": "0.9.0.1",
            "acks": "all", "linger.ms": 2, "message.send.max.retries": 0,
            "request.timeout.ms": 60000, "message.timeout.ms": 90000,
        })

        def on_delivery(err, msg):
            with self.lock:
                if err is None:
                    self.acked[msg.value()] = msg.offset()
                else:
                    self.failed[msg.value()] = err.code()

        start = time.monotonic()
        sent = 0
        while sent < self.count and time.monotonic() - start < STREAM_BOUND_S:
            target = min(self.count, int((time.monotonic() - start) * self.rate) + 1)
            while sent < target:
                producer.produce(TOPIC, value=self.value(sent), key=self.key_of(sent), partition=0,
                                 on_delivery=on_delivery)
                sent += 1
            producer.poll(0.002)
        self.unflushed = producer.flush(60)
        self.sent = sent


class RecordErrors(unittest.TestCase):

    def test_a_refused_record_fails_only_its_own_client(self):
        kafka = KafkaCluster(nodes=1)
        kafka.start()
        self.addCleanup(kafka.stop)
        kafka.create_topic(TOPIC, partitions=1, configs={"cleanup.policy": "compact"})
        client_port, metrics_port = free_port(), free_port()
        proxy = Proxy(ARGS.proxy, proxy_config(kafka.bootstrap, client_port, metrics_port))
        self.addCleanup(proxy.stop, 30)
        self.assertTrue(proxy.wait_ready(60), proxy.text()[-4000:])

        good = Client(client_port, "good", GOOD_RECORDS, GOOD_RATE, lambda i: b"key-%06d" % i)
        bad = Client(client_port, "bad", BAD_RECORDS, BAD_RATE, lambda i: None)
        good.start()
        time.sleep(0.5)  # the good stream first, so the bad records join batches in flight
        bad.start()
        for c in (good, bad):
            c.join(STREAM_BOUND_S + 90)
            self.assertFalse(c.is_alive(), "%s client did not finish" % c.name)
            self.assertIsNone(c.error, c.error)
            self.assertEqual(c.unflushed, 0, "%s: records left unflushed" % c.name)

        log = proxy.text()
        self.assertEqual(good.failed, {}, "%d good records failed, e.g. %s" % (
            len(good.failed), list(good.failed.items())[:3]))
        isolated = len(ISOLATION_LOG.findall(log))
        self.assertGreater(isolated, 0, "no shared batch was refused: the test proved nothing\n" + log[-3000:])
        self.assertEqual(len(good.acked), GOOD_RECORDS)
        self.assertEqual(len(bad.acked), 0, "keyless records acknowledged on a compacted topic")
        self.assertEqual(len(bad.failed), BAD_RECORDS)
        self.assertEqual(set(bad.failed.values()), {INVALID_RECORD})

        records = kafka.read_topic(TOPIC, timeout=60)[0]
        self.assertTrue(all(r.key is not None for r in records), "a keyless record is in the log")
        values = [r.value for r in records]
        self.assertEqual(len(values), len(set(values)), "a record is in the log twice")
        self.assertEqual(values, [good.value(i) for i in range(GOOD_RECORDS)], "good records lost or reordered")
        for r in records:
            self.assertEqual(good.acked[r.value], r.offset, "the client was told another offset")

        status, body = http_request(metrics_port, "/metrics")
        self.assertEqual(status, 200)
        self.assertEqual(metric_value(body, 'produce_proxy_records_failed_total{error="INVALID_RECORD"}'),
                         BAD_RECORDS)
        self.assertGreaterEqual(metric_value(body, 'produce_proxy_producer_epoch_bumps_total{reason="record_errors"}'),
                                1)
        self.assertEqual(metric_value(body, "produce_proxy_ambiguous_renumbered_total"), 0)
        print("record_errors: %d isolations; %d good records exactly once, %d bad refused" % (
            isolated, GOOD_RECORDS, BAD_RECORDS), file=sys.stderr)
        self.assertTrue(proxy.alive(), log[-3000:])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest)
