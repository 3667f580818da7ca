#!/usr/bin/python3
"""Spool mode without Kafka (docs/design/SPOOL.md; INTERFACES.md, "HTTP
endpoints"): the shipped binary keeps the cluster view in its spool, and a
start with the upstream unreachable opens the client listener at once,
answers Metadata from that view (an unknown topic LEADER_NOT_AVAILABLE) and
is ready, /readyz meaning "accepting"; a full spool is not ready.

1. The proxy with a spool (ack = "spool") in front of the test cluster is
   asked about two topics with kcat; the cluster view entry it appends is
   read back from the segment files, decoded here from the documented format.
2. The proxy and the cluster stop; the proxy starts again on the same spool
   with its bootstrap a port nothing listens on. kcat -L lists the two
   topics with their partition counts, led by the proxy, and an unknown
   topic answers LEADER_NOT_AVAILABLE; /readyz is 200.
3. A spool holding more than spool.max_bytes (a segment written here, in the
   documented format, with one records entry of 1.1 MiB): the listener
   opens, /readyz is 503.

usage: cold_start_test.py --proxy BINARY --cluster TEST_CLUSTER
Stdlib and kcat; every wait bounded; everything on 127.0.0.1.
"""
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_support import Proxy, TestCluster, free_port, http_request, run_tests  # noqa: E402

ARGS = None
MAGIC = b"ppspool\n"
KIND_RECORDS, KIND_CLUSTER_VIEW = 1, 5
TOPICS = {"orders": 3, "audit-log": 2}


def crc32c(data):
    """CRC-32C (Castagnoli), what the spool's headers and entries carry."""
    table = crc32c.table
    crc = 0xFFFFFFFF
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _crc_table():
    out = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        out.append(c)
    return out


crc32c.table = _crc_table()


def read_cluster_views(spool_dir):
    """Every cluster view entry in the segments, in order, as {topic: partitions}."""
    views = []
    for name in sorted(os.listdir(spool_dir)):
        if not name.endswith(".seg"):
            continue
        with open(os.path.join(spool_dir, name), "rb") as f:
            data = f.read()
        if data[:8] != MAGIC:
            continue
        at = 36
        while at + 8 <= len(data):
            size, crc = struct.unpack_from(">II", data, at)
            body = data[at + 8:at + 8 + size]
            if len(body) != size or crc32c(body) != crc:
                break  # a torn tail: what recovery would cut
            if body[0] == KIND_CLUSTER_VIEW:
                (count,) = struct.unpack_from(">I", body, 17)
                off, view = 21, {}
                for _ in range(count):
                    (n,) = struct.unpack_from(">H", body, off)
                    topic = body[off + 2:off + 2 + n].decode()
                    (view[topic],) = struct.unpack_from(">i", body, off + 2 + n)
                    off += 6 + n
                views.append(view)
            at += 8 + size
    return views


def varint(n):
    """Kafka's zigzag varint."""
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        if z < 0x80:
            out.append(z)
            return bytes(out)
        out.append((z & 0x7F) | 0x80)
        z >>= 7


def record_batch(value):
    """One RecordBatch v2 holding one record with `value`, no producer id."""
    record = b"\x00" + varint(0) + varint(0) + varint(-1) + varint(len(value)) + value + varint(0)
    records = varint(len(record)) + record
    after_crc = struct.pack(">hiqqqhii", 0, 0, 0, 0, -1, -1, -1, 1) + records
    head = struct.pack(">qiib", 0, 4 + 1 + 4 + len(after_crc), -1, 2)
    return head + struct.pack(">I", crc32c(after_crc)) + after_crc


def write_full_segment(spool_dir, value_bytes):
    """Segment 1 of a spool: its header and one unresolved records entry (id 1)."""
    header = MAGIC + struct.pack(">IIQq", 1, 36, 1, int(time.time() * 1000))
    header += struct.pack(">I", crc32c(header))
    batch = record_batch(b"x" * value_bytes)
    topic = b"orders"
    body = struct.pack(">BQq", KIND_RECORDS, 1, int(time.time() * 1000))
    body += struct.pack(">H", len(topic)) + topic + struct.pack(">ihqhiiI", 0, -1, -1, -1, -1, 1, len(batch)) + batch
    entry = struct.pack(">II", len(body), crc32c(body)) + body
    os.makedirs(spool_dir, exist_ok=True)
    with open(os.path.join(spool_dir, "%020d.seg" % 1), "wb") as f:
        f.write(header + entry)


def kcat_metadata(port, topic):
    """kcat -L -J for one topic: (brokers, the topic's JSON)."""
    out = subprocess.run(["timeout", "20", "kcat", "-L", "-J", "-m", "10", "-b", f"127.0.0.1:{port}", "-t", topic],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise AssertionError(f"kcat -L -t {topic} failed ({out.returncode}): {out.stderr.strip()}")
    meta = json.loads(out.stdout)
    found = [t for t in meta["topics"] if t["topic"] == topic]
    return meta["brokers"], (found[0] if found else None)


def spool_config(spool_dir, bootstrap, client_port, metrics_port, max_bytes=1 << 30):
    return f"""
[listener]
address = "127.0.0.1:{client_port}"
[upstream]
bootstrap_servers = ["{bootstrap}"]
request_timeout_ms = 5000
[metrics]
address = "127.0.0.1:{metrics_port}"
[shutdown]
drain_timeout_ms = 2000
[spool]
dir = "{spool_dir}"
ack = "spool"
max_bytes = {max_bytes}
segment_bytes = 1048576
"""


def wait_until(what, predicate, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class ColdStartTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.procs = []

    def tearDown(self):
        for p in reversed(self.procs):
            if isinstance(p, Proxy):
                p.stop(timeout=10)
            else:
                p.stop()
        self.tmp.cleanup()

    def start_proxy(self, config, expect_ready=True, env=None):
        proxy = Proxy(ARGS.proxy, config_text=config, env=env)
        self.procs.append(proxy)
        if expect_ready:
            started = time.time()
            self.assertTrue(proxy.wait_ready(timeout=20), proxy.text()[-3000:])
            return proxy, time.time() - started
        return proxy, None

    def test_metadata_and_readiness_from_the_spool_with_kafka_down(self):
        spool_dir = os.path.join(self.tmp.name, "spool")
        cluster = TestCluster(ARGS.cluster, "--brokers", "1", *[a for t, n in TOPICS.items() for a in ("--topic", f"{t}:{n}")])
        self.procs.append(cluster)
        client_port, metrics_port = free_port(), free_port()

        # 1. Kafka up: the topics asked about become the spool's cluster view.
        proxy, _ = self.start_proxy(spool_config(spool_dir, cluster.bootstrap, client_port, metrics_port))
        for topic, partitions in TOPICS.items():
            _, described = kcat_metadata(client_port, topic)
            self.assertEqual(len(described["partitions"]), partitions, described)
        wait_until("the cluster view in the spool", lambda: (read_cluster_views(spool_dir) or [{}])[-1] == TOPICS, 10)
        self.assertEqual(proxy.stop(timeout=20), 0, proxy.text()[-3000:])
        cluster.stop()

        # 2. Kafka gone: listening at once, Metadata from the persisted view.
        dead = f"127.0.0.1:{free_port()}"
        proxy, took = self.start_proxy(spool_config(spool_dir, dead, client_port, metrics_port))
        self.assertLess(took, 10, "the listener should open without waiting for the upstream")
        for topic, partitions in TOPICS.items():
            brokers, described = kcat_metadata(client_port, topic)
            self.assertIsNotNone(described, topic)
            self.assertNotIn("error", described, proxy.text()[-3000:])
            self.assertEqual(len(described["partitions"]), partitions, described)
            leaders = {p["leader"] for p in described["partitions"]}
            self.assertEqual(leaders, {brokers[0]["id"]}, "the proxy leads every partition")
            self.assertEqual(brokers[0]["name"], f"127.0.0.1:{client_port}", brokers)
        _, unknown = kcat_metadata(client_port, "never-seen")
        self.assertIn("Leader not available", unknown.get("error", ""), unknown)
        self.assertEqual(http_request(metrics_port, "/readyz"), (200, "ready\n"))
        self.assertEqual(proxy.stop(timeout=20), 0, proxy.text()[-3000:])
        self.assertEqual((read_cluster_views(spool_dir) or [{}])[-1], TOPICS, "the view survives a start without Kafka")

        # 3. A spool over max_bytes: listening, but not ready.
        # systemd's STATUS= says so too.
        full_dir = os.path.join(self.tmp.name, "full")
        write_full_segment(full_dir, 1100 * 1024)
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.addCleanup(notify.close)
        notify.bind(os.path.join(self.tmp.name, "notify"))
        notify.settimeout(0.2)
        proxy, _ = self.start_proxy(spool_config(full_dir, dead, client_port, metrics_port, max_bytes=1 << 20),
                                    env={"NOTIFY_SOCKET": os.path.join(self.tmp.name, "notify")})
        kcat_metadata(client_port, "orders")
        status, body = http_request(metrics_port, "/readyz")
        self.assertEqual((status, body), (503, "not ready: the spool is full (spool.max_bytes)\n"))
        messages = []
        deadline = time.time() + 10
        while time.time() < deadline and not any("spool is full" in m for m in messages):
            try:
                messages.append(notify.recv(4096).decode())
            except socket.timeout:
                pass
        self.assertTrue(messages and messages[0].startswith("READY=1"), messages)
        self.assertIn("STATUS=not accepting: the spool is full; clients get retriable errors until it drains",
                      messages, proxy.text()[-3000:])


if __name__ == "__main__":
    run_tests(sys.modules[__name__], "--cluster")
