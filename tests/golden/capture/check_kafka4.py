#!/usr/bin/env python3
"""check_golden.py's checks for the Apache Kafka 4.4.0 / Java client frames
(MANIFEST rows whose case starts with java_), with the flexible-version
decoder of kafka4_bodies.py: hex format, a .json for each file that agrees
with the directory, the header's api and version, a response's correlation
id equal to its request's, the body decoded exactly (no bytes left), record
CRCs, and every record in a Produce request one the client was asked to send.
The mock-era decoder behind check_golden.py stops at Produce v7/Metadata v8,
so it cannot read these files.

  check_kafka4.py [GOLDEN_DIR]       exits 1 on any problem
"""
import json
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kafka4_bodies as kb  # noqa: E402
import kafka_decode as kd  # noqa: E402
from check_golden import check_records, crc_problems, read_hex  # noqa: E402


def main(golden):
    problems, counts = [], Counter()
    rows = [ln.rstrip("\n").split("\t") for ln in open(os.path.join(golden, "MANIFEST.tsv"))][1:]
    for rel, api, key, version, direction, case, pair in rows:
        if not case.startswith("java_"):
            continue
        key, version = int(key), int(version)
        path = os.path.join(golden, rel)
        frame = read_hex(path, problems)
        doc = json.load(open(path[:-4] + ".json"))
        want_dir = "%s_%s/v%d" % (api, direction, version)
        if not rel.startswith(want_dir + "/") or (doc["api"], doc["api_version"], doc["direction"],
                                                   doc["pair"] or "") != (api, version, direction, pair):
            problems.append("%s: manifest, path and json disagree" % rel)
        if doc["frame_size"] != len(frame):
            problems.append("%s: frame_size mismatch" % rel)
        if direction == "request":
            hdr, reader = kd.decode_request_header(frame)
            if (hdr["api_key"], hdr["api_version"]) != (key, version):
                problems.append("%s: header is api %d v%d" % (rel, hdr["api_key"], hdr["api_version"]))
        else:
            hdr, reader = kd.decode_response_header(frame, key, version)
            req_hdr, _ = kd.decode_request_header(read_hex(os.path.join(golden, pair), problems))
            if req_hdr["correlation_id"] != hdr["correlation_id"]:
                problems.append("%s: correlation id differs from its request's" % rel)
        body, err = kb.decode_body(direction, key, version, reader)
        if err:
            problems.append("%s: %s" % (rel, err))
        if body is not None and doc.get("body") != json.loads(json.dumps(body)):
            problems.append("%s: decoded body differs from the .json" % rel)
        crc_problems(body, rel, problems)
        if key == 0 and direction == "request" and body is not None:
            check_records(doc, rel, problems)
        counts[(api, version, direction)] += 1
    for (api, version, direction), n in sorted(counts.items()):
        print("%-18s v%-3d %-9s %d" % (api, version, direction, n))
    print("total %d frames" % sum(counts.values()))
    for p in problems:
        print("PROBLEM: " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else
                  os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
