#!/usr/bin/env python3
"""The proxy with [upstream.tls] and [upstream.sasl] together against SASL_SSL
listeners of real Apache Kafka 4.4.0.

  /usr/bin/python3 tests/kafka/sasl_ssl_test.py --proxy BINARY [unittest args]

One 1-node KRaft cluster with two SASL_SSL listeners (certificates made by
openssl in the test, test_pki.py): SASL_SSL (server certificate only) and
SASL_MTLS (ssl.client.auth=required, so the proxy must present a client
certificate before SASL starts). Both offer PLAIN (JAAS users), SCRAM-SHA-512
(user created at format time) and OAUTHBEARER (Kafka's unsecured validator).
A legacy client (confluent-kafka in 0.9 mode: Produce v1, magic 0, no client
retries) produces through the proxy; the topic is read back on the
PLAINTEXT listener. Cases:

1. PLAIN, SCRAM-SHA-512 and OAUTHBEARER over TLS: every acknowledged record
   exactly once, nothing lost, no auth failure counted, and the ready line
   says the session is SASL-authenticated (so SASL ran inside TLS: the
   listener speaks nothing else).
2. mTLS plus SCRAM-SHA-512 on the listener that requires client certificates;
   without the certificate that listener refuses the TLS handshake
   (tls_handshake counted, no SASL attempt reached).
3. A wrong password over SASL_SSL: the TLS handshake succeeds, SASL fails;
   one log line naming the broker and the reason, the auth-failure metric
   counts reason sasl_authentication (never a TLS reason), /readyz stays 503,
   and the password is in no log line, no metric, no --check-config output.

Every check asserts; every loop is bounded in count and time; every process
started here is stopped here. All servers listen on 127.0.0.1.
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

from kafka_cluster import KafkaCluster, SslListener, unsecured_jwt  # noqa: E402
from test_pki import TestPki  # noqa: E402
from daemon_support import http_request  # noqa: E402
from proxy_under_test import scrape_all, start_proxy, total, wait_metric  # noqa: E402
from sasl_test import PARTITIONS, produce, say  # noqa: E402

ARGS = None
PLAIN_PASSWORD = "plain-TlsSecret-2718"
SCRAM_PASSWORD = "scram-TlsSecret-3141"
SASL = {
    "mechanisms": ["PLAIN", "SCRAM-SHA-512", "OAUTHBEARER"],
    "plain_users": {"proxy": PLAIN_PASSWORD},
    "scram_users": [("SCRAM-SHA-512", "proxy", SCRAM_PASSWORD)],
}


def proxy_config(bootstrap, client_port, metrics_port, tls_lines, sasl_lines):
    servers = ", ".join('"%s"' % b for b in bootstrap.split(","))
    return """
[listener]
address = "127.0.0.1:%d"
[upstream]
bootstrap_servers = [%s]
request_timeout_ms = 10000
[upstream.tls]
enabled = true
%s
[upstream.sasl]
%s
[producer]
delivery_timeout_ms = 60000
[metrics]
address = "127.0.0.1:%d"
[log]
level = "info"
""" % (client_port, servers, tls_lines, sasl_lines, metrics_port)


class SaslSslTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="pp-sasl-ssl-")
        cls.pki = TestPki(os.path.join(cls.tmp.name, "pki"))
        cls.broker = cls.pki.leaf("broker", "localhost", "DNS:localhost,IP:127.0.0.1")
        cls.client = cls.pki.leaf("client", "produce-proxy", "DNS:produce-proxy")
        cls.kafka = KafkaCluster(nodes=1, sasl=SASL, ssl_listeners={
            "SASL_SSL": SslListener(cls.broker.keystore, sasl=True),
            "SASL_MTLS": SslListener(cls.broker.keystore, cls.pki.ca_file, "required", sasl=True),
        })
        cls.kafka.start()
        say("kafka up in %.1f s; SASL_SSL %s, SASL_MTLS %s", cls.kafka.startup_seconds,
            cls.kafka.ssl_bootstrap("SASL_SSL"), cls.kafka.ssl_bootstrap("SASL_MTLS"))

    @classmethod
    def tearDownClass(cls):
        cls.kafka.stop()
        cls.tmp.cleanup()

    def secret_file(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o600)
        return path

    def tls_lines(self, mutual=False):
        lines = 'ca_file = "%s"' % self.pki.ca_file
        if mutual:
            lines += '\ncert_file = "%s"\nkey_file = "%s"' % (self.client.cert, self.client.key)
        return lines

    def start_proxy(self, bootstrap, tls_lines, sasl_lines, wait_ready=True):
        return start_proxy(self, ARGS.proxy, lambda client, metrics: proxy_config(
            bootstrap, client, metrics, tls_lines, sasl_lines), wait_ready=wait_ready)

    def run_exactly_once(self, topic, sasl_lines, mutual=False, count=500):
        self.kafka.create_topic(topic, partitions=PARTITIONS)
        listener = "SASL_MTLS" if mutual else "SASL_SSL"
        proxy, client, metrics = self.start_proxy(self.kafka.ssl_bootstrap(listener), self.tls_lines(mutual),
                                                  sasl_lines)
        sent, acked, failed, unflushed = produce(client, topic, count)
        counts = {}
        for recs in self.kafka.read_topic(topic, timeout=60).values():
            for r in recs:
                counts[r.value] = counts.get(r.value, 0) + 1
        duplicates = [v for v, n in counts.items() if n > 1]
        lost = [v for v in acked if v not in counts]
        say("  %s: sent %d, acked %d, failed %d, in log %d, duplicates %d, lost %d", topic, sent, len(acked),
            len(failed), sum(counts.values()), len(duplicates), len(lost))
        self.assertEqual((unflushed, failed, len(acked)), (0, [], sent))
        self.assertEqual((duplicates, lost, sum(counts.values())), ([], [], count))
        log = proxy.text()
        self.assertRegex(log, r"ready \(ApiVersions v\d+\): .*authenticated with SASL")
        self.assertEqual(total(scrape_all(metrics), "upstream_auth_failures_total"), 0, log[-3000:])
        self.assertEqual(proxy.stop(60), 0, log[-3000:])
        return proxy.text()

    def test_plain_over_tls(self):
        # No allow_plain_without_tls: over TLS, PLAIN needs no exception.
        path = self.secret_file("plain.pw", PLAIN_PASSWORD + "\n")
        log = self.run_exactly_once("sasl-ssl-plain",
                                    'mechanism = "PLAIN"\nusername = "proxy"\npassword_file = "%s"' % path)
        self.assertNotIn(PLAIN_PASSWORD, log)

    def test_scram_sha512_over_tls(self):
        path = self.secret_file("scram.pw", SCRAM_PASSWORD)
        log = self.run_exactly_once("sasl-ssl-scram512",
                                    'mechanism = "SCRAM-SHA-512"\nusername = "proxy"\npassword_file = "%s"' % path)
        self.assertNotIn(SCRAM_PASSWORD, log)

    def test_oauthbearer_over_tls(self):
        token = unsecured_jwt("proxy", time.time() + 3600)
        path = self.secret_file("token", token + "\n")
        log = self.run_exactly_once("sasl-ssl-oauth", 'mechanism = "OAUTHBEARER"\ntoken_file = "%s"' % path)
        self.assertNotIn(token, log)

    def test_scram_sha512_over_mtls(self):
        path = self.secret_file("scram-mtls.pw", SCRAM_PASSWORD)
        log = self.run_exactly_once("sasl-mtls-scram512",
                                    'mechanism = "SCRAM-SHA-512"\nusername = "proxy"\npassword_file = "%s"' % path,
                                    mutual=True)
        self.assertNotIn("PRIVATE KEY", log)

    def test_mtls_listener_refuses_sasl_without_a_client_certificate(self):
        # Proves the listener does require the certificate, so the mTLS case
        # above really authenticated twice (certificate, then SASL).
        path = self.secret_file("scram-nocert.pw", SCRAM_PASSWORD)
        bootstrap = self.kafka.ssl_bootstrap("SASL_MTLS")
        proxy, _, metrics = self.start_proxy(
            bootstrap, self.tls_lines(), 'mechanism = "SCRAM-SHA-512"\nusername = "proxy"\npassword_file = "%s"' % path,
            wait_ready=False)
        m = wait_metric(self, proxy, metrics, "upstream_auth_failures_total", 1)
        self.assertGreaterEqual(total(m, "upstream_auth_failures_total", broker=bootstrap, reason="tls_handshake"), 1,
                                proxy.text()[-3000:])
        self.assertEqual(total(m, "upstream_auth_failures_total", reason="sasl_authentication"), 0)
        self.assertEqual(http_request(metrics, "/readyz")[0], 503)

    def test_wrong_password_over_tls(self):
        wrong = "wrong-TlsSecret-1618"
        path = self.secret_file("wrong.pw", wrong)
        bootstrap = self.kafka.ssl_bootstrap("SASL_SSL")
        proxy, _, metrics = self.start_proxy(
            bootstrap, self.tls_lines(), 'mechanism = "SCRAM-SHA-512"\nusername = "proxy"\npassword_file = "%s"' % path,
            wait_ready=False)
        m = wait_metric(self, proxy, metrics, "upstream_auth_failures_total", 1)
        log = proxy.text()
        self.assertGreaterEqual(total(m, "upstream_auth_failures_total", reason="sasl_authentication"), 1, log[-3000:])
        self.assertEqual(total(m, "upstream_auth_failures_total"),
                         total(m, "upstream_auth_failures_total", reason="sasl_authentication"),
                         "TLS itself succeeded: no TLS reason may be counted")
        self.assertEqual(http_request(metrics, "/readyz")[0], 503)
        self.assertTrue(proxy.alive())
        lines = [line for line in log.splitlines() if "authentication failed (sasl_authentication)" in line]
        self.assertTrue(lines, log[-3000:])
        self.assertIn(bootstrap, lines[0])
        self.assertIn("SASL_AUTHENTICATION_FAILED", lines[0])
        _, body = http_request(metrics, "/metrics")
        check = subprocess.run([ARGS.proxy, "--check-config", "--config", proxy.config], capture_output=True,
                               text=True, timeout=30)
        self.assertEqual(check.returncode, 0, check.stderr)
        for where, text in (("log", log), ("/metrics", body), ("--check-config", check.stdout + check.stderr)):
            self.assertNotIn(wrong, text, where)
            self.assertNotIn(SCRAM_PASSWORD, text, where)
            self.assertNotIn("PRIVATE KEY", text, where)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy", required=True, help="the produce-proxy binary")
    ARGS, rest = parser.parse_known_args()
    ARGS.proxy = os.path.abspath(ARGS.proxy)
    unittest.main(argv=[sys.argv[0], "-v", *rest])


if __name__ == "__main__":
    main()
