#!/usr/bin/python3
"""ack = "spool" end to end (docs/design/SPOOL.md): the shipped produce-proxy
binary in front of the test cluster, real clients (kafka-python 2.0.2 with
v2 batches and with Produce v2's legacy messages, kcat in legacy mode).

- A topic in spool mode is answered with offset -1 and lands exactly once
  (acks=0 records too);
  a topic in upstream mode beside it is answered with its real offsets.
- With the upstream stopped (the test cluster's broker down), clients are
  still answered from the spool.
- The broker answers without leaders (as Kafka's controlled shutdown
  does), then goes down: a new client's Metadata for a spooled topic is
  answered at once from the partitions the proxy knows, not held for
  upstream.request_timeout_ms (30 s; the client's max_block_ms is 10 s),
  and its records are spooled and delivered once the broker is back.
- kill -9 of the proxy with batches appended upstream but their answers
  lost (the broker deduplicates their replay), kill -9 and SIGTERM (exit 0,
  the rest left in the spool) with the upstream down: after each restart
  with the upstream back, every acknowledged record is in the log exactly
  once.

About 30 s. Stdlib, Debian's python3-kafka, kcat; everything on 127.0.0.1,
every wait bounded.
"""
import collections
import os
import shutil
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import spool_support as s  # noqa: E402
from daemon_support import run_tests  # noqa: E402
from kafka import KafkaProducer  # noqa: E402

ARGS = None
SPOOL_RECORDS = "produce_proxy_spool_records"
REPLAYED = "produce_proxy_spool_replayed_batches_total"
PARTITIONS = 3


def produce(bootstrap, topic, keys, api_version=None, partitions=PARTITIONS, acks="all", timeout=20):
    """Sends one record per key with kafka-python and waits for every answer:
    {key: offset}. Raises if any record is not acknowledged."""
    kwargs = dict(bootstrap_servers=bootstrap, acks=acks, linger_ms=5, request_timeout_ms=10000,
                  max_block_ms=10000, retries=3, reconnect_backoff_ms=50)
    if api_version is not None:
        kwargs["api_version"] = api_version
    producer = KafkaProducer(**kwargs)
    try:
        futures = [(k, producer.send(topic, key=k.encode(), value=("v-" + k).encode(), partition=i % partitions))
                   for i, k in enumerate(keys)]
        producer.flush(timeout)
        return {k: f.get(timeout).offset for k, f in futures}
    finally:
        producer.close(5)


def kcat_legacy(bootstrap, topic, keys):
    """kcat -P in legacy mode (Produce v1, magic 0, no producer id); exits 0
    only when every record was acknowledged."""
    return subprocess.run(["timeout", "30", "kcat", "-P", "-b", bootstrap, "-t", topic, "-K", "\t",
                           "-X", "api.version.request=false", "-X", "broker.version.fallback=0.9.0.1"],
                          input="".join("%s\tv-%s\n" % (k, k) for k in keys), capture_output=True, text=True)


class SpoolAck(unittest.TestCase):
    def setUp(self):
        self.dir = s.workdir("pp-spool-ack-")
        self.cluster = s.TestCluster(ARGS.cluster, "--brokers", "1", "--topic", "sp:%d" % PARTITIONS,
                                     "--topic", "up:1")
        spool = {"dir": os.path.join(self.dir, "spool"), "ack": "upstream", "topic_ack": ["sp=spool"],
                 "segment_bytes": 1 << 20}
        self.proxy = s.SpoolProxy(ARGS.proxy, self.cluster.bootstrap, self.dir, spool=spool,
                                  extra="[shutdown]\ndrain_timeout_ms = 2000\n")

    def tearDown(self):
        if self.proxy.alive():
            self.proxy.proc.kill()
            self.proxy.proc.wait(timeout=10)
        self.cluster.stop()
        if not s.keep_dir():
            shutil.rmtree(self.dir, ignore_errors=True)

    def start_proxy(self):
        self.proxy.start()
        self.assertTrue(self.proxy.wait_log("ready: clients connect", 60), self.proxy.log_text()[-3000:])

    def assert_once(self, acknowledged):
        """Every acknowledged key of topic sp in the log exactly once, in
        its partition, with its value; nothing else there."""
        rows = s.read_log(self.cluster.bootstrap, "sp")
        copies = collections.Counter(key for _, _, key, _ in rows)
        lost = sorted(k for k in acknowledged if copies[k] == 0)
        twice = sorted(k for k, n in copies.items() if n > 1)
        strangers = sorted(k for k in copies if k not in acknowledged)
        damaged = [key for _, _, key, value in rows if value != "v-" + key]
        self.assertEqual((lost[:5], twice[:5], strangers[:5], damaged[:5]), ([], [], [], []),
                         "lost %d, twice %d, strangers %d, damaged %d\n%s" % (
                             len(lost), len(twice), len(strangers), len(damaged), self.proxy.log_text()[-4000:]))

    def test_metadata_is_answered_at_once_with_the_leaders_gone(self):
        self.start_proxy()
        acked = set(produce(self.proxy.bootstrap, "sp", ["before-%d" % i for i in range(PARTITIONS)]))
        for partition in range(PARTITIONS):
            self.cluster.command("leader sp %d -1" % partition)
        # Their sends fail and the proxy's refresh learns the partitions
        # have no leader; then no broker answers at all.
        keys = ["offline-%d" % i for i in range(PARTITIONS)]
        acked.update(produce(self.proxy.bootstrap, "sp", keys))
        deadline = time.monotonic() + 10
        while (self.proxy.scrape(SPOOL_RECORDS) or 0) < len(keys) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1)
        self.cluster.command("down 1")
        keys = ["leaderless-%d" % i for i in range(30)]
        started = time.monotonic()
        offsets = produce(self.proxy.bootstrap, "sp", keys)
        elapsed = time.monotonic() - started
        self.assertEqual(set(offsets.values()), {-1})
        self.assertLess(elapsed, 5.0, "a new client waited %.1f s" % elapsed)
        acked.update(keys)
        self.cluster.command("up 1")
        self.assertEqual(self.proxy.wait_drained(30, every=0.2), 0, self.proxy.log_text()[-3000:])
        self.assert_once(acked)

    def test_acknowledged_from_the_spool_exactly_once_across_restarts(self):
        self.start_proxy()
        acked = set()

        # Answered from the spool with offset -1, v2 batches and legacy messages.
        for api, tag in ((None, "v2"), ((0, 10), "legacy")):
            keys = ["%s-%d" % (tag, i) for i in range(60)]
            offsets = produce(self.proxy.bootstrap, "sp", keys, api_version=api)
            self.assertEqual(set(offsets.values()), {-1}, tag)
            acked.update(keys)
        # acks=0 records are spooled and delivered too.
        keys = ["zero-%d" % i for i in range(30)]
        produce(self.proxy.bootstrap, "sp", keys, acks=0)
        acked.update(keys)
        keys = ["kcat-%d" % i for i in range(60)]
        out = kcat_legacy(self.proxy.bootstrap, "sp", keys)
        self.assertEqual(out.returncode, 0, out.stderr[-2000:])
        acked.update(keys)
        # The upstream-mode topic beside it is answered with its log offsets.
        up = produce(self.proxy.bootstrap, "up", ["u-%d" % i for i in range(10)], partitions=1)
        self.assertEqual(sorted(up.values()), list(range(10)))
        self.assertEqual(self.proxy.wait_drained(30, every=0.2), 0, self.proxy.log_text()[-3000:])
        self.assert_once(acked)

        # Batches appended upstream whose answers are lost, then kill -9: the
        # restart re-sends them with their first identity and sequences, and
        # the broker deduplicates them.
        self.cluster.command("drop-responses 1 silent")
        keys = ["flight-%d" % i for i in range(90)]
        self.assertEqual(set(produce(self.proxy.bootstrap, "sp", keys).values()), {-1})
        acked.update(keys)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            in_log = {k for _, _, k, _ in s.read_log(self.cluster.bootstrap, "sp")}
            if set(keys) <= in_log:
                break
            time.sleep(0.2)
        self.assertLessEqual(set(keys), in_log, "the batches never reached the upstream")
        self.proxy.kill9()
        self.cluster.command("drop-responses 0")
        self.start_proxy()
        self.assertEqual(self.proxy.wait_drained(30, every=0.2), 0, self.proxy.log_text()[-3000:])
        self.assertGreater(self.proxy.scrape(REPLAYED) or 0, 0, self.proxy.current_log()[-3000:])
        self.assert_once(acked)

        # Upstream stopped: still answered, from the spool. Then kill -9.
        self.cluster.command("down 1")
        keys = ["down-%d" % i for i in range(90)]
        offsets = produce(self.proxy.bootstrap, "sp", keys)
        self.assertEqual(set(offsets.values()), {-1})
        acked.update(keys)
        deadline = time.monotonic() + 5
        while (self.proxy.scrape(SPOOL_RECORDS) or 0) < len(keys) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(self.proxy.scrape(SPOOL_RECORDS), len(keys), "not owed while the upstream is down")
        self.proxy.kill9()

        # Restart with the upstream back: replayed, delivered once.
        self.cluster.command("up 1")
        self.start_proxy()
        self.assertEqual(self.proxy.wait_drained(30, every=0.2), 0, self.proxy.log_text()[-3000:])
        self.assert_once(acked)

        # SIGTERM with records unresolved: exit 0, the rest stays on disk.
        self.cluster.command("down 1")
        keys = ["term-%d" % i for i in range(90)]
        offsets = produce(self.proxy.bootstrap, "sp", keys)
        self.assertEqual(set(offsets.values()), {-1})
        acked.update(keys)
        self.assertEqual(self.proxy.terminate(timeout=30), 0, self.proxy.log_text()[-3000:])
        self.assertIn("stay in the spool for the next start", self.proxy.current_log())
        self.cluster.command("up 1")
        self.start_proxy()
        self.assertEqual(self.proxy.wait_drained(30, every=0.2), 0, self.proxy.log_text()[-3000:])
        self.assert_once(acked)


if __name__ == "__main__":
    run_tests(sys.modules[__name__], "--cluster")
