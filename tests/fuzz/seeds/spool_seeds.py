#!/usr/bin/env python3
"""Seeds for fuzz_spool_segment: spool segments as docs/design/SPOOL.md lays
them out, written from the document (not by the proxy's encoder), so the
fuzzer starts from valid segments of every entry kind and from the damage
recovery must handle. Run from anywhere; writes fuzz_spool_segment/*.hex."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fuzz_spool_segment")


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def header(segment_id=1, version=1):
    body = b"ppspool\n" + struct.pack(">IIqq", version, 36, segment_id, 1700000000000)
    return body + struct.pack(">I", crc32c(body))


def entry(kind, entry_id, body, time_ms=1700000000000):
    payload = struct.pack(">Bqq", kind, entry_id, time_ms) + body
    return struct.pack(">II", len(payload), crc32c(payload)) + payload


def topic(name: bytes):
    return struct.pack(">H", len(name)) + name


def record_batch(records=1):
    """RecordBatch v2 of `records` records with null key and value."""
    recs = b""
    for i in range(records):
        body = bytes([0, 2 * i, 2 * i, 1, 1, 0])  # attributes, deltas, key -1, value -1, no headers
        recs += bytes([2 * len(body)]) + body
    after_crc = struct.pack(">hiqqqhii", 0, records - 1, 1700000000000, 1700000000000, -1, -1, -1, records) + recs
    length = 4 + 1 + 4 + len(after_crc)  # leader epoch, magic, CRC, the rest
    return struct.pack(">qiib", 0, length, -1, 2) + struct.pack(">I", crc32c(after_crc)) + after_crc


def records(entry_id, name=b"t", partition=0, count=2, client=(-1, -1, -1)):
    batch = record_batch(count)
    body = (topic(name) + struct.pack(">ihqhii", partition, -1, client[0], client[1], client[2], count)
            + struct.pack(">I", len(batch)) + batch)
    return entry(1, entry_id, body)


def client_producers(entry_id, next_id, producers):
    """producers: [(id, epoch, bumped, [(topic, partition, epoch, last_seq,
    [(epoch, first, last, state, error, base_offset)])])]"""
    body = struct.pack(">qI", next_id, len(producers))
    for pid, epoch, bumped, partitions in producers:
        body += struct.pack(">qhbI", pid, epoch, 1 if bumped else 0, len(partitions))
        for name, partition, p_epoch, last, batches in partitions:
            body += topic(name) + struct.pack(">ihiH", partition, p_epoch, last, len(batches))
            for b_epoch, first, b_last, state, error, offset in batches:
                body += struct.pack(">hiibhqqq", b_epoch, first, b_last, state, error, offset, -1, -1)
    return entry(6, entry_id, body)


def identity(entry_id, pid=1000, epoch=0):
    return entry(2, entry_id, struct.pack(">qh", pid, epoch))


def sequenced(entry_id, ranges, base=0, supersedes=0, pid=1000, epoch=0):
    count = sum(r[2] for r in ranges)
    body = topic(b"t") + struct.pack(">iqhiiqH", 0, pid, epoch, base, count, supersedes, len(ranges))
    for rid, first, n in ranges:
        body += struct.pack(">qii", rid, first, n)
    return entry(3, entry_id, body)


def resolved(entry_id, target, outcome=1, error=0, offset=0):
    return entry(4, entry_id, struct.pack(">qbhq", target, outcome, error, offset))


def cluster_view(entry_id, topics):
    body = struct.pack(">I", len(topics))
    for name, partitions in topics:
        body += topic(name) + struct.pack(">i", partitions)
    return entry(5, entry_id, body)


def main():
    os.makedirs(OUT, exist_ok=True)
    full = (header() + identity(1) + cluster_view(2, [(b"t", 3), (b"logs", 1)]) + records(3) + records(4, count=3)
            + sequenced(5, [(3, 0, 2), (4, 0, 1)]) + resolved(6, 5) + sequenced(7, [(4, 1, 2)], base=3)
            + sequenced(8, [(4, 1, 2)], base=0, supersedes=7, epoch=1) + resolved(9, 3, outcome=2, error=2))
    clients = (header(2) + identity(10) + client_producers(11, 5000, [
        (4000, 1, True, [(b"t", 0, 1, 9, [(1, 0, 4, 1, 0, -1), (1, 5, 9, 4, 0, -1)]), (b"logs", 2, 0, -1, [])]),
        (4001, 0, False, [(b"t", 1, 0, 2, [(0, 0, 2, 2, 7, -1), (0, 3, 3, 3, 7, 12)])]),
    ]) + records(12, count=5, client=(4000, 1, 5)) + records(13, count=2, client=(4000, 1, 10))
        + resolved(14, 13, outcome=3))
    seeds = {
        "segment_client_producers": clients,
        "segment_every_kind": full,
        "segment_torn_tail": full[:-7],
        "segment_flipped": full[:80] + bytes([full[80] ^ 0x10]) + full[81:],
        "segment_newer_version": header(version=2) + identity(1),
        "segment_header_only": header(),
        "segment_ids_not_rising": header() + identity(5) + identity(5),
    }
    for name, data in seeds.items():
        with open(os.path.join(OUT, name + ".hex"), "w") as f:
            f.write(data.hex())


if __name__ == "__main__":
    main()
