#!/usr/bin/python3
"""Writes the kafka-python test vectors of tests/unit/records (see PROVENANCE.md).

kafka-python is an independent implementation of Kafka's record formats; its
bytes let records_test check our reader and writer against someone else's.
Run from the repository root:  /usr/bin/python3 tests/unit/records/vectors/generate.py
"""
import os

import kafka
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

OUT = os.path.dirname(os.path.abspath(__file__))

# Must match the expectations in kafka_python_vectors_test.cc.
V2_RECORDS = [
    (1700000000000, b"key-0", b"value-0", []),
    (1700000000005, None, b"abcdefgh" * 40, [("h1", b"x"), ("h2", None)]),
    (1699999999990, b"", None, []),
    (1700000000100, b"key-3", b"0123456789" * 30, [("trace-id", b"")]),
]
LEGACY_RECORDS = [
    (1700000000000, b"key-0", b"value-0"),
    (1700000000005, None, b"abcdefgh" * 40),
    (1700000000010, b"", None),
    (1700000000100, b"key-3", b"0123456789" * 30),
]
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def write(name, data):
    with open(os.path.join(OUT, name + ".hex"), "w") as f:
        f.write(bytes(data).hex() + "\n")


def main():
    assert kafka.__version__ == "2.0.2", kafka.__version__
    for codec, cid in CODECS.items():
        b = DefaultRecordBatchBuilder(magic=2, compression_type=cid, is_transactional=0,
                                      producer_id=12345, producer_epoch=7, base_sequence=42,
                                      batch_size=1 << 20)
        for i, (ts, key, value, headers) in enumerate(V2_RECORDS):
            assert b.append(i, timestamp=ts, key=key, value=value, headers=headers) is not None
        write("v2_" + codec, b.build())
    for magic in (0, 1):
        for codec, cid in CODECS.items():
            if cid == 4:
                continue  # zstd needs magic 2
            b = LegacyRecordBatchBuilder(magic=magic, compression_type=cid, batch_size=1 << 20)
            for i, (ts, key, value) in enumerate(LEGACY_RECORDS):
                assert b.append(i, timestamp=ts, key=key, value=value) is not None
            write("legacy_v%d_%s" % (magic, codec), b.build())


if __name__ == "__main__":
    main()
