"""Client TLS on the listener ([listener.tls]) with real clients over real TLS,
through the proxy to the test cluster, every record read back from the
cluster itself (kcat straight to it), exactly once:

  - kafka-python with api_version (0, 10) and a client certificate;
  - kcat in legacy mode (no ApiVersions, broker.version.fallback 0.9.0.1) with
    a client certificate;
  - confluent-kafka, idempotent, with a client certificate (mTLS).

And the failures, each closing only its own connection with one warning
naming the peer and the reason and one count of
client_tls_handshake_failures_total{reason}, nothing produced, while a
producer connected before them goes on: plaintext to the TLS port, TLS to a
plaintext port, an untrusted and an expired client certificate, none at
all, and handshakes that stall (closed at the handshake timeout, their
memory charge given back). SIGHUP re-reads the files: new connections get
the new certificate, a connection up before keeps working, and a reload
that fails keeps the previous files. Session resumption works.

The certificates come from tests/kafka/test_pki.py (the openssl command
line); an untrusted one is self-signed here. Stdlib plus Debian's
python3-kafka and python3-confluent-kafka, run by /usr/bin/python3.
"""
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "daemon"))
sys.path.insert(0, os.path.join(HERE, "..", "kafka"))
import daemon_support as ds  # noqa: E402
from test_pki import TestPki, _openssl  # noqa: E402

ARGS = None
HANDSHAKE_TIMEOUT_MS = 1500


def proxy_config(cluster, port, metrics_port, tls_section):
    return f"""
[listener]
address = "127.0.0.1:{port}"
[upstream]
bootstrap_servers = ["{cluster.bootstrap}"]
[metrics]
address = "127.0.0.1:{metrics_port}"
[log]
level = "debug"
{tls_section}
"""


def tls_section(pki, listener_leaf, client_auth="required", listener_files=None):
    cert, key = listener_files or (listener_leaf.cert, listener_leaf.key)
    ca = f'ca_file = "{pki.ca_file}"\n' if client_auth != "none" else ""
    return (f'[listener.tls]\nenabled = true\ncert_file = "{cert}"\nkey_file = "{key}"\n{ca}'
            f'client_auth = "{client_auth}"\nhandshake_timeout_ms = {HANDSHAKE_TIMEOUT_MS}\n')


def failures(metrics_port, reason):
    _, body = ds.http_request(metrics_port, "/metrics")
    m = re.search(r'^produce_proxy_client_tls_handshake_failures_total\{reason="%s"\} (\S+)$' % reason, body, re.M)
    return float(m.group(1)) if m else 0.0


def memory_used(metrics_port, use):
    _, body = ds.http_request(metrics_port, "/metrics")
    m = re.search(r'^produce_proxy_memory_used_bytes\{use="%s"\} (\S+)$' % use, body, re.M)
    return float(m.group(1)) if m else None


def wait_for(predicate, timeout=20.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


LEGACY = ["-X", "api.version.request=false", "-X", "broker.version.fallback=0.9.0.1"]


class ClientTlsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="pp-client-tls-")
        pki = cls.pki = TestPki(os.path.join(cls.dir, "pki"))
        cls.listener = pki.leaf("listener", cn="localhost", san="DNS:localhost,IP:127.0.0.1")
        cls.client = pki.leaf("client-a", cn="client-a", san="DNS:client-a")
        cls.expired = pki.leaf("client-old", cn="client-old", san="DNS:client-old", expired=True)
        # Untrusted: self-signed, chains to nothing the proxy trusts.
        cls.untrusted = (os.path.join(cls.dir, "untrusted.crt"), os.path.join(cls.dir, "untrusted.key"))
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", cls.untrusted[1], "-out",
                 cls.untrusted[0], "-days", "2", "-subj", "/CN=intruder")
        # The listener's files at paths SIGHUP re-reads.
        cls.live_cert = os.path.join(cls.dir, "live.crt")
        cls.live_key = os.path.join(cls.dir, "live.key")
        shutil.copy(cls.listener.cert, cls.live_cert)
        shutil.copy(cls.listener.key, cls.live_key)

        cls.cluster = ds.TestCluster(ARGS.cluster, "--brokers", "1", "--topic", "tls-kp:1", "--topic", "tls-kcat:1",
                                     "--topic", "tls-ck:2", "--topic", "tls-bad:1", "--topic", "tls-steady:1",
                                     "--topic", "tls-plain:1")
        cls.port, cls.metrics_port = ds.free_port(), ds.free_port()
        cls.proxy = ds.Proxy(ARGS.proxy, proxy_config(
            cls.cluster, cls.port, cls.metrics_port,
            tls_section(pki, cls.listener, listener_files=(cls.live_cert, cls.live_key))))
        assert cls.proxy.wait_ready(), cls.proxy.text()
        cls.plain_port, cls.plain_metrics = ds.free_port(), ds.free_port()
        cls.plain = ds.Proxy(ARGS.proxy, proxy_config(cls.cluster, cls.plain_port, cls.plain_metrics, ""))
        assert cls.plain.wait_ready(), cls.plain.text()

    @classmethod
    def tearDownClass(cls):
        for p in (cls.proxy, cls.plain):
            p.stop()
        cls.cluster.stop()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def records_of(self, topic):
        return ds.kcat_consume(self.cluster.bootstrap, topic)

    def expect_exactly_once(self, topic, keys, timeout=30):
        got = []
        deadline = time.time() + timeout
        while time.time() < deadline:
            got = self.records_of(topic)
            if len(got) >= len(keys):
                break
            time.sleep(0.2)
        self.assertEqual(sorted(k for k, _ in got), sorted(keys), "each record exactly once")

    def kafka_python_producer(self, leaf):
        from kafka import KafkaProducer
        return KafkaProducer(bootstrap_servers=f"localhost:{self.port}", api_version=(0, 10), security_protocol="SSL",
                             ssl_cafile=self.pki.ca_file, ssl_certfile=leaf.cert, ssl_keyfile=leaf.key,
                             ssl_check_hostname=True, acks="all", retries=5, linger_ms=5)

    def test_kafka_python_0_10_over_mtls(self):
        producer = self.kafka_python_producer(self.client)
        keys = [f"kp-{i}" for i in range(500)]
        for k in keys:
            producer.send("tls-kp", key=k.encode(), value=b"v" * 100)
        producer.flush(30)
        producer.close(10)
        self.expect_exactly_once("tls-kp", keys)
        self.assertIn("as User:client-a (TLS certificate)", self.proxy.text())

    def test_kcat_legacy_over_mtls(self):
        keys = [f"kc-{i}" for i in range(300)]
        r = ds.kcat_produce(self.port, "tls-kcat", [f"{k}\tvalue" for k in keys], "-K", "\t", *LEGACY,
                            *self.tls_args((self.client.cert, self.client.key)))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.expect_exactly_once("tls-kcat", keys)

    def test_confluent_kafka_idempotent_over_mtls(self):
        from confluent_kafka import Producer
        p = Producer({"bootstrap.servers": f"127.0.0.1:{self.port}", "security.protocol": "ssl",
                      "ssl.ca.location": self.pki.ca_file, "ssl.certificate.location": self.client.cert,
                      "ssl.key.location": self.client.key, "enable.idempotence": True, "linger.ms": 5})
        errors = []
        keys = [f"ck-{i}" for i in range(2000)]
        for i, k in enumerate(keys):
            p.produce("tls-ck", key=k, value=b"x" * 1024, partition=i % 2,
                      on_delivery=lambda err, msg: errors.append(err) if err else None)
            p.poll(0)
        self.assertEqual(p.flush(30), 0)
        self.assertEqual(errors, [])
        self.expect_exactly_once("tls-ck", keys)

    def expect_failure(self, reason, action, log_pattern):
        before = failures(self.metrics_port, reason)
        log_before = len(self.proxy.text())
        action()
        self.assertTrue(wait_for(lambda: failures(self.metrics_port, reason) == before + 1),
                        f"{reason}: counted once ({failures(self.metrics_port, reason)} after {before})")
        new_log = self.proxy.text()[log_before:]
        lines = [l for l in new_log.splitlines() if "TLS handshake failed (" + reason + ")" in l]
        self.assertEqual(len(lines), 1, new_log)
        self.assertRegex(lines[0], r"closing client 127\.0\.0\.1:\d+: TLS handshake failed \(%s\): %s"
                         % (reason, log_pattern))

    def test_failures_close_only_their_own_connection(self):
        # A producer connected (and producing) before the failures.
        steady = self.kafka_python_producer(self.client)
        steady.send("tls-steady", key=b"before", value=b"v").get(30)

        def kcat_with(leaf_or_files):
            return ds.kcat_produce(self.port, "tls-bad", ["x\ty"], "-K", "\t", *LEGACY,
                                   *self.tls_args(leaf_or_files), timeout=8)

        self.expect_failure("not_tls", lambda: ds.kcat_produce(self.port, "tls-bad", ["x"], *LEGACY, timeout=5),
                            "the first bytes are no TLS handshake record")
        self.expect_failure("certificate", lambda: kcat_with(self.untrusted), "certificate verify failed")
        self.expect_failure("certificate", lambda: kcat_with((self.expired.cert, self.expired.key)),
                            "certificate verify failed: certificate has expired")
        self.expect_failure("no_certificate", lambda: kcat_with(None), "the client sent no certificate")

        steady.send("tls-steady", key=b"after", value=b"v").get(30)
        steady.close(10)
        self.expect_exactly_once("tls-steady", ["before", "after"])
        self.assertEqual(self.records_of("tls-bad"), [], "nothing produced by a refused client")
        self.assertTrue(self.proxy.alive())

    def tls_args(self, leaf_or_files):
        args = ["-X", "security.protocol=ssl", "-X", f"ssl.ca.location={self.pki.ca_file}"]
        if leaf_or_files is not None:
            cert, key = leaf_or_files
            args += ["-X", f"ssl.certificate.location={cert}", "-X", f"ssl.key.location={key}"]
        return args

    def test_tls_to_the_plaintext_listener(self):
        before = failures(self.plain_metrics, "plaintext_listener")
        log_before = len(self.plain.text())
        r = ds.kcat_produce(self.plain_port, "tls-plain", ["x"], *LEGACY, *self.tls_args(None), timeout=5)
        self.assertNotEqual(r.returncode, 0)
        self.assertTrue(wait_for(lambda: failures(self.plain_metrics, "plaintext_listener") >= before + 1))
        new_log = self.plain.text()[log_before:]
        self.assertRegex(new_log, r"closing client 127\.0\.0\.1:\d+: it began a TLS handshake, but this listener "
                                  r"is plaintext")
        self.assertEqual(self.records_of("tls-plain"), [])

    def test_stalled_handshakes_time_out_and_give_their_memory_back(self):
        before = failures(self.metrics_port, "timeout")
        stalled = []
        for i in range(20):
            s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
            if i % 2:
                s.sendall(b"\x16\x03\x01\x02\x00\x01")  # a ClientHello's first bytes, then nothing
            stalled.append(s)
        self.assertTrue(wait_for(lambda: memory_used(self.metrics_port, "tls_handshakes") == 20 * 65536, 10),
                        memory_used(self.metrics_port, "tls_handshakes"))
        # A client handshaking meanwhile is served at once.
        ctx = ssl.create_default_context(cafile=self.pki.ca_file)
        ctx.load_cert_chain(self.client.cert, self.client.key)
        with ctx.wrap_socket(socket.create_connection(("127.0.0.1", self.port), timeout=5),
                             server_hostname="localhost") as probe:
            self.assertEqual(probe.version()[:3], "TLS")
        self.assertTrue(wait_for(lambda: failures(self.metrics_port, "timeout") == before + 20, 10))
        # The gauge is sampled every 200 ms.
        self.assertTrue(wait_for(lambda: memory_used(self.metrics_port, "tls_handshakes") == 0, 5),
                        memory_used(self.metrics_port, "tls_handshakes"))
        for s in stalled:
            s.settimeout(5)
            self.assertEqual(s.recv(100), b"", "closed by the proxy")
            s.close()
        self.assertRegex(self.proxy.text(), r"TLS handshake failed \(timeout\): not done within %d ms"
                         % HANDSHAKE_TIMEOUT_MS)

    def test_session_resumption(self):
        ctx = ssl.create_default_context(cafile=self.pki.ca_file)
        ctx.load_cert_chain(self.client.cert, self.client.key)
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2  # the session is known right after the handshake
        with ctx.wrap_socket(socket.create_connection(("127.0.0.1", self.port)), server_hostname="localhost") as a:
            session = a.session
        with ctx.wrap_socket(socket.create_connection(("127.0.0.1", self.port)), server_hostname="localhost",
                             session=session) as b:
            self.assertTrue(b.session_reused)

    def test_sighup_rereads_the_files_and_keeps_open_connections(self):
        steady = self.kafka_python_producer(self.client)
        steady.send("tls-steady", key=b"sighup-before", value=b"v").get(30)
        replacement = self.pki.leaf("listener-2", cn="localhost", san="DNS:localhost,IP:127.0.0.1")

        def served_serial():
            ctx = ssl.create_default_context(cafile=self.pki.ca_file)
            ctx.load_cert_chain(self.client.cert, self.client.key)
            with ctx.wrap_socket(socket.create_connection(("127.0.0.1", self.port)),
                                 server_hostname="localhost") as s:
                return s.getpeercert()["serialNumber"]

        first = served_serial()
        # A broken key: the reload fails and the previous files stay.
        with open(self.live_key, "w") as f:
            f.write("-----BEGIN PRIVATE KEY-----\nbroken\n-----END PRIVATE KEY-----\n")
        self.proxy.proc.send_signal(signal.SIGHUP)
        self.assertTrue(wait_for(lambda: "new client connections keep the previous TLS files" in self.proxy.text()))
        self.assertEqual(served_serial(), first)
        shutil.copy(replacement.cert, self.live_cert)
        shutil.copy(replacement.key, self.live_key)
        mark = self.proxy.text().count("SIGHUP: listener TLS files re-read")
        self.proxy.proc.send_signal(signal.SIGHUP)
        self.assertTrue(wait_for(lambda: self.proxy.text().count("SIGHUP: listener TLS files re-read") > mark))
        self.assertNotEqual(served_serial(), first)
        steady.send("tls-steady", key=b"sighup-after", value=b"v").get(30)
        steady.close(10)
        got = [k for k, _ in self.records_of("tls-steady")]
        self.assertEqual(got.count("sighup-before"), 1)
        self.assertEqual(got.count("sighup-after"), 1)
        shutil.copy(self.listener.cert, self.live_cert)
        shutil.copy(self.listener.key, self.live_key)


if __name__ == "__main__":
    ds.run_tests(sys.modules[__name__], "--cluster")
