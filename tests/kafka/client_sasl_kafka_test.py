#!/usr/bin/env python3
"""Client SASL over TLS (SASL_SSL) on the proxy's listener, in front of real
Apache Kafka 4.4.0.

  /usr/bin/python3 tests/kafka/client_sasl_kafka_test.py --proxy BINARY [unittest args]

One 1-node KRaft cluster (plaintext). The proxy listens with [listener.tls]
(a certificate from a test CA made by openssl here) and [listener.sasl]
(PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 from a users file written by
`produce-proxy users add`; PLAIN allowed because it runs inside TLS). Real
clients produce through it over SASL_SSL; every record is read back from
Kafka with the Java consumer (not through the proxy), exactly once:

- kafka-clients 0.10.2.2 with PLAIN and with SCRAM-SHA-256 (SaslHandshake
  v0, raw tokens inside TLS);
- kafka-python 2.0.2 as (0,10) with PLAIN;
- confluent-kafka 2.16.1 from PyPI with SCRAM-SHA-512 (SaslAuthenticate).
- A wrong password over SASL_SSL: the client fails, the failure is counted
  and logged without the password, nothing lands.

Every process started here is stopped here; everything listens on 127.0.0.1.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "daemon"))

from daemon_support import Proxy, free_port, http_request  # noqa: E402
from kafka_cluster import KafkaCluster  # noqa: E402
from test_pki import TestPki  # noqa: E402

ARGS = None
RUN_CLIENT = os.path.join(REPO, "tests", "clients", "run_client.py")
PASSWORD = "sasl-ssl-Secret-42"
COUNT = 300


def users_add(name, password, mechanisms, path):
    args = [ARGS.proxy, "users", "add", name, "--users-file", path]
    for m in mechanisms:
        args += ["--mechanism", m]
    p = subprocess.run(args, input=password + "\n", capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr


def client_extras(client, mechanism, password, ca_file, truststore):
    if client.startswith("kafka-python"):
        return ["security_protocol=SASL_SSL", "sasl_mechanism=" + mechanism, "sasl_plain_username=alice",
                "sasl_plain_password=" + password, "ssl_cafile=" + ca_file, "ssl_check_hostname=False"]
    if client.startswith("confluent"):
        return ["security.protocol=SASL_SSL", "sasl.mechanisms=" + mechanism, "sasl.username=alice",
                "sasl.password=" + password, "ssl.ca.location=" + ca_file,
                "ssl.endpoint.identification.algorithm=none"]
    module = ("org.apache.kafka.common.security.plain.PlainLoginModule" if mechanism == "PLAIN"
              else "org.apache.kafka.common.security.scram.ScramLoginModule")
    # 0.10.2 reads JKS trust stores only, and predates TLS 1.3 (its SSL
    # transport layer is not ready for it).
    return ["security.protocol=SASL_SSL", "sasl.mechanism=" + mechanism,
            'sasl.jaas.config=%s required username="alice" password="%s";' % (module, password),
            "ssl.truststore.location=" + truststore, "ssl.truststore.password=changeit",
            "ssl.protocol=TLSv1.2", "ssl.enabled.protocols=TLSv1.2"]


class ClientSaslKafkaTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        pki = TestPki(os.path.join(cls.dir.name, "pki"))
        cls.ca_file = pki.ca_file
        leaf = pki.leaf("listener", "127.0.0.1", "IP:127.0.0.1")
        cls.truststore = os.path.join(cls.dir.name, "truststore.jks")
        subprocess.run(["keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", cls.ca_file,
                        "-keystore", cls.truststore, "-storepass", "changeit", "-storetype", "JKS"],
                       check=True, capture_output=True, timeout=60)
        cls.users_file = os.path.join(cls.dir.name, "users.toml")
        users_add("alice", PASSWORD, ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"], cls.users_file)
        cls.kafka = KafkaCluster(nodes=1)
        cls.kafka.start()
        cls.port, cls.metrics_port = free_port(), free_port()
        cls.proxy = Proxy(ARGS.proxy, config_text="""
[listener]
address = "127.0.0.1:%d"
[listener.tls]
enabled = true
cert_file = "%s"
key_file = "%s"
[listener.sasl]
mechanisms = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
users_file = "%s"
[upstream]
bootstrap_servers = ["%s"]
[metrics]
address = "127.0.0.1:%d"
""" % (cls.port, leaf.cert, leaf.key, cls.users_file, cls.kafka.bootstrap, cls.metrics_port))
        if not cls.proxy.wait_ready(timeout=90):
            text = cls.proxy.text()
            cls.proxy.stop()
            cls.kafka.stop()
            raise AssertionError("produce-proxy not ready:\n" + text[-4000:])

    @classmethod
    def tearDownClass(cls):
        cls.proxy.stop()
        cls.kafka.stop()
        cls.dir.cleanup()

    def run_client(self, client, mechanism, password, topic, count):
        cmd = [sys.executable, RUN_CLIENT, client, "--bootstrap", "127.0.0.1:%d" % self.port, "--topic", topic,
               "--count", str(count), "--partitions", "1", "--acks", "all", "--timeout-s", "60"]
        for kv in client_extras(client, mechanism, password, self.ca_file, self.truststore):
            cmd += ["--extra", kv]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=200)
        import json
        lines = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
        self.assertTrue(lines and lines[-1].get("done"), p.stderr[-3000:])
        return lines[-1], p.stderr

    def exactly_once(self, client, mechanism, topic):
        self.kafka.create_topic(topic, partitions=1)
        summary, err = self.run_client(client, mechanism, PASSWORD, topic, COUNT)
        self.assertEqual(summary["acked"], COUNT, "%s: %s\n%s" % (client, summary, err[-2000:]))
        records = self.kafka.read_topic(topic)
        if len(records.get(0, [])) < COUNT:  # the consumer tool once read a fresh topic empty: read again
            time.sleep(2)
            records = self.kafka.read_topic(topic)
        keys = [r.key.decode() for r in records[0]]
        self.assertEqual(sorted(keys), sorted("k-%d" % i for i in range(COUNT)), "duplicates or losses")
        self.assertEqual(keys, ["k-%d" % i for i in range(COUNT)], "order")

    def test_java_0102_plain_over_tls(self):
        self.exactly_once("java-0.10", "PLAIN", "sasl-ssl-java-plain")

    def test_java_0102_scram_sha256_over_tls(self):
        self.exactly_once("java-0.10", "SCRAM-SHA-256", "sasl-ssl-java-scram")

    def test_kafka_python_010_plain_over_tls(self):
        self.exactly_once("kafka-python-0.10", "PLAIN", "sasl-ssl-kafka-python")

    def test_confluent_pypi_scram_sha512_over_tls(self):
        self.exactly_once("confluent-pypi", "SCRAM-SHA-512", "sasl-ssl-confluent")

    def test_wrong_password_over_tls(self):
        topic = "sasl-ssl-wrong-password"
        self.kafka.create_topic(topic, partitions=1)
        summary, _ = self.run_client("confluent-pypi", "SCRAM-SHA-512", "not-" + PASSWORD, topic, 5)
        self.assertEqual(summary["acked"], 0, summary)
        self.assertIn("Authentication failed", summary["first_error"] or "")
        self.assertEqual(sum(len(v) for v in self.kafka.read_topic(topic).values()), 0)
        status, body = http_request(self.metrics_port, "/metrics")
        self.assertEqual(status, 200)
        self.assertIn('produce_proxy_client_authentications_total{mechanism="SCRAM-SHA-512",result="bad_password"}',
                      body)
        text = self.proxy.text()
        self.assertIn("client authentication failed: peer 127.0.0.1:", text)
        self.assertNotIn(PASSWORD, text)


def main():
    global ARGS
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--proxy", required=True)
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
