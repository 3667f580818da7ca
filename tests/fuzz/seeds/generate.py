#!/usr/bin/env python3
"""Writes the hostile seeds of issue 14 into tests/fuzz/seeds/<target>/, one
lower-case hex line per file (run_fuzzer.sh seeds each target from its own
folder, beside the golden frames every target gets).

The daemon test sends the cases at full size (tests/daemon/hostile_input_test.py);
here they are scaled to the fuzzers' caps (1 MiB decoded, 1-4 MiB
decompressed), so each still crosses the limit it is about while libFuzzer's
max_len, which follows the largest seed, stays small:
- 2,000 unknown tags in decreasing order (the 200,000 of the issue stop at the
  second tag just the same), 100 in increasing order (over the cap of 64);
- one record of 30,000 empty headers, plain and gzip (1.2 MB of header views,
  over the 1 MiB budget); the issue's 3,000,000 in gzip at full size (6 KiB);
- the issue's 90 MiB frame as its size prefix and the first bytes of its body,
  and a prefix one byte over fuzz_frame's 64 KiB cap (a frame is refused at
  its prefix, so the rest of the 60 MiB sent adds nothing).

usage: /usr/bin/python3 tests/fuzz/seeds/generate.py
"""
import gzip
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "daemon"))
import hostile_wire as wire  # noqa: E402

SCALED_HEADERS = 30_000
ISSUE_HEADERS = 3_000_000


def write(target, name, data):
    os.makedirs(os.path.join(HERE, target), exist_ok=True)
    with open(os.path.join(HERE, target, name + ".hex"), "w") as f:
        f.write(data.hex() + "\n")


def api_versions_response_v3_with_tags(tags):
    """An ApiVersions v3 response (header v0) whose body ends in tag_section(tags)."""
    body = struct.pack(">h", 0) + wire.uvarint(1) + struct.pack(">i", 0) + wire.tag_section(tags)
    return struct.pack(">i", 1) + body


def main():
    tags = {"api_versions_v3_2000_tags_decreasing": wire.api_versions_v3_with_tags(1, 2000),
            "api_versions_v3_100_tags_increasing": wire.api_versions_v3_with_tags(1, 100, decreasing=False)}
    for name, framed in tags.items():
        write("fuzz_request", name, framed[4:])
        write("fuzz_frame", name, b"\x10" + framed)  # first byte: read chunks of 17 bytes
    body_start = wire.api_versions_v3_with_tags(1, 0)[4:]
    for name, announced in {"frame_prefix_90_mib": 90 * 1024 * 1024, "frame_prefix_one_over_64_kib": 64 * 1024 + 1}.items():
        write("fuzz_frame", name, b"\x10" + struct.pack(">i", announced) + body_start)
    # fuzz_response: api key 18, version 3, then the response frame body.
    write("fuzz_response", "api_versions_v3_2000_tags_decreasing",
          b"\x12\x00\x03" + api_versions_response_v3_with_tags(2000))

    plain, gzipped = wire.hostile_batches(SCALED_HEADERS)
    record = wire.record_with_empty_headers(ISSUE_HEADERS)
    issue_gzip = wire.record_batch(gzip.compress(record, 9), 1, codec=1)
    batches = {f"{SCALED_HEADERS}_empty_headers": plain, f"{SCALED_HEADERS}_empty_headers_gzip": gzipped,
               f"{ISSUE_HEADERS}_empty_headers_gzip": issue_gzip}
    for name, batch in batches.items():
        write("fuzz_record_batch", name, batch)
        write("fuzz_produce_request", "produce_v7_" + name, wire.produce_v7(1, b"hostile", batch)[4:])
    # fuzz_decompress: first byte 1 = gzip, then the issue's compressed records.
    write("fuzz_decompress", f"gzip_{ISSUE_HEADERS}_empty_headers", b"\x01" + gzip.compress(record, 9))


if __name__ == "__main__":
    main()
