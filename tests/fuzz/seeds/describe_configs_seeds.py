#!/usr/bin/env python3
"""Writes fuzz_response seeds for DescribeConfigs (issue 14: the proxy asks
each topic's max.message.bytes upstream): a v1 answer (classic encoding) and a
v4 answer (flexible: compact arrays and strings, tagged fields), each with a
learned limit and a refused topic. One lower-case hex line per file: the
fuzzer's api key (32) and version, then the response frame body.

usage: /usr/bin/python3 tests/fuzz/seeds/describe_configs_seeds.py
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "daemon"))
from hostile_wire import uvarint  # noqa: E402


def string(s, flexible):
    if s is None:
        return uvarint(0) if flexible else struct.pack(">h", -1)
    raw = s.encode()
    return (uvarint(len(raw) + 1) if flexible else struct.pack(">h", len(raw))) + raw


def array(items, flexible):
    return (uvarint(len(items) + 1) if flexible else struct.pack(">i", len(items))) + b"".join(items)


def response(version):
    flexible = version >= 4
    tags = uvarint(0) if flexible else b""
    entry = (string("max.message.bytes", flexible) + string("4096", flexible) + b"\x00" + b"\x01" + b"\x00" +
             array([string("max.message.bytes", flexible) + string("4096", flexible) + b"\x01" + tags], flexible))
    if version >= 3:
        entry += b"\x03" + string(None, flexible)
    entry += tags
    learned = struct.pack(">h", 0) + string(None, flexible) + b"\x02" + string("small", flexible) + \
        array([entry], flexible) + tags
    refused = struct.pack(">h", 29) + string("no DESCRIBE_CONFIGS", flexible) + b"\x02" + \
        string("secret", flexible) + array([], flexible) + tags
    body = struct.pack(">i", 0) + array([learned, refused], flexible) + tags
    header = struct.pack(">i", 7) + tags  # response header v1 when flexible
    return b"\x20" + struct.pack(">h", version) + header + body


def main():
    folder = os.path.join(HERE, "fuzz_response")
    os.makedirs(folder, exist_ok=True)
    for version in (1, 4):
        with open(os.path.join(folder, "describe_configs_v%d.hex" % version), "w") as f:
            f.write(response(version).hex() + "\n")


if __name__ == "__main__":
    main()
