"""[[listener.principals]] end to end: the built produce-proxy in front of the
test cluster (tests/broker), clients speaking the real protocol.

- One Produce request naming an allowed and a forbidden topic: only the
  forbidden topic's partitions are answered TOPIC_AUTHORIZATION_FAILED, and
  the allowed records land exactly once (read back from the test cluster by
  kcat, not through the proxy).
- Metadata naming a forbidden topic answers TOPIC_AUTHORIZATION_FAILED; a
  listing of every topic leaves it out.
- InitProducerId without IDEMPOTENT_WRITE: CLUSTER_AUTHORIZATION_FAILED.
- The produce quota (KIP-219): a client offering ten times its principal's
  produce_bytes_per_second is held to within 10 % of it, every response
  carrying the throttle time.

PrincipalAccess's clients are unauthenticated loopback clients: the rules
name ANONYMOUS, which restricts them (without such a rule they are
unrestricted). TwoPrincipalQuota logs two users in with SASL PLAIN
([listener.sasl]): one is held to its quota while the other, beside it, is
not slowed.

  principal_access_test.py --proxy BIN --cluster BIN [--quota-seconds N]
"""
import io
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import idempotent_support as s  # noqa: E402
from kafka.protocol.admin import SaslAuthenticateRequest_v0, SaslHandShakeRequest_v1  # noqa: E402
from kafka.protocol.api import RequestHeader  # noqa: E402
from kafka.protocol.api import Request, Response  # noqa: E402
from kafka.protocol.metadata import MetadataRequest  # noqa: E402
from kafka.protocol.produce import ProduceRequest  # noqa: E402
from kafka.protocol.types import Int16, Int32, Int64, Schema, String  # noqa: E402
from kafka.record.memory_records import MemoryRecordsBuilder  # noqa: E402

TOPIC_AUTHORIZATION_FAILED = 29
CLUSTER_AUTHORIZATION_FAILED = 31
QUOTA = 200000          # bytes/s the quota test's principal may produce
QUOTA_SECONDS = 10      # measured after a 2 s warm-up; --quota-seconds 30 for BENCHMARKS.md


class InitProducerIdResponseV0(Response):
    """kafka-python 2.0.2 has no InitProducerId: v0 from Kafka's message JSON."""
    API_KEY = 22
    API_VERSION = 0
    SCHEMA = Schema(("throttle_time_ms", Int32), ("error_code", Int16), ("producer_id", Int64),
                    ("producer_epoch", Int16))


class InitProducerIdRequestV0(Request):
    API_KEY = 22
    API_VERSION = 0
    RESPONSE_TYPE = InitProducerIdResponseV0
    SCHEMA = Schema(("transactional_id", String("utf-8")), ("transaction_timeout_ms", Int32))


def records(values):
    b = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 22)
    for v in values:
        b.append(timestamp=None, key=v, value=v, headers=[])
    b.close()
    return b.buffer()


def start_proxy(bootstrap, extra_config):
    listen, metrics = s.free_port(), s.free_port()
    servers = ",".join('"%s"' % b for b in bootstrap.split(","))
    proxy = s.Proxy(ARGS.proxy, config_text="""
[listener]
address = "127.0.0.1:%d"
[upstream]
bootstrap_servers = [%s]
[metrics]
address = "127.0.0.1:%d"
%s""" % (listen, servers, metrics, extra_config))
    if not proxy.wait_ready(timeout=60):
        text = proxy.text()
        proxy.stop()
        raise AssertionError("produce-proxy not ready:\n" + text[-4000:])
    proxy.listen_port, proxy.metrics_port = listen, metrics
    return proxy


class Conn:
    """One client connection speaking raw Kafka requests (kafka-python's
    encoders), so a request can name exactly what the test wants."""

    def __init__(self, port, user=None, password=None):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.correlation = 0
        if user is not None:
            # SaslHandshake v1 + SaslAuthenticate v0 (KIP-152), PLAIN.
            handshake = self.call(SaslHandShakeRequest_v1(mechanism="PLAIN"))
            assert handshake.error_code == 0, handshake
            token = b"\0" + user.encode() + b"\0" + password.encode()
            auth = self.call(SaslAuthenticateRequest_v0(sasl_auth_bytes=token))
            assert auth.error_code == 0, auth

    def call(self, request):
        self.correlation += 1
        header = RequestHeader(request, correlation_id=self.correlation, client_id="principal-test")
        payload = header.encode() + request.encode()
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)
        size = struct.unpack(">i", self._read(4))[0]
        body = io.BytesIO(self._read(size))
        correlation = struct.unpack(">i", body.read(4))[0]
        assert correlation == self.correlation, (correlation, self.correlation)
        return request.RESPONSE_TYPE.decode(body)

    def _read(self, n):
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("proxy closed the connection")
            out += chunk
        return out

    def close(self):
        self.sock.close()


class Offer:
    """One connection offering `rate` bytes/s of Produce requests (about
    20 KB each, acks=1) to one partition of `topic`, sending the next one
    when the answer is in and the pace allows: a muted connection's next
    answer comes late, which slows it as a throttled client is slowed."""

    def __init__(self, test, conn, topic, rate):
        self.test, self.conn = test, conn
        self.payload = records([b"q" * 1000 for _ in range(20)])
        self.interval = len(self.payload) / rate
        self.request = ProduceRequest[3](transactional_id=None, required_acks=1, timeout=10000,
                                         topics=[(topic, [(0, self.payload)])])
        self.throttles = []
        self.rate, self.elapsed, self.throttled = 0.0, 0.0, 0

    def run(self, seconds):
        sent, end = 0, time.monotonic() + seconds
        while time.monotonic() < end:
            started = time.monotonic()
            response = self.conn.call(self.request)
            self.test.assertEqual(response.topics[0][1][0][1], 0)
            self.throttles.append(response.throttle_time_ms)
            sent += len(self.payload)
            time.sleep(max(0.0, self.interval - (time.monotonic() - started)))
        return sent

    def measure(self, seconds):
        self.throttles = []
        started = time.monotonic()
        sent = self.run(seconds)
        # The last request's mute ends after the measured period; its bytes
        # count when the connection may send again.
        self.elapsed = time.monotonic() - started + self.throttles[-1] / 1000.0
        self.rate = sent / self.elapsed
        self.throttled = sum(1 for t in self.throttles if t > 0)

    def __str__(self):
        return "%.0f B/s over %.1f s, %d of %d responses throttled" % (
            self.rate, self.elapsed, self.throttled, len(self.throttles))


class PrincipalAccess(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = s.Cluster(ARGS.cluster, "--brokers", "1", "--topic", "allowed-a:2", "--topic", "secret:2",
                                "--topic", "quota-t:1")
        rules = """
[[listener.principals]]
name = "ANONYMOUS"
topics = ["allowed-*", "quota-t"]
idempotent_write = false
produce_bytes_per_second = %d
""" % QUOTA
        cls.proxy = start_proxy(cls.cluster.bootstrap, rules)

    @classmethod
    def tearDownClass(cls):
        cls.proxy.stop()
        cls.cluster.stop()

    def test_mixed_request_fails_only_the_forbidden_topic(self):
        conn = Conn(self.proxy.listen_port)
        self.addCleanup(conn.close)
        values = [b"m-%d" % i for i in range(20)]
        response = conn.call(ProduceRequest[3](
            transactional_id=None, required_acks=-1, timeout=10000,
            topics=[("allowed-a", [(0, records(values[:10])), (1, records(values[10:]))]),
                    ("secret", [(0, records([b"s-0"])), (1, records([b"s-1"]))])]))
        errors = {(t, p): e for t, parts in response.topics for p, e, *_ in parts}
        self.assertEqual(errors, {("allowed-a", 0): 0, ("allowed-a", 1): 0,
                                  ("secret", 0): TOPIC_AUTHORIZATION_FAILED,
                                  ("secret", 1): TOPIC_AUTHORIZATION_FAILED})
        log = s.read_log(self.cluster.bootstrap, "allowed-a")
        keys = sorted(k for recs in log.values() for _, k in recs)
        self.assertEqual(keys, sorted(v.decode() for v in values))  # each once
        self.assertEqual(s.read_log(self.cluster.bootstrap, "secret"), {})
        denied = s.metric_sum(self.proxy.metrics_port,
                              'produce_proxy_principal_authorization_denied_total{operation="write",'
                              'principal="ANONYMOUS"}')
        self.assertEqual(denied, 2)

    def test_metadata_of_a_forbidden_topic(self):
        conn = Conn(self.proxy.listen_port)
        self.addCleanup(conn.close)
        named = conn.call(MetadataRequest[1](topics=["secret", "allowed-a"]))
        by_name = {t[1]: t for t in named.topics}
        self.assertEqual(by_name["secret"][0], TOPIC_AUTHORIZATION_FAILED)
        self.assertEqual(by_name["secret"][3], [])  # no partitions
        self.assertEqual(by_name["allowed-a"][0], 0)
        self.assertEqual(len(by_name["allowed-a"][3]), 2)
        listing = conn.call(MetadataRequest[1](topics=None))
        self.assertNotIn("secret", [t[1] for t in listing.topics])

    def test_init_producer_id_without_idempotent_write(self):
        conn = Conn(self.proxy.listen_port)
        self.addCleanup(conn.close)
        response = conn.call(InitProducerIdRequestV0(transactional_id=None, transaction_timeout_ms=60000))
        self.assertEqual(response.error_code, CLUSTER_AUTHORIZATION_FAILED)

    def test_quota_holds_ten_times_the_offer(self):
        """Offers 10x the quota as fast as the muted connection lets it: the
        rate produced over the measured period is within 10 % of the quota."""
        conn = Conn(self.proxy.listen_port)
        self.addCleanup(conn.close)
        result = Offer(self, conn, "quota-t", 10.0 * QUOTA)
        result.run(2.0)  # warm-up: the window admits about a second's quota at once
        result.measure(ARGS.quota_seconds)
        print("ANONYMOUS: quota %d B/s, offered 10x: %s" % (QUOTA, result))
        self.assertLess(abs(result.rate - QUOTA) / QUOTA, 0.10, "%s against a quota of %d" % (result, QUOTA))
        self.assertGreater(result.throttled, 0)
        throttled = s.metric_sum(self.proxy.metrics_port,
                                 'produce_proxy_principal_throttle_seconds_total{principal="ANONYMOUS"}')
        self.assertGreater(throttled, 0)


class TwoPrincipalQuota(unittest.TestCase):
    """Two SASL principals ([listener.sasl], PLAIN): "bulk" with a quota,
    offered 10x it, and "steady" without one, offered a fixed rate. bulk is
    held to its quota within 10 %; steady's throughput with bulk flooding
    differs by less than 10 % from steady's alone."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        users = os.path.join(self.dir.name, "users.toml")
        for user in ("bulk", "steady"):
            added = subprocess.run([ARGS.proxy, "users", "add", user, "--mechanism", "PLAIN", "--users-file", users],
                                   input=user + "-secret\n", capture_output=True, text=True, timeout=60)
            if added.returncode != 0:
                self.fail("produce-proxy users add failed (is [listener.sasl] built?): " + added.stderr)
        self.cluster = s.Cluster(ARGS.cluster, "--brokers", "1", "--topic", "bulk-t:1", "--topic", "steady-t:1")
        self.addCleanup(self.cluster.stop)
        self.proxy = start_proxy(self.cluster.bootstrap, """
[listener.sasl]
mechanisms = ["PLAIN"]
users_file = "%s"
allow_plain_without_tls = true

[[listener.principals]]
name = "bulk"
topics = ["bulk-t"]
produce_bytes_per_second = %d

[[listener.principals]]
name = "steady"
topics = ["steady-t"]
""" % (users, QUOTA))
        self.addCleanup(self.proxy.stop)

    def test_one_principal_throttled_the_other_not(self):
        steady_conn = Conn(self.proxy.listen_port, "steady", "steady-secret")
        self.addCleanup(steady_conn.close)
        steady_rate = 5.0 * QUOTA
        alone = Offer(self, steady_conn, "steady-t", steady_rate)
        alone.measure(ARGS.quota_seconds / 2)

        bulk_conn = Conn(self.proxy.listen_port, "bulk", "bulk-secret")
        self.addCleanup(bulk_conn.close)
        bulk = Offer(self, bulk_conn, "bulk-t", 10.0 * QUOTA)
        bulk.run(2.0)  # warm-up
        beside = Offer(self, steady_conn, "steady-t", steady_rate)
        worker = threading.Thread(target=beside.measure, args=(ARGS.quota_seconds,))
        worker.start()
        bulk.measure(ARGS.quota_seconds)
        worker.join(timeout=ARGS.quota_seconds + 60)
        print("bulk: quota %d B/s, offered 10x: %s" % (QUOTA, bulk))
        print("steady: offered %.0f B/s: alone %s; beside bulk %s" % (steady_rate, alone, beside))
        self.assertLess(abs(bulk.rate - QUOTA) / QUOTA, 0.10, "bulk %s against a quota of %d" % (bulk, QUOTA))
        self.assertGreater(bulk.throttled, 0)
        self.assertEqual(beside.throttled, 0)
        self.assertLess(abs(beside.rate - alone.rate) / alone.rate, 0.10,
                        "steady alone %s, beside bulk %s" % (alone, beside))
        denied = s.metric_sum(self.proxy.metrics_port,
                              'produce_proxy_principal_throttle_seconds_total{principal="steady"}')
        self.assertEqual(denied, 0)
        throttled = s.metric_sum(self.proxy.metrics_port,
                                 'produce_proxy_principal_throttle_seconds_total{principal="bulk"}')
        self.assertGreater(throttled, 0)


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--proxy", required=True)
    ap.add_argument("--cluster", required=True)
    ap.add_argument("--quota-seconds", type=float, default=QUOTA_SECONDS)
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
