#!/usr/bin/env python3
"""Writes the Produce v13 seeds (topics named by id, KIP-516) for
fuzz_produce_request and fuzz_request: request frame bodies without their
size prefix (header v2, then the flexible v13 body), built here byte by byte
from ProduceRequest.json, independent of the proxy's codec. One lower-case
hex line per file. The golden frames (tests/golden/produce_request/v13/,
real Java clients) seed both targets too; these add what no client sends:

- known_and_unknown_ids: three topics, by an id fuzz_produce_request knows
  (first byte even), one it does not (odd) and the zero id, each with one
  small record batch, acks=-1;
- same_id_twice: one id in two topic entries, two partitions each;
- topic_count_over_bytes: a topic array announcing 2^28 entries in a few
  bytes (refused before anything is reserved);
- truncated_topic_id: the frame cut inside the 16-byte id.

usage: /usr/bin/python3 tests/fuzz/seeds/produce_v13_seeds.py
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "daemon"))
import hostile_wire as wire  # noqa: E402

PRODUCE = 0
V13 = 13
KNOWN = bytes([0x10] + list(range(1, 16)))    # first byte even: named "fuzz-topic" by the fuzzer
UNKNOWN = bytes([0x11] + list(range(1, 16)))  # odd: unknown
ZERO = bytes(16)


def write(target, name, data):
    os.makedirs(os.path.join(HERE, target), exist_ok=True)
    with open(os.path.join(HERE, target, name + ".hex"), "w") as f:
        f.write(data.hex() + "\n")


def header(correlation_id):
    """Request header v2: key, version, correlation id, client id, no tags."""
    return struct.pack(">hhi", PRODUCE, V13, correlation_id) + wire.string16(b"seed") + b"\x00"


def batch(value):
    record = (b"\x00" + wire.varint(0) + wire.varint(0) + wire.varint(-1) + wire.varint(len(value)) + value +
              wire.varint(0))
    return wire.record_batch(wire.varint(len(record)) + record, 1)


def body(topics, acks=-1):
    """topics: [(16-byte id, [(partition, records bytes)])]."""
    out = wire.uvarint(0) + struct.pack(">hi", acks, 30000) + wire.uvarint(len(topics) + 1)
    for topic_id, partitions in topics:
        out += topic_id + wire.uvarint(len(partitions) + 1)
        for index, records in partitions:
            out += struct.pack(">i", index) + wire.uvarint(len(records) + 1) + records + b"\x00"
        out += b"\x00"
    return out + b"\x00"


def main():
    three = body([(KNOWN, [(0, batch(b"known"))]), (UNKNOWN, [(0, batch(b"unknown"))]),
                  (ZERO, [(1, batch(b"zero"))])])
    twice = body([(KNOWN, [(0, batch(b"a")), (1, batch(b"b"))]), (KNOWN, [(2, batch(b"c")), (0, batch(b"d"))])])
    over = wire.uvarint(0) + struct.pack(">hi", -1, 30000) + wire.uvarint(1 << 28) + KNOWN
    cut = header(4) + body([(KNOWN, [(0, batch(b"cut"))])])
    cut = cut[:len(header(4)) + 1 + 6 + 1 + 7]
    frames = {"produce_v13_known_and_unknown_ids": header(1) + three,
              "produce_v13_same_id_twice": header(2) + twice,
              "produce_v13_topic_count_over_bytes": header(3) + over,
              "produce_v13_truncated_topic_id": cut}
    for name, frame in frames.items():
        write("fuzz_produce_request", name, frame)
        write("fuzz_request", name, frame)


if __name__ == "__main__":
    main()
