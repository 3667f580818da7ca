#!/usr/bin/env python3
"""The proxy's upstream TLS ([upstream.tls]) against real Apache Kafka 4.4.0.

  /usr/bin/python3 tests/kafka/upstream_tls_test.py --proxy BINARY [unittest args]

One 1-node cluster with four SSL listeners, certificates made by openssl in
this run (tests/kafka/test_pki.py): SSL (a broker certificate for localhost
and 127.0.0.1), MTLS (the same, ssl.client.auth=required), EXPIRED (a
certificate that expired in 2020) and OTHERHOST (a certificate for
kafka.example.net only). A legacy client (kcat, librdkafka in 0.9 mode:
Produce v1, message format 0) produces through the built produce-proxy.

Good paths: over TLS and over mTLS, every record lands exactly once.
Failures (wrong CA, expired certificate, host name mismatch, a broker that
hangs up mid-handshake, an mTLS broker without a client certificate): one log
line naming the broker and OpenSSL's reason, upstream_auth_failures_total
counts the reason, /readyz stays 503. The wrong CA and the host name are then
fixed in the file and applied by SIGHUP: the proxy gets ready and every
record lands exactly once.

Every loop is bounded in count and time; every process started here is
stopped here. All servers listen on 127.0.0.1.
"""

import argparse
import os
import re
import signal
import socket
import sys
import tempfile
import threading
import time
import unittest

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "daemon"))

from kafka_cluster import KafkaCluster, SslListener  # noqa: E402
from test_pki import TestPki  # noqa: E402
from daemon_support import http_request, kcat_produce  # noqa: E402
from proxy_under_test import auth_failures, start_proxy  # noqa: E402

ARGS = None
RECORDS = 300
KCAT_LEGACY = ("-X", "api.version.request=false", "-X", "broker.version.fallback=0.9.0.1", "-K", ":")


def proxy_config(bootstrap, client_port, metrics_port, tls):
    servers = ", ".join('"%s"' % b for b in bootstrap.split(","))
    tls_lines = "\n".join('%s = %s' % (k, ('"%s"' % v) if isinstance(v, str) else str(v).lower())
                          for k, v in tls.items())
    return """
[listener]
address = "127.0.0.1:%d"
[upstream]
bootstrap_servers = [%s]
request_timeout_ms = 5000
[upstream.tls]
enabled = true
%s
[producer]
delivery_timeout_ms = 60000
[metrics]
address = "127.0.0.1:%d"
""" % (client_port, servers, tls_lines, metrics_port)


class HangUpAfterClientHello(threading.Thread):
    """Accepts, reads the ClientHello, closes: a broker dying mid-handshake."""

    def __init__(self):
        super().__init__(daemon=True)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.hellos = 0
        self.stopping = False

    def run(self):
        deadline = time.time() + 120
        while not self.stopping and time.time() < deadline:
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            with conn:
                conn.settimeout(5)
                try:
                    if conn.recv(5)[:1] == b"\x16":  # a TLS handshake record
                        self.hellos += 1
                except OSError:
                    pass
        self.sock.close()

    def stop(self):
        self.stopping = True
        self.join(10)


class UpstreamTls(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="pp-tls-")
        pki = cls.pki = TestPki(cls.tmp.name)
        cls.broker = pki.leaf("broker", "localhost", "DNS:localhost,IP:127.0.0.1")
        cls.expired = pki.leaf("expired", "localhost", "DNS:localhost,IP:127.0.0.1", expired=True)
        cls.other_host = pki.leaf("other-host", "kafka.example.net", "DNS:kafka.example.net")
        cls.client = pki.leaf("client", "produce-proxy", "DNS:produce-proxy")
        cls.kafka = KafkaCluster(nodes=1, ssl_listeners={
            "SSL": SslListener(cls.broker.keystore),
            "MTLS": SslListener(cls.broker.keystore, pki.ca_file, "required"),
            "EXPIRED": SslListener(cls.expired.keystore),
            "OTHERHOST": SslListener(cls.other_host.keystore),
        })
        cls.kafka.start()

    @classmethod
    def tearDownClass(cls):
        cls.kafka.stop()
        cls.tmp.cleanup()

    # ---- helpers

    def start_proxy(self, bootstrap, **tls):
        proxy, client, metrics = start_proxy(self, ARGS.proxy, lambda client, metrics: proxy_config(
            bootstrap, client, metrics, tls), wait_ready=False)
        self.addCleanup(self.assert_clean_exit, proxy)
        return proxy, client, metrics

    def assert_clean_exit(self, proxy):
        self.assertEqual(proxy.stop(30), 0, proxy.text()[-3000:])

    def produce_exactly_once(self, proxy, client_port, topic):
        self.assertTrue(proxy.wait_ready(60), "not ready:\n" + proxy.text()[-4000:])
        lines = ["k%d:%s-%d" % (i, topic, i) for i in range(RECORDS)]
        r = kcat_produce(client_port, topic, lines, *KCAT_LEGACY, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        records = self.kafka.read_topic(topic)
        values = [rec.value.decode() for recs in records.values() for rec in recs]
        self.assertEqual(sorted(values), sorted("%s-%d" % (topic, i) for i in range(RECORDS)),
                         "every record exactly once")

    def wait_auth_failure(self, proxy, metrics_port, reason, timeout=60):
        deadline = time.time() + timeout
        seen = {}
        while time.time() < deadline and proxy.alive():
            try:
                seen = auth_failures(metrics_port)
            except OSError:  # the metrics listener is not up yet
                time.sleep(0.2)
                continue
            if any(r == reason and v >= 1 for (_, r), v in seen.items()):
                return seen
            time.sleep(0.2)
        self.fail("no %s failure counted (saw %s):\n%s" % (reason, seen, proxy.text()[-3000:]))

    def assert_failing(self, proxy, metrics_port, reason, broker, words):
        seen = self.wait_auth_failure(proxy, metrics_port, reason)
        self.assertIn((broker, reason), seen)
        self.assertEqual(http_request(metrics_port, "/readyz")[0], 503, "/readyz must stay not ready")
        line = [l for l in proxy.text().splitlines() if broker in l and reason in l]
        self.assertTrue(line, "a log line naming %s and %s:\n%s" % (broker, reason, proxy.text()[-3000:]))
        self.assertIn(words, line[0])
        self.assertNotIn("PRIVATE KEY", proxy.text())
        return line[0]

    def fix_by_sighup(self, proxy, **tls):
        with open(proxy.config) as f:
            text = f.read()
        for key, value in tls.items():
            text = re.sub(r'(?m)^%s = .*$' % key, '%s = "%s"' % (key, value), text)
            if not re.search(r'(?m)^%s = ' % key, text):
                text = text.replace("enabled = true\n", 'enabled = true\n%s = "%s"\n' % (key, value))
        with open(proxy.config, "w") as f:
            f.write(text)
        proxy.proc.send_signal(signal.SIGHUP)

    # ---- good paths

    def test_tls_exactly_once(self):
        proxy, client, metrics = self.start_proxy(self.kafka.ssl_bootstrap("SSL"), ca_file=self.pki.ca_file)
        self.produce_exactly_once(proxy, client, "tls-plain")
        # The listener speaks SSL only: a plaintext proxy could not have got ready.
        self.assertEqual(auth_failures(metrics), {})
        # SIGHUP re-reads the files; the sessions up are kept, not dropped.
        proxy.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 30
        while "connections up now are kept" not in proxy.text() and time.time() < deadline:
            time.sleep(0.1)
        self.assertIn("SIGHUP: upstream TLS files re-read", proxy.text())
        self.produce_exactly_once(proxy, client, "tls-after-sighup")
        self.assertNotIn("disconnected", proxy.text())

    def test_mtls_exactly_once(self):
        proxy, client, metrics = self.start_proxy(self.kafka.ssl_bootstrap("MTLS"), ca_file=self.pki.ca_file,
                                                  cert_file=self.client.cert, key_file=self.client.key)
        self.produce_exactly_once(proxy, client, "tls-mutual")
        self.assertEqual(auth_failures(metrics), {})

    # ---- failures

    def test_wrong_ca_then_fixed_by_sighup(self):
        bootstrap = self.kafka.ssl_bootstrap("SSL")
        proxy, client, metrics = self.start_proxy(bootstrap, ca_file=self.pki.other_ca_file)
        self.assert_failing(proxy, metrics, "tls_certificate", bootstrap, "certificate verify failed")
        self.fix_by_sighup(proxy, ca_file=self.pki.ca_file)
        self.produce_exactly_once(proxy, client, "tls-fixed-ca")
        self.assertIn("connections up now are kept", proxy.text())

    def test_expired_certificate(self):
        bootstrap = self.kafka.ssl_bootstrap("EXPIRED")
        proxy, _, metrics = self.start_proxy(bootstrap, ca_file=self.pki.ca_file)
        self.assert_failing(proxy, metrics, "tls_certificate", bootstrap, "certificate has expired")

    def test_host_name_mismatch_then_server_name_by_sighup(self):
        bootstrap = self.kafka.ssl_bootstrap("OTHERHOST")
        proxy, client, metrics = self.start_proxy(bootstrap, ca_file=self.pki.ca_file)
        self.assert_failing(proxy, metrics, "tls_hostname", bootstrap, "IP address mismatch")
        self.fix_by_sighup(proxy, server_name="kafka.example.net")
        self.produce_exactly_once(proxy, client, "tls-fixed-name")

    def test_broker_hangs_up_mid_handshake(self):
        server = HangUpAfterClientHello()
        server.start()
        self.addCleanup(server.stop)
        bootstrap = "127.0.0.1:%d" % server.port
        proxy, _, metrics = self.start_proxy(bootstrap, ca_file=self.pki.ca_file)
        self.assert_failing(proxy, metrics, "tls_handshake", bootstrap, "during the TLS handshake")
        self.assertGreaterEqual(server.hellos, 1)

    def test_mtls_broker_without_a_client_certificate(self):
        bootstrap = self.kafka.ssl_bootstrap("MTLS")
        proxy, _, metrics = self.start_proxy(bootstrap, ca_file=self.pki.ca_file)
        # TLS 1.3: the client's handshake ends first; the broker's alert follows.
        line = self.assert_failing(proxy, metrics, "tls_handshake", bootstrap, "alert")
        self.assertIn(" error ", line, "a refused authentication is logged as an error")
        self.assertNotIn("retrying with v0", proxy.text(), "a refusal is no reason to fall back to ApiVersions v0")


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--proxy", required=True)
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
