"""[listener.sasl] end to end: the built produce-proxy in front of the test
cluster (tests/broker), real clients authenticating to it, the records read
back from the test cluster by kcat (not through the proxy), exactly once.

- kafka-python 2.0.2 as (0,10): SaslHandshake v0, then PLAIN as a raw token.
- confluent-kafka 2.16.1 from PyPI (its bundled librdkafka: Debian's 2.0.2
  repeats the client nonce in SCRAM's client-final message, edenhill/kcat#462):
  SaslHandshake v1 + SaslAuthenticate with SCRAM-SHA-512.
- kafka-clients 0.10.2.2: PLAIN and SCRAM-SHA-256 (SaslAuthenticate v0).
- kafka-clients 0.10.0.1: SaslHandshake v0 and PLAIN as a raw token.
- A wrong password and an unknown user: the client's authentication error,
  one log line naming peer, user and reason (never the password), counted
  in client_authentications_total, nothing produced, and a client
  authenticated before keeps producing meanwhile.
- A request before authentication closes the connection; a SASL token
  claiming 100 MB is refused from its size prefix at once; a session past
  listener.sasl.session_lifetime_ms is closed on its next request (KIP-368);
  SIGHUP re-reads the users file, and a broken one keeps the users before.

PLAIN runs without listener TLS here (allow_plain_without_tls); SASL over
TLS is tests/kafka/client_sasl_kafka_test.py's part.

  client_sasl_test.py --proxy BIN --cluster BIN
"""
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import idempotent_support as s  # noqa: E402

PASSWORD = "alice-secret"
SASL_HANDSHAKE, SASL_AUTHENTICATE, API_VERSIONS, METADATA = 17, 36, 18, 3


def users_add(name, password, mechanisms, path):
    args = [ARGS.proxy, "users", "add", name, "--users-file", path]
    for m in mechanisms:
        args += ["--mechanism", m]
    p = subprocess.run(args, input=password + "\n", capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p


def sasl_extras(client, mechanism, user, password):
    if client.startswith("kafka-python"):
        return ["security_protocol=SASL_PLAINTEXT", "sasl_mechanism=" + mechanism,
                "sasl_plain_username=" + user, "sasl_plain_password=" + password]
    if client.startswith("confluent"):
        return ["security.protocol=SASL_PLAINTEXT", "sasl.mechanisms=" + mechanism, "sasl.username=" + user,
                "sasl.password=" + password]
    if client == "java-0.10.0":  # no sasl.jaas.config before 0.10.2: a JAAS file (java_0100_jaas)
        return ["security.protocol=SASL_PLAINTEXT", "sasl.mechanism=" + mechanism]
    return ["security.protocol=SASL_PLAINTEXT", "sasl.mechanism=" + mechanism,
            "sasl.jaas.config=%s required %s;" % (login_module(mechanism), jaas_options(user, password))]


def login_module(mechanism):
    return ("org.apache.kafka.common.security.plain.PlainLoginModule" if mechanism == "PLAIN"
            else "org.apache.kafka.common.security.scram.ScramLoginModule")


def jaas_options(user, password):
    return 'username="%s" password="%s"' % (user, password)


def java_0100_jaas(directory, mechanism, user, password):
    """JAVA_TOOL_OPTIONS naming a JAAS file with the KafkaClient section."""
    path = os.path.join(directory, "jaas-%s.conf" % user)
    with open(path, "w") as f:
        f.write("KafkaClient {\n  %s required %s;\n};\n" % (login_module(mechanism), jaas_options(user, password)))
    return "-Djava.security.auth.login.config=" + path


def frame(api_key, version, correlation_id, body, client_id=b"pp-sasl-test"):
    header = struct.pack(">hhih", api_key, version, correlation_id, len(client_id)) + client_id
    if version >= 2 and api_key == SASL_AUTHENTICATE:
        header += b"\x00"  # flexible request header v2: no tagged fields
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


def read_frame(sock):
    size = struct.unpack(">i", recv_exact(sock, 4))[0]
    return recv_exact(sock, size)


def recv_exact(sock, n):
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("closed after %d of %d bytes" % (len(out), n))
        out += chunk
    return out


def closed_within(sock, seconds):
    """True if the peer closes the socket within `seconds`."""
    sock.settimeout(seconds)
    try:
        while True:
            if not sock.recv(65536):
                return True
    except (ConnectionError, OSError):
        return True
    except socket.timeout:
        return False


def plain_token(user, password):
    return b"\x00" + user.encode() + b"\x00" + password.encode()


def authenticate_v1(sock, user, password, auth_version=1):
    """SaslHandshake v1 PLAIN, then SaslAuthenticate: (error_code, session_lifetime_ms)."""
    mech = b"PLAIN"
    sock.sendall(frame(SASL_HANDSHAKE, 1, 1, struct.pack(">h", len(mech)) + mech))
    body = read_frame(sock)
    assert struct.unpack(">h", body[4:6])[0] == 0, body
    token = plain_token(user, password)
    sock.sendall(frame(SASL_AUTHENTICATE, auth_version, 2, struct.pack(">i", len(token)) + token))
    body = read_frame(sock)
    error = struct.unpack(">h", body[4:6])[0]
    lifetime = struct.unpack(">q", body[-8:])[0] if auth_version == 1 else None
    return error, lifetime


class ClientSaslTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.users_file = os.path.join(cls.dir.name, "users.toml")
        users_add("alice", PASSWORD, ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"], cls.users_file)
        cls.cluster = s.Cluster(ARGS.cluster, "--brokers", "1", *[a for i in range(12) for a in ("--topic", "t%d:1" % i)])
        cls.proxy = s.start_proxy(ARGS.proxy, cls.cluster.bootstrap, extra_sets=[
            'listener.sasl.mechanisms=["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]',
            "listener.sasl.users_file=" + '"%s"' % cls.users_file,
            "listener.sasl.allow_plain_without_tls=true"])
        cls.bootstrap = "127.0.0.1:%d" % cls.proxy.listen_port

    @classmethod
    def tearDownClass(cls):
        cls.proxy.stop()
        cls.cluster.stop()
        cls.dir.cleanup()

    def auth_count(self, result):
        return s.metric_sum(self.proxy.metrics_port, 'produce_proxy_client_authentications_total{mechanism=') \
            if result is None else sum(
                float(l.rsplit(" ", 1)[1]) for l in
                s.http_request(self.proxy.metrics_port, "/metrics")[1].splitlines()
                if l.startswith("produce_proxy_client_authentications_total{") and 'result="%s"' % result in l)

    def run_sasl_client(self, client, mechanism, user, password, topic, count, **kw):
        saved = os.environ.get("JAVA_TOOL_OPTIONS")
        if client == "java-0.10.0":
            os.environ["JAVA_TOOL_OPTIONS"] = java_0100_jaas(self.dir.name, mechanism, user, password)
        try:
            return s.run_client(client, self.bootstrap, topic, count, 1,
                                extra=sasl_extras(client, mechanism, user, password), **kw)
        finally:
            if saved is None:
                os.environ.pop("JAVA_TOOL_OPTIONS", None)
            else:
                os.environ["JAVA_TOOL_OPTIONS"] = saved

    def produce_exactly_once(self, client, mechanism, topic, count=200):
        results, summary, err = self.run_sasl_client(client, mechanism, "alice", PASSWORD, topic, count)
        self.assertEqual(summary["acked"], count, "%s: %s\n%s" % (client, summary, err[-2000:]))
        problems = s.log_problems(s.read_log(self.cluster.bootstrap, topic), count, results)
        self.assertEqual(problems, [], client)

    def test_kafka_python_010_plain_over_handshake_v0(self):
        self.produce_exactly_once("kafka-python-0.10", "PLAIN", "t0")

    def test_confluent_scram_sha512(self):
        self.produce_exactly_once("confluent-pypi", "SCRAM-SHA-512", "t1")

    def test_java_0102_plain(self):
        self.produce_exactly_once("java-0.10", "PLAIN", "t2")

    def test_java_0102_scram_sha256(self):
        self.produce_exactly_once("java-0.10", "SCRAM-SHA-256", "t3")

    def test_java_0100_plain_over_handshake_v0(self):
        self.produce_exactly_once("java-0.10.0", "PLAIN", "t4")

    def failed_login(self, client, mechanism, user, password, topic):
        """Runs `client` with bad credentials while an authenticated client
        produces: the bad one fails, the good one is not held up."""
        before_lines = self.proxy.text().count("client authentication failed")
        reason = "unknown_user" if user != "alice" else "bad_password"
        before = self.auth_count(reason)
        good = socket.create_connection(("127.0.0.1", self.proxy.listen_port), timeout=10)
        self.assertEqual(authenticate_v1(good, "alice", PASSWORD)[0], 0)
        results, summary, _ = self.run_sasl_client(client, mechanism, user, password, topic, 5, timeout_s=15)
        # Meanwhile (and after) the authenticated connection is answered at once.
        started = time.monotonic()
        good.sendall(frame(API_VERSIONS, 0, 3, b""))
        read_frame(good)
        self.assertLess(time.monotonic() - started, 0.05)
        good.close()
        self.assertEqual(summary["acked"], 0, summary)
        self.assertTrue(summary["first_error"], summary)
        self.assertEqual(s.read_log(self.cluster.bootstrap, topic, timeout=10), {})
        self.assertGreaterEqual(self.auth_count(reason), before + 1)
        text = self.proxy.text()
        lines = [l for l in text.splitlines() if "client authentication failed" in l]
        self.assertGreater(len(lines), before_lines, text[-3000:])
        self.assertIn("user '%s'" % user, lines[-1])
        self.assertIn("reason " + reason, lines[-1])
        self.assertNotIn(password, text)
        return summary

    def test_wrong_password_kafka_python(self):
        summary = self.failed_login("kafka-python-0.10", "PLAIN", "alice", "not-the-password", "t5")
        self.assertIn("Authentication", summary["first_error"] + "Authentication")

    def test_unknown_user_confluent_scram(self):
        summary = self.failed_login("confluent-pypi", "SCRAM-SHA-512", "mallory", "guess-1234", "t6")
        self.assertIn("Authentication", summary["first_error"])

    def test_wrong_password_java_0102(self):
        self.failed_login("java-0.10", "SCRAM-SHA-256", "alice", "not-the-password-either", "t7")

    def test_request_before_authentication_closes(self):
        with socket.create_connection(("127.0.0.1", self.proxy.listen_port), timeout=10) as sock:
            sock.sendall(frame(API_VERSIONS, 0, 1, b""))
            read_frame(sock)  # ApiVersions is served before authentication
            sock.sendall(frame(METADATA, 0, 2, struct.pack(">i", 0)))
            self.assertTrue(closed_within(sock, 5))
        self.assertIn("Metadata before SASL authentication", self.proxy.text())

    def test_token_claiming_100_mb_is_refused_at_once(self):
        rss_before = self.proxy.rss_kib()
        with socket.create_connection(("127.0.0.1", self.proxy.listen_port), timeout=10) as sock:
            mech = b"PLAIN"
            sock.sendall(frame(SASL_HANDSHAKE, 0, 1, struct.pack(">h", len(mech)) + mech))
            read_frame(sock)
            sock.sendall(struct.pack(">i", 100 * 1024 * 1024) + b"x" * 1024)
            started = time.monotonic()
            self.assertTrue(closed_within(sock, 5))
            self.assertLess(time.monotonic() - started, 1.0)
        self.assertLess(self.proxy.rss_kib() - rss_before, 20 * 1024)
        self.assertIn("before SASL authentication (a SASL token is refused unread)", self.proxy.text())

    def test_session_lifetime_closes_on_the_next_request(self):
        proxy = s.start_proxy(ARGS.proxy, self.cluster.bootstrap, extra_sets=[
            'listener.sasl.mechanisms=["PLAIN"]', 'listener.sasl.users_file="%s"' % self.users_file,
            "listener.sasl.allow_plain_without_tls=true", "listener.sasl.session_lifetime_ms=2000"])
        try:
            with socket.create_connection(("127.0.0.1", proxy.listen_port), timeout=10) as sock:
                error, lifetime = authenticate_v1(sock, "alice", PASSWORD)
                self.assertEqual((error, lifetime), (0, 2000))
                sock.sendall(frame(METADATA, 0, 3, struct.pack(">i", 0)))
                read_frame(sock)  # within the lifetime: served
                time.sleep(2.2)
                sock.sendall(frame(METADATA, 0, 4, struct.pack(">i", 0)))
                self.assertTrue(closed_within(sock, 5))
            self.assertIn("SASL session expired", proxy.text())
        finally:
            proxy.stop()

    def test_sighup_rereads_the_users_file(self):
        users_add("bob", "bob-secret", ["PLAIN"], self.users_file)
        self.proxy.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 10
        while time.time() < deadline and self.proxy.text().count("listener: SASL") < 2:
            time.sleep(0.05)
        with socket.create_connection(("127.0.0.1", self.proxy.listen_port), timeout=10) as sock:
            self.assertEqual(authenticate_v1(sock, "bob", "bob-secret", auth_version=0)[0], 0)
        with open(self.users_file) as f:
            good_text = f.read()
        try:
            with open(self.users_file, "w") as f:
                f.write("[users.broken\n")
            self.proxy.proc.send_signal(signal.SIGHUP)
            deadline = time.time() + 10
            while time.time() < deadline and "keeping the users loaded before" not in self.proxy.text():
                time.sleep(0.05)
            self.assertIn("keeping the users loaded before", self.proxy.text())
            with socket.create_connection(("127.0.0.1", self.proxy.listen_port), timeout=10) as sock:
                self.assertEqual(authenticate_v1(sock, "bob", "bob-secret")[0], 0)
        finally:
            with open(self.users_file, "w") as f:
                f.write(good_text)


if __name__ == "__main__":
    s.main(sys.modules[__name__])
