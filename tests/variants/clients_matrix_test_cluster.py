#!/usr/bin/env python3
"""The client matrix of docs/CLIENTS.md through produce-proxy to the test
cluster, under a broker generation real Kafka 4.4.0 cannot show: Kafka 4.5's
first-sequence rule (PP_TEST_FIRST_SEQUENCE_RULE=1, KAFKA-15591) or either
KIP-1269 window placement (PP_TEST_RETAIN_PLACEMENT), which the test-cluster
binary reads from the environment (tests/broker/README.md).

  /usr/bin/python3 tests/variants/clients_matrix_test_cluster.py --proxy BINARY --cluster TEST_CLUSTER \\
      [--config TOML] [unittest args, e.g. -k java_4]

Every row of MATRIX in tests/kafka/clients_matrix_test.py, every codec of its
proxy column, asserted by that file's own checks: every record exactly once,
per-partition client order, keys, values, headers, timestamps, the offsets
the client was told, the Produce and Metadata versions it negotiated, the
proxy's counters, and a producer id taken from the proxy by the idempotent
rows. The direct column is skipped: it records Kafka 4.4.0's refusals of old
clients, which the test cluster does not imitate. The test cluster creates no
topics by itself, so the rows' auto-created topics are made beforehand with
one partition (Kafka's num.partitions), the others with three; every topic
announces a window of 20. The log is read back with kcat.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time
import unittest

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "kafka"))
sys.path.insert(0, os.path.join(REPO, "tests", "daemon"))

import clients_matrix_test as matrix  # noqa: E402
from daemon_support import TestCluster  # noqa: E402
from kafka_cluster import Record, api_versions  # noqa: E402

CLUSTER_BINARY = None  # --cluster
RETAIN = 20


class ClientsMatrixOnTestCluster(matrix.ClientsMatrix):
    @classmethod
    def setUpClass(cls):
        topics = []
        for row, target, codec, auto in matrix.CASES:
            if target == "proxy":
                topics += ["--topic", "%s:%d:%d" % (matrix.topic_name(row, target, codec),
                                                    1 if auto else matrix.PARTITIONS, RETAIN)]
        cls.cluster = TestCluster(CLUSTER_BINARY, "--brokers", "1", *topics)
        try:
            cls.start_proxy(cls.cluster.bootstrap)
        except BaseException:
            cls.cluster.stop()
            raise
        cls.t_start = time.monotonic()
        print("\ntest cluster %s (%s), produce-proxy %s at %s" % (
            cls.cluster.bootstrap, variant(), matrix.PROXY_BINARY, cls.proxy_bootstrap), file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        rc = cls.proxy.stop(timeout=60)
        text = cls.proxy.text()
        cls.cluster.stop()
        print("clients matrix on the test cluster: %.1f s of cases" % (time.monotonic() - cls.t_start),
              file=sys.stderr)
        if rc != 0 or "AddressSanitizer" in text or "runtime error:" in text:
            raise AssertionError("produce-proxy exited %r at the end; log tail:\n%s" % (rc, text[-6000:]))

    def test_proxy_api_versions(self):
        """The Kafka file's check without its highest Produce version: that one
        is asserted there in front of Kafka 4.4.0. Here the proxy offers v13
        (topic ids) only once a broker connection has negotiated it, and the
        test cluster's bootstrap connection is closed as soon as metadata names
        the brokers, so before the first case the answer says v12; the java-4
        and franz-go rows assert v13 once they produce."""
        av = api_versions("127.0.0.1", self.listen_port)
        self.assertEqual(av[0][0], 0, "the proxy serves Produce from v0")
        self.assertIn(av[0][1], (12, 13), "the proxy's highest Produce version")
        self.assertIn(matrix.INIT_PRODUCER_ID, av, "the idempotent rows need InitProducerId")

    def run_direct(self, row):
        self.skipTest("the direct column is Kafka 4.4.0's own (tests/kafka/clients_matrix_test.py)")

    def read_log(self, topic):
        """{partition: [Record, ...]} read to the end with kcat (the test cluster serves Fetch)."""
        p = subprocess.run(["timeout", "60", "kcat", "-C", "-q", "-b", self.cluster.bootstrap, "-t", topic,
                            "-o", "beginning", "-e", "-f", "%p\t%o\t%T\t%k\t%s\t%h\n"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, "kcat -C %s: %s" % (topic, p.stderr[-2000:]))
        log = {}
        for line in p.stdout.splitlines():
            partition, offset, ts, key, value, headers = line.split("\t")
            pairs = [h.split("=", 1) for h in headers.split(",")] if headers else []
            log.setdefault(int(partition), []).append(Record(
                int(partition), int(offset), key.encode(), value.encode(),
                [(n, v.encode()) for n, v in pairs], int(ts), "CreateTime", -1))
        return log


def variant():
    return ", ".join("%s=%s" % (k, os.environ.get(k) or "unset")
                     for k in ("PP_TEST_FIRST_SEQUENCE_RULE", "PP_TEST_RETAIN_PLACEMENT"))


def main():
    global CLUSTER_BINARY
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--proxy", required=True)
    ap.add_argument("--cluster", required=True)
    ap.add_argument("--config", help="the proxy's config (default: the example config, as in the Kafka file)")
    a, rest = ap.parse_known_args()
    if not shutil.which("kcat"):
        sys.exit("clients_matrix_test_cluster.py: kcat not found; run scripts/setup.sh")
    matrix.PROXY_BINARY = os.path.abspath(a.proxy)
    CLUSTER_BINARY = os.path.abspath(a.cluster)
    if a.config:
        matrix.EXAMPLE_CONFIG = os.path.abspath(a.config)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
