"""Kafka wire bytes for tests/daemon/hostile_input_test.py, stdlib only: the
requests a hostile or buggy client sends (issue 14), the ApiVersions probe,
and just enough of a Produce response to read its error code.

Layouts: docs/design/PIPELINE.md section B (request headers, RecordBatch v2,
Record v2); Kafka's protocol guide for ApiVersions and Produce.
"""
import gzip
import os
import socket
import struct
import sys

API_VERSIONS, PRODUCE = 18, 0
MESSAGE_TOO_LARGE = 10


# CRC-32C (Castagnoli), as RecordBatch v2 uses: the golden-frame tools' one.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "capture"))
from kafka_records import crc32c  # noqa: E402


def uvarint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def varint(n):
    return uvarint((n << 1) ^ (n >> 63))  # zigzag


def string16(s):
    return struct.pack(">h", len(s)) + s


def frame(payload):
    return struct.pack(">i", len(payload)) + payload


def api_versions_v0(correlation_id):
    """The probe: ApiVersions v0, request header v1, empty body."""
    return frame(struct.pack(">hhi", API_VERSIONS, 0, correlation_id) + string16(b"probe"))


def tag_section(tags, decreasing=True):
    """A tagged-field section of `tags` empty unknown fields, in decreasing
    tag order (tags, tags-1, ..., 1: the order KIP-482 forbids) or increasing
    (1 ... tags); about 4 bytes each."""
    section = bytearray(uvarint(tags))
    for tag in (range(tags, 0, -1) if decreasing else range(1, tags + 1)):
        section += uvarint(tag) + b"\x00"
    return bytes(section)


def api_versions_v3_with_tags(correlation_id, tags, decreasing=True):
    """ApiVersions v3 whose request header v2 carries tag_section(tags)."""
    section = tag_section(tags, decreasing)
    header = struct.pack(">hhi", API_VERSIONS, 3, correlation_id) + string16(b"hostile") + bytes(section)
    body = uvarint(2) + b"x" + uvarint(2) + b"1" + b"\x00"  # software name, version, no tags
    return frame(header + body)


def record_with_empty_headers(headers):
    """One Record v2 (DefaultRecord): no key, a 5-byte value and `headers`
    headers whose key and value are both empty (2 bytes each on the wire)."""
    body = (b"\x00" + varint(0) + varint(0) + varint(-1) + varint(5) + b"hello" + varint(headers) +
            b"\x00\x00" * headers)
    return varint(len(body)) + body


def record_batch(records_section, count, codec=0):
    """A RecordBatch v2 around an already encoded (and maybe compressed)
    records section; the CRC-32C covers attributes to the end."""
    now_ms = 1764547200000
    after_crc = struct.pack(">hiqqqhii", codec, count - 1, now_ms, now_ms, -1, -1, -1, count) + records_section
    length = 4 + 1 + 4 + len(after_crc)  # leader epoch, magic, crc, the rest
    return (struct.pack(">qiib", 0, length, -1, 2) + struct.pack(">I", crc32c(after_crc)) + after_crc)


def hostile_batches(headers):
    """(uncompressed, gzip) batches of one record with `headers` empty headers."""
    record = record_with_empty_headers(headers)
    return record_batch(record, 1), record_batch(gzip.compress(record, 9), 1, codec=1)


def produce_v7(correlation_id, topic, batch, acks=1):
    """Produce v7 (header v1, classic encoding) of one batch to partition 0."""
    header = struct.pack(">hhi", PRODUCE, 7, correlation_id) + string16(b"hostile")
    body = (struct.pack(">h", -1) + struct.pack(">hi", acks, 30000) + struct.pack(">i", 1) + string16(topic) +
            struct.pack(">i", 1) + struct.pack(">ii", 0, len(batch)) + batch)
    return frame(header + body)


def produce_v7_topics(correlation_id, topics, batch, acks=1):
    """Produce v7 of the same batch to partition 0 of each of `topics`, in one request."""
    header = struct.pack(">hhi", PRODUCE, 7, correlation_id) + string16(b"hostile")
    body = struct.pack(">h", -1) + struct.pack(">hi", acks, 30000) + struct.pack(">i", len(topics))
    for topic in topics:
        body += string16(topic) + struct.pack(">i", 1) + struct.pack(">ii", 0, len(batch)) + batch
    return frame(header + body)


def produce_error_codes(payload):
    """{topic: error_code of its first partition} of a Produce v7 response frame body."""
    count, = struct.unpack_from(">i", payload, 4)  # after the correlation id
    at, codes = 8, {}
    for _ in range(count):
        name_len, = struct.unpack_from(">h", payload, at)
        name = payload[at + 2:at + 2 + name_len].decode()
        at += 2 + name_len
        partitions, = struct.unpack_from(">i", payload, at)
        at += 4
        for i in range(partitions):
            # index, error_code, base_offset, log_append_time, log_start_offset
            error, = struct.unpack_from(">h", payload, at + 4)
            if i == 0:
                codes[name] = error
            at += 4 + 2 + 8 + 8 + 8
    return codes


def produce_error_code(payload):
    """The first partition's error_code of a Produce v7 response frame body."""
    name_len, = struct.unpack_from(">h", payload, 8)  # after correlation id and topic count
    at = 10 + name_len + 4 + 4  # partition count, partition index
    return struct.unpack_from(">h", payload, at)[0]


def read_frame(sock):
    """One response frame's payload, or None when the peer closed first."""
    def exactly(n):
        out = bytearray()
        while len(out) < n:
            try:
                chunk = sock.recv(n - len(out))
            except ConnectionResetError:
                return None
            if not chunk:
                return None
            out += chunk
        return bytes(out)

    size = exactly(4)
    if size is None:
        return None
    return exactly(struct.unpack(">i", size)[0])


def connect(port, timeout):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s
