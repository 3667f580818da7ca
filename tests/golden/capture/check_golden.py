"""Sanity-checks the golden files with the capture tooling's own small decoder
(independent of the proxy's codec):

- each .hex is lowercase hex, 32 bytes per line, and has a .json;
- the request header's api_key/api_version match the directory and JSON;
- a response's correlation id equals its paired request's;
- known bodies decode exactly (no bytes left), record CRCs check out;
- every record decoded from a Produce request is one the client was asked to
  send (key, value and headers).

Prints counts per (api, version, direction), or with --markdown the table
PROVENANCE.md shows; exits 1 on any problem.

  check_golden.py [--markdown] GOLDEN_DIR
"""
import json
import os
import re
import sys
from collections import Counter

import kafka_decode as kd


def read_hex(path, problems):
    lines = open(path).read().split("\n")
    if lines[-1] != "":
        problems.append(f"{path}: no final newline")
    lines = lines[:-1]
    for i, line in enumerate(lines):
        if not re.fullmatch(r"[0-9a-f]+", line) or len(line) % 2:
            problems.append(f"{path}:{i + 1}: not lowercase hex bytes")
        if len(line) != 64 and i != len(lines) - 1 or len(line) > 64:
            problems.append(f"{path}:{i + 1}: not 32 bytes per line")
    return bytes.fromhex("".join(lines))


def crc_problems(obj, where, problems):
    if isinstance(obj, dict):
        if obj.get("crc_ok") is False:
            problems.append(f"{where}: bad CRC in {obj.get('offset', obj.get('base_offset'))}")
        if obj.get("lz4_header_checksum") == "invalid":
            problems.append(f"{where}: invalid LZ4 header checksum")
        for v in obj.values():
            crc_problems(v, where, problems)
    elif isinstance(obj, list):
        for v in obj:
            crc_problems(v, where, problems)


def check_records(doc, path, problems):
    sent = doc.get("records_sent")
    if sent is None:
        return
    want = [(r["key"], r["value"], tuple((h["key"], h["value"]) for h in r["headers"]))
            for r in sent]
    for part in doc["produce"]["partitions"]:
        for rec in part["records"]:
            got = (rec["key"], rec["value"],
                   tuple((h["key"], h["value"]) for h in rec["headers"]))
            if got not in want:
                problems.append(f"{path}: record {got} was not sent by the client")


def markdown(counts):
    rows = sorted({(a, v) for a, v, _ in counts})
    print("| api | version | requests | responses |\n|---|---|---|---|")
    for a, v in rows:
        print(f"| {a} | {v} | {counts[(a, v, 'request')]} | {counts[(a, v, 'response')]} |")
    req = sum(n for (_, _, d), n in counts.items() if d == "request")
    print(f"| **total files** | | {req} | {sum(counts.values()) - req} |")


def main(golden, as_markdown=False):
    problems, counts = [], Counter()
    for dirpath, _, files in sorted(os.walk(golden)):
        m = re.search(r"/([a-z_]+)_(request|response)/v(\d+)$", dirpath)
        if not m:
            continue
        api, direction, version = m.group(1), m.group(2), int(m.group(3))
        for name in sorted(f for f in files if f.endswith(".hex")):
            path = os.path.join(dirpath, name)
            frame = read_hex(path, problems)
            json_path = path[:-4] + ".json"
            if not os.path.exists(json_path):
                problems.append(f"{path}: no .json")
                continue
            doc = json.load(open(json_path))
            if (doc["api"], doc["api_version"], doc["direction"]) != (api, version, direction):
                problems.append(f"{path}: json says {doc['api']} v{doc['api_version']} "
                                f"{doc['direction']}")
            if doc["frame_size"] != len(frame):
                problems.append(f"{path}: frame_size mismatch")
            if direction == "request":
                hdr, reader = kd.decode_request_header(frame)
                if (hdr["api"], hdr["api_version"]) != (api, version):
                    problems.append(f"{path}: header is {hdr['api']} v{hdr['api_version']}")
            else:
                hdr, reader = kd.decode_response_header(frame, doc["api_key"], version)
                pair = os.path.join(golden, doc["pair"])
                req_hdr, _ = kd.decode_request_header(read_hex(pair, problems))
                if req_hdr["correlation_id"] != hdr["correlation_id"]:
                    problems.append(f"{path}: correlation id {hdr['correlation_id']} "
                                    f"!= request's {req_hdr['correlation_id']}")
                if (req_hdr["api"], req_hdr["api_version"]) != (api, version):
                    problems.append(f"{path}: paired with {req_hdr['api']} "
                                    f"v{req_hdr['api_version']}")
            body, err = kd.decode_body(direction, doc["api_key"], version, reader)
            if err:
                problems.append(f"{path}: {err}")
            crc_problems(body, path, problems)
            if api == "produce" and direction == "request" and body is not None:
                check_records(doc, path, problems)
            counts[(api, version, direction)] += 1
    if as_markdown:
        markdown(counts)
    else:
        for (api, version, direction), n in sorted(counts.items()):
            print(f"{api:18} v{version:<3} {direction:9} {n}")
        print(f"total {sum(counts.values())} frames")
    for p in problems:
        print("PROBLEM: " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[-1], "--markdown" in sys.argv[1:-1]))
