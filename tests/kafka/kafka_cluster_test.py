#!/usr/bin/env python3
"""Self-test of the real-Kafka harness (tests/kafka/kafka_cluster.py).

1 node: start, ApiVersions, create a topic, produce with kcat, read back.
3 nodes: rf=3 topic, move_leader, kill -9 the leader, produce on, restart,
read everything back. Fails (never skips) when the broker cannot be fetched.
"""

import os
import shutil
import subprocess
import sys
import time
import unittest

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kafka_cluster  # noqa: E402
from kafka_cluster import KafkaCluster  # noqa: E402


def kcat_produce(bootstrap, topic, lines, partition=None, headers=(), extra=()):
    """Produces `lines` ("key:value") with kcat -P; fails the test on error."""
    kcat = shutil.which("kcat")
    if not kcat:
        raise AssertionError("kcat not found; run scripts/setup.sh")
    cmd = [kcat, "-P", "-b", bootstrap, "-t", topic, "-K:", "-X", "acks=all",
           "-X", "message.timeout.ms=20000"]
    if partition is not None:
        cmd += ["-p", str(partition)]
    for h in headers:
        cmd += ["-H", h]
    cmd += list(extra)
    p = subprocess.run(cmd, input="".join(l + "\n" for l in lines), text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    if p.returncode != 0:
        raise AssertionError("kcat -P failed (%d): %s" % (p.returncode, p.stderr))


def values(records):
    return [r.value.decode() for r in records]


class OneNode(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.kafka = KafkaCluster(nodes=1)
        cls.kafka.start()
        print("\n1-node cluster up in %.1f s at %s" % (cls.kafka.startup_seconds, cls.kafka.bootstrap),
              file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        cls.kafka.stop()

    def test_api_versions(self):
        av = self.kafka.api_versions_named()
        for api in ("Produce", "Metadata", "InitProducerId", "ApiVersions", "Fetch"):
            self.assertIn(api, av)
        self.assertGreaterEqual(av["Produce"][1], 9)     # flexible Produce
        self.assertGreaterEqual(av["Metadata"][1], 12)
        print("ApiVersions max: " + ", ".join("%s v%d" % (a, av[a][1]) for a in
              ("Produce", "Metadata", "InitProducerId", "ApiVersions")), file=sys.stderr)

    def test_produce_with_kcat_and_read_back(self):
        k = self.kafka
        parts = k.create_topic("harness-one", partitions=2)
        self.assertEqual(sorted(parts), [0, 1])
        self.assertEqual(parts[0].leader, 1)
        kcat_produce(k.bootstrap, "harness-one", ["k%d:v%d" % (i, i) for i in range(5)], partition=0,
                     headers=["h1=x"])
        kcat_produce(k.bootstrap, "harness-one", ["a:b"], partition=1)
        got, ranges = k.read_topic("harness-one", with_ranges=True)
        self.assertEqual(ranges, {0: (0, 5), 1: (0, 1)})
        self.assertEqual(values(got[0]), ["v%d" % i for i in range(5)])
        self.assertEqual([r.key for r in got[0]], [b"k%d" % i for i in range(5)])
        self.assertEqual([r.offset for r in got[0]], list(range(5)))
        self.assertEqual(got[0][0].headers, [("h1", b"x")])
        self.assertGreater(got[0][0].timestamp, 0)
        self.assertEqual(values(got[1]), ["b"])

    def test_read_empty_topic_and_auto_create(self):
        k = self.kafka
        k.create_topic("harness-empty", partitions=1)
        self.assertEqual(k.read_topic("harness-empty"), {0: []})
        # auto.create.topics.enable=true: kcat's produce creates the topic.
        kcat_produce(k.bootstrap, "harness-auto", ["x:1", "y:2"])
        self.assertEqual(values(k.read_topic("harness-auto")[0]), ["1", "2"])

    def test_unknown_topic_fails_clearly(self):
        with self.assertRaises(kafka_cluster.KafkaHarnessError):
            self.kafka.describe("no-such-topic")


class ThreeNodes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.kafka = KafkaCluster(nodes=3)
        cls.kafka.start()
        print("\n3-node cluster up in %.1f s at %s" % (cls.kafka.startup_seconds, cls.kafka.bootstrap),
              file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        t = time.monotonic()
        cls.kafka.stop()
        print("3-node cluster stopped in %.1f s" % (time.monotonic() - t), file=sys.stderr)

    def test_move_leader_kill9_restart(self):
        k = self.kafka
        topic = "harness-three"
        parts = k.create_topic(topic, partitions=1)
        p0 = parts[0]
        self.assertEqual(len(p0.replicas), 3)       # default rf = 3
        self.assertEqual(sorted(p0.isr), [1, 2, 3])
        kcat_produce(k.bootstrap, topic, ["a:1", "b:2"])

        target = next(b for b in p0.replicas if b != p0.leader)
        moved = k.move_leader(topic, 0, target)
        self.assertEqual(moved.leader, target)
        self.assertEqual(moved.replicas[0], target)
        self.assertGreater(moved.leader_epoch, p0.leader_epoch)
        kcat_produce(k.bootstrap, topic, ["c:3"])

        k.kill9(target)
        self.assertFalse(k.is_alive(target))
        after = k.wait_until("a new leader for %s-0" % topic,
                             lambda: (lambda p: p if p.leader not in (-1, target) and target not in p.isr else None)(
                                 k.describe(topic)[0]), timeout=30)
        self.assertGreater(after.leader_epoch, moved.leader_epoch)
        kcat_produce(k.alive_bootstrap, topic, ["d:4"])   # 2 in-sync replicas: min.insync.replicas=2 holds

        k.restart(target)
        self.assertTrue(k.is_alive(target))
        self.assertIn(target, k.describe(topic)[0].isr)
        kcat_produce(k.bootstrap, topic, ["e:5"])

        got = k.read_topic(topic)
        self.assertEqual(values(got[0]), ["1", "2", "3", "4", "5"])
        self.assertEqual([r.offset for r in got[0]], [0, 1, 2, 3, 4])
        epochs = [r.leader_epoch for r in got[0]]
        self.assertEqual(epochs, sorted(epochs))
        self.assertLess(epochs[0], epochs[-1])


if __name__ == "__main__":
    unittest.main(verbosity=2)
