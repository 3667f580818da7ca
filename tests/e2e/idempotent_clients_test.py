#!/usr/bin/env python3
"""Idempotent clients through produce-proxy to the test cluster (issue 16).

  /usr/bin/python3 tests/e2e/idempotent_clients_test.py --proxy BINARY --cluster TEST_CLUSTER [unittest args]

kcat and confluent-kafka with enable.idempotence=true (codecs none and zstd),
kafka-clients 4.4.0 and franz-go with their defaults (both idempotent): each
must take a producer id from the proxy (InitProducerId counted by the proxy;
the Java client must also name its topics by id, Produce v13, with the ids
the proxy handed it),
and every record must be in the upstream log exactly once, in per-partition
client order, at the partition and offset the client was told (kcat prints no
offsets). A direct test of the dedup: the same idempotent batch sent twice by
hand gets the same offset and is in the log once.
"""
import os
import socket
import struct
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import idempotent_support as s  # noqa: E402

ARGS = None
COUNT = 300
PARTITIONS = 3
CASES = [  # (client, codec, extra)
    ("confluent-idempotent", "none", ()),
    ("confluent-idempotent", "zstd", ()),
    ("java-4", "none", ()),
    ("java-4", "zstd", ()),
    ("franz-go", "none", ()),
    ("franz-go", "zstd", ()),
]


class IdempotentClients(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        topics = ["--topic", "kcat-none:%d" % PARTITIONS, "--topic", "kcat-zstd:%d" % PARTITIONS,
                  "--topic", "by-hand:1"]
        for client, codec, _ in CASES:
            topics += ["--topic", "%s-%s:%d" % (client, codec, PARTITIONS)]
        cls.cluster = s.Cluster(ARGS.cluster, "--brokers", "2", *topics)
        cls.proxy = s.start_proxy(ARGS.proxy, cls.cluster.bootstrap)
        cls.bootstrap = "127.0.0.1:%d" % cls.proxy.listen_port

    @classmethod
    def tearDownClass(cls):
        rc = cls.proxy.stop(timeout=60)
        text = cls.proxy.text()
        cls.cluster.stop()
        if rc != 0 or "AddressSanitizer" in text or "runtime error:" in text:
            raise AssertionError("produce-proxy exited %r; log tail:\n%s" % (rc, text[-6000:]))

    def init_producer_ids(self):
        return s.metric_sum(self.proxy.metrics_port, 'produce_proxy_client_requests_total{api="InitProducerId"')

    def check_log(self, topic, results=None):
        log = s.read_log(self.cluster.bootstrap, topic)
        problems = s.log_problems(log, COUNT, results)
        self.assertEqual(problems, [], "%s: %s\nproxy log tail:\n%s" % (topic, "\n".join(problems[:20]),
                                                                       self.proxy.text()[-3000:]))

    def produce_requests(self, version):
        return s.metric_sum(self.proxy.metrics_port,
                            'produce_proxy_client_requests_total{api="Produce",version="%d"}' % version)

    def run_case(self, client, codec, extra):
        before = self.init_producer_ids()
        v13_before = self.produce_requests(13)
        topic = "%s-%s" % (client, codec)
        results, summary, stderr = s.run_client(client, self.bootstrap, topic, COUNT, PARTITIONS, codec, extra)
        self.assertEqual(summary["acked"], COUNT, "%s: %s\n%s" % (topic, summary, stderr[-3000:]))
        self.assertGreater(self.init_producer_ids(), before, "%s took no producer id from the proxy" % client)
        if client == "java-4":
            # The test cluster serves Produce v13+, so the proxy offers v13 and
            # kafka-clients 4.4.0 names its topics by the ids the proxy handed it.
            self.assertGreater(self.produce_requests(13), v13_before,
                               "the Java 4.4 client did not negotiate Produce v13 through the proxy")
        self.check_log(topic, results)

    def test_kcat(self):
        for codec in ("none", "zstd"):
            before = self.init_producer_ids()
            p = s.kcat_produce(self.bootstrap, "kcat-" + codec, COUNT, codec)
            self.assertEqual(p.returncode, 0, p.stderr[-3000:])
            self.assertGreater(self.init_producer_ids(), before, "kcat took no producer id from the proxy")
            self.check_log("kcat-" + codec)

    def test_a_retried_batch_gets_its_offset_once(self):
        """The same idempotent Produce sent twice on two connections: one
        append, the same offset twice, one duplicate counted."""
        dup_before = s.metric_sum(self.proxy.metrics_port, "produce_proxy_client_duplicates_total")
        offsets = [produce_by_hand(self.proxy.listen_port, "by-hand", producer_id=4242, sequence=0)
                   for _ in range(2)]
        self.assertEqual(offsets[0], offsets[1])
        self.assertGreaterEqual(offsets[0], 0)
        self.assertEqual(s.metric_sum(self.proxy.metrics_port, "produce_proxy_client_duplicates_total"),
                         dup_before + 1)
        log = s.read_log(self.cluster.bootstrap, "by-hand")
        self.assertEqual(log, {0: [(offsets[0], "hand-key")]})


    def test_z_client_software_metric(self):
        """After the cases above: the Java client named itself in ApiVersions v3+."""
        n = s.metric_sum(self.proxy.metrics_port, 'produce_proxy_client_produce_requests_total{magic="2",'
                         'software="apache-kafka-java",software_version="4.4.0",version="13"}')
        self.assertGreater(n, 0, s.http_request(self.proxy.metrics_port, "/metrics")[1][-3000:])


def _add_cases():
    for client, codec, extra in CASES:
        def case(self, client=client, codec=codec, extra=extra):
            self.run_case(client, codec, extra)
        setattr(IdempotentClients, "test_%s_%s" % (client.replace("-", "_"), codec), case)


_add_cases()


def produce_by_hand(port, topic, producer_id, sequence):
    """One Produce v3 (acks=-1) with one idempotent RecordBatch of one record
    to partition 0, built here byte by byte (independent of the proxy's
    codecs); returns the base offset answered, or raises on an error."""
    import time
    now = int(time.time() * 1000)
    record = varint_record(b"hand-key", b"hand-value")
    # attributes, lastOffsetDelta, base/max timestamp, producer id, epoch, base sequence, records count
    after_crc = struct.pack(">hiqqqhii", 0, 0, now, now, producer_id, 0, sequence, 1) + record
    # partitionLeaderEpoch, magic 2, CRC-32C of everything after it
    batch_rest = struct.pack(">ibI", -1, 2, crc32c(after_crc)) + after_crc
    batch = struct.pack(">qi", 0, len(batch_rest)) + batch_rest
    req = (struct.pack(">h", -1) + struct.pack(">hi", -1, 30000) + struct.pack(">i", 1) +
           struct.pack(">h", len(topic)) + topic.encode() + struct.pack(">i", 1) + struct.pack(">i", 0) +
           struct.pack(">i", len(batch)) + batch)
    header = struct.pack(">hhih", 0, 3, 7, 4) + b"hand"
    frame = header + req
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(struct.pack(">i", len(frame)) + frame)
        size = struct.unpack(">i", read_exact(sock, 4))[0]
        answer = read_exact(sock, size)
    # correlation, [topic: name, [partition, error, base_offset, log_append_time]], throttle
    pos = 4 + 4
    name_len = struct.unpack_from(">h", answer, pos)[0]
    pos += 2 + name_len + 4
    _, error, base_offset = struct.unpack_from(">ihq", answer, pos)
    if error:
        raise AssertionError("hand-made Produce answered error %d" % error)
    return base_offset


def read_exact(sock, n):
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise AssertionError("connection closed")
        out += chunk
    return out


def zigzag(n):
    n = (n << 1) ^ (n >> 63)
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def varint_record(key, value):
    inner = (b"\x00" + zigzag(0) + zigzag(0) + zigzag(len(key)) + key + zigzag(len(value)) + value + zigzag(0))
    return zigzag(len(inner)) + inner


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


if __name__ == "__main__":
    s.main(sys.modules[__name__])
