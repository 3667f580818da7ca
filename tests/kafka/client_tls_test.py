#!/usr/bin/env python3
"""Client TLS on the proxy's listener, through to real Apache Kafka 4.4.0.

  /usr/bin/python3 tests/kafka/client_tls_test.py --proxy BINARY [unittest args]

One 1-node cluster (plaintext); the proxy's listener speaks TLS and requires
client certificates (certificates made by openssl in this run,
tests/kafka/test_pki.py). Through it, exactly once, read back from Kafka
itself:

  - confluent-kafka (Debian's python3-confluent-kafka), idempotent, mTLS;
  - kafka-python with api_version (0, 10), mTLS (Produce v2, message format 1).

A client with a certificate from another CA is refused with one log line and
one count, and produces nothing. Every wait is bounded; every process
started here is stopped here. All servers listen on 127.0.0.1.
"""

import argparse
import os
import re
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "daemon"))

from kafka_cluster import KafkaCluster  # noqa: E402
from test_pki import TestPki, _openssl  # noqa: E402
from proxy_under_test import scrape_all, start_proxy, total  # noqa: E402

ARGS = None


class ClientTlsToKafka(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="pp-client-tls-")
        pki = cls.pki = TestPki(cls.tmp.name)
        cls.listener = pki.leaf("listener", "localhost", "DNS:localhost,IP:127.0.0.1")
        cls.client = pki.leaf("app", "orders-app", "DNS:orders-app")
        cls.kafka = KafkaCluster(nodes=1)
        cls.kafka.start()
        for topic in ("tls-ck-idem", "tls-kp-010", "tls-refused"):
            cls.kafka.create_topic(topic, partitions=3)

    @classmethod
    def tearDownClass(cls):
        cls.kafka.stop()
        cls.tmp.cleanup()

    def setUp(self):
        tls = ('[listener.tls]\nenabled = true\ncert_file = "%s"\nkey_file = "%s"\nca_file = "%s"\n'
               'client_auth = "required"\n' % (self.listener.cert, self.listener.key, self.pki.ca_file))
        self.proxy, self.port, self.metrics = start_proxy(self, ARGS.proxy, lambda client, metrics: (
            '[listener]\naddress = "127.0.0.1:%d"\n[upstream]\nbootstrap_servers = ["%s"]\n'
            '[metrics]\naddress = "127.0.0.1:%d"\n[log]\nlevel = "debug"\n%s'
            % (client, self.kafka.bootstrap, metrics, tls)))

    def values_in(self, topic):
        records = self.kafka.read_topic(topic)
        return sorted(rec.value.decode() for recs in records.values() for rec in recs)

    def test_confluent_kafka_idempotent_mtls_exactly_once(self):
        from confluent_kafka import Producer
        p = Producer({"bootstrap.servers": "127.0.0.1:%d" % self.port, "security.protocol": "ssl",
                      "ssl.ca.location": self.pki.ca_file, "ssl.certificate.location": self.client.cert,
                      "ssl.key.location": self.client.key, "enable.idempotence": True, "linger.ms": 5})
        errors = []
        values = ["ck-%d" % i for i in range(3000)]
        for i, v in enumerate(values):
            p.produce("tls-ck-idem", value=v.encode(), partition=i % 3,
                      on_delivery=lambda err, msg: errors.append(err) if err else None)
            p.poll(0)
        self.assertEqual(p.flush(60), 0)
        self.assertEqual(errors, [])
        self.assertEqual(self.values_in("tls-ck-idem"), sorted(values), "every record exactly once")
        self.assertIn("as User:orders-app (TLS certificate)", self.proxy.text())

    def test_kafka_python_0_10_mtls_exactly_once(self):
        from kafka import KafkaProducer
        p = KafkaProducer(bootstrap_servers="localhost:%d" % self.port, api_version=(0, 10), security_protocol="SSL",
                          ssl_cafile=self.pki.ca_file, ssl_certfile=self.client.cert, ssl_keyfile=self.client.key,
                          acks="all", retries=5)
        values = ["kp-%d" % i for i in range(500)]
        for v in values:
            p.send("tls-kp-010", value=v.encode())
        p.flush(60)
        p.close(10)
        self.assertEqual(self.values_in("tls-kp-010"), sorted(values), "every record exactly once")

    def test_untrusted_client_certificate_is_refused_alone(self):
        from confluent_kafka import Producer
        cert, key = os.path.join(self.tmp.name, "rogue.crt"), os.path.join(self.tmp.name, "rogue.key")
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2",
                 "-subj", "/CN=rogue")
        p = Producer({"bootstrap.servers": "127.0.0.1:%d" % self.port, "security.protocol": "ssl",
                      "ssl.ca.location": self.pki.ca_file, "ssl.certificate.location": cert,
                      "ssl.key.location": key, "message.timeout.ms": 5000})
        p.produce("tls-refused", value=b"never")
        p.flush(15)
        deadline = time.time() + 20
        while time.time() < deadline:
            failed = total(scrape_all(self.metrics), "client_tls_handshake_failures_total",
                           reason="certificate")
            if failed >= 1:
                break
            time.sleep(0.2)
        self.assertGreaterEqual(failed, 1)
        self.assertRegex(self.proxy.text(), r"closing client 127\.0\.0\.1:\d+: TLS handshake failed \(certificate\)")
        self.assertNotIn("PRIVATE KEY", self.proxy.text())
        self.assertEqual(self.values_in("tls-refused"), [])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest)
