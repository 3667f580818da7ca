"""Turns a loopback capture of clients talking to the mock cluster into golden
files: tests/golden/<api>_<request|response>/v<N>/<case>.hex (+ .json).

  split_frames.py PCAP BROKER_PORT RUNS_JSONL OUT_DIR

Each TCP connection is reassembled per direction by tshark
(`-z follow,tcp,raw,N`), attributed to the case whose time window holds its
SYN, and cut into Kafka frames by the 4-byte size prefix. Requests and
responses are paired by correlation id within their connection. A frame is
written without its size prefix as lowercase hex, 32 bytes per line.

De-duplication: within one case, a (request, response) pair is kept once per
distinct byte content ignoring the correlation id (a client repeating the
same Metadata request differs only there); the JSON counts the repeats.
Fetch pairs are kept only when they show something new for their case
(fetch_features: an error, an empty answer, a batch of a magic/codec/
idempotence/headers kind not kept yet): a consumer reading the topic back
gets one batch per partition per fetch from the mock, and dozens of
near-identical pairs would add bytes, not coverage.
"""
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict

import kafka_decode as kd
from describe import describe_frame

DATE = datetime.date.today().isoformat()  # the capture date
MOCK = "librdkafka 2.0.2 mock cluster (rdkafka_mock, tests/golden/capture/mock_cluster.c)"


def tshark(*args):
    return subprocess.run(["timeout", "120", "tshark", *args], check=True,
                          capture_output=True, text=True).stdout


def stream_starts(pcap):
    out = tshark("-r", pcap, "-Y", "tcp.flags.syn==1 && tcp.flags.ack==0",
                 "-T", "fields", "-e", "tcp.stream", "-e", "frame.time_epoch")
    starts = {}
    for line in out.splitlines():
        sid, t = line.split("\t")
        starts.setdefault(int(sid), float(t))
    return starts


def follow_streams(pcap, ids, port):
    """{stream: {"client": bytes, "broker": bytes}} via tshark's follow."""
    args = ["-r", pcap, "-q"]
    for sid in ids:
        args += ["-z", f"follow,tcp,raw,{sid}"]
    out = tshark(*args)
    streams, cur, nodes = {}, None, {}
    for line in out.splitlines():
        m = re.match(r"Filter: tcp.stream eq (\d+)", line)
        if m:
            cur = int(m.group(1))
            streams[cur] = {"client": bytearray(), "broker": bytearray()}
            nodes = {}
            continue
        m = re.match(r"Node (\d): .*:(\d+)$", line)
        if m:
            nodes[int(m.group(1))] = "broker" if int(m.group(2)) == port else "client"
            continue
        if cur is None or not line.strip() or line.startswith("="):
            continue
        if re.fullmatch(r"\t?[0-9a-f]+", line):
            # tshark indents node 1's data with a tab.
            node = 1 if line.startswith("\t") else 0
            streams[cur][nodes[node]] += bytes.fromhex(line.strip())
    return streams


def tshark_request_counts(pcap, port):
    """(api_key, api_version) -> requests, as Wireshark's own Kafka dissector
    sees them: a second, independent check of our framing."""
    out = tshark("-r", pcap, "-d", f"tcp.port=={port},kafka", "-Y", f"kafka && tcp.dstport=={port}",
                 "-T", "fields", "-E", "separator=/t", "-E", "aggregator=;",
                 "-e", "kafka.request_key", "-e", "kafka.api_version")
    counts = defaultdict(int)
    for line in out.splitlines():
        # One TCP segment may carry several requests; tshark lists each field's
        # occurrences joined by the aggregator, in order.
        keys, versions = (f.split(";") for f in line.split("\t")[:2])
        for key, ver in zip(keys, versions):
            counts[(int(key), int(ver))] += 1
    return counts


def split(data):
    frames, pos = [], 0
    while pos + 4 <= len(data):
        size = int.from_bytes(data[pos:pos + 4], "big", signed=True)
        if size < 0 or pos + 4 + size > len(data):
            break
        frames.append(bytes(data[pos + 4:pos + 4 + size]))
        pos += 4 + size
    return frames, len(data) - pos


def hexlines(frame):
    h = frame.hex()
    return "".join(h[i:i + 64] + "\n" for i in range(0, len(h), 64))


def masked(frame, direction):
    """The frame with its correlation id zeroed, for de-duplication."""
    at = 4 if direction == "request" else 0
    return frame[:at] + b"\0\0\0\0" + frame[at + 4:]


def fetch_features(resp, version):
    """What distinguishes one Fetch answer from another for a codec test:
    per partition the error and whether data came back, per returned entry
    its magic, codec, idempotence, control flag and headers, and whether the
    data ends in a partial entry."""
    hdr, reader = kd.decode_response_header(resp, 1, version)
    body, err = kd.decode_body("response", 1, version, reader)
    if err:
        return {("undecodable", resp)}
    features = set()
    for t in body["topics"]:
        for p in t["partitions"]:
            features.add(("partition", p["error_code"], (p["records_size"] or 0) > 0))
            records = p["records"] or {}
            if records.get("partial_tail_bytes"):
                features.add(("partial_tail",))
            for e in records.get("entries", []):
                if "batch" in e:
                    b = e["batch"]
                    features.add((2, b["codec"], b["producer_id"] >= 0, b["control"],
                                  any(r["headers"] for r in b.get("records", []))))
                else:
                    features.add((e["message"]["magic"], e["message"]["codec"]))
    return features


def dedup_features(hdr, req, resp):
    """A pair is kept when it shows a feature not yet kept for its case."""
    api = (hdr["api"], hdr["api_version"])
    if hdr["api_key"] == 1 and resp is not None:
        return {api + (f,) for f in fetch_features(resp, hdr["api_version"])}
    return {api + (masked(req, "request"), None if resp is None else masked(resp, "response"))}


def clean(out_dir):
    for name in os.listdir(out_dir):
        path = os.path.join(out_dir, name)
        if os.path.isdir(path) and re.fullmatch(r"[a-z_]+_(request|response)", name):
            shutil.rmtree(path)


def main(pcap, port, runs_path, out_dir):
    port = int(port)
    runs = [json.loads(l) for l in open(runs_path)]
    starts = stream_starts(pcap)
    streams = follow_streams(pcap, sorted(starts), port)
    tshark_version = tshark("--version").splitlines()[0]

    by_case = defaultdict(list)  # case -> [(stream id, stream)]
    for sid in sorted(starts, key=starts.get):
        owner = [r for r in runs if r["start"] <= starts[sid] <= r["end"]]
        if len(owner) != 1:
            print(f"split: stream {sid} at {starts[sid]} matches {len(owner)} cases; skipped",
                  file=sys.stderr)
            continue
        by_case[owner[0]["case"]].append((sid, streams[sid]))

    clean(out_dir)
    manifest, problems = [], []
    seen_requests = defaultdict(int)  # (api_key, version) -> count, before de-dup
    for run in runs:
        seen = {}  # feature -> (stem, entry) of the pair that first showed it
        counters = defaultdict(int)
        for sid, st in by_case.get(run["case"], []):
            reqs, req_tail = split(st["client"])
            resps, resp_tail = split(st["broker"])
            if req_tail or resp_tail:
                problems.append(f"{run['case']} stream {sid}: partial frame at end "
                                f"({req_tail} client, {resp_tail} broker bytes)")
            by_corr = {}
            for resp in resps:
                by_corr.setdefault(int.from_bytes(resp[:4], "big", signed=True), resp)
            paired = set()
            for idx, req in enumerate(reqs):
                hdr, _ = kd.decode_request_header(req)
                seen_requests[(hdr["api_key"], hdr["api_version"])] += 1
                resp = by_corr.get(hdr["correlation_id"])
                if resp is not None:
                    paired.add(hdr["correlation_id"])
                features = dedup_features(hdr, req, resp)
                if features <= seen.keys():
                    first = next(iter(features))
                    seen[first][1]["occurrences"] += 1
                    continue
                counters[(hdr["api"], hdr["api_version"])] += 1
                n = counters[(hdr["api"], hdr["api_version"])]
                stem = run["case"] if n == 1 else f"{run['case']}_{n}"
                where = {"stream": sid, "request_index_in_stream": idx,
                         "tshark": tshark_version, "broker_port": port}
                entry = write_pair(out_dir, run, stem, hdr, req, resp, where)
                for f in features - seen.keys():
                    seen[f] = (stem, entry)
                manifest.extend(entry["files"])
            for resp in resps:
                corr = int.from_bytes(resp[:4], "big", signed=True)
                if corr not in paired:
                    problems.append(f"{run['case']} stream {sid}: response with "
                                    f"correlation id {corr} has no request")
        written = {id(e): e for _, e in seen.values()}
        for entry in written.values():
            for path in entry["json_paths"]:
                with open(path) as f:
                    doc = json.load(f)
                doc["occurrences"] = entry["occurrences"]
                with open(path, "w") as f:
                    json.dump(doc, f, indent=1, sort_keys=True)
                    f.write("\n")

    with open(os.path.join(out_dir, "MANIFEST.tsv"), "w") as f:
        f.write("path\tapi\tapi_key\tapi_version\tdirection\tcase\tpair\n")
        for row in sorted(manifest):
            f.write("\t".join(str(x) for x in row) + "\n")
    theirs = tshark_request_counts(pcap, port)
    if dict(theirs) != dict(seen_requests):
        problems.append(f"request counts differ from tshark's Kafka dissector: ours "
                        f"{dict(seen_requests)}, tshark {dict(theirs)}")
    else:
        print(f"split: {sum(theirs.values())} requests, per (api, version) the same as "
              f"tshark's Kafka dissector counts", file=sys.stderr)
    for p in problems:
        print("split: " + p, file=sys.stderr)
    print(f"split: wrote {len(manifest)} frames", file=sys.stderr)
    return 1 if problems else 0


def write_pair(out_dir, run, stem, hdr, req, resp, where):
    api, v = hdr["api"], hdr["api_version"]
    req_rel = f"{api}_request/v{v}/{stem}.hex"
    resp_rel = f"{api}_response/v{v}/librdkafka_mock_to_{stem}.hex"
    entry = {"occurrences": 1, "files": [], "json_paths": []}
    frames = [("request", req, req_rel, resp_rel if resp is not None else None)]
    if resp is not None:
        frames.append(("response", resp, resp_rel, req_rel))
    for direction, frame, rel, pair in frames:
        path = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(hexlines(frame))
        doc = describe_frame(direction, frame, hdr, req, run, pair, where, DATE, MOCK)
        json_path = path[:-4] + ".json"
        with open(json_path, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")
        entry["json_paths"].append(json_path)
        entry["files"].append((rel, api, hdr["api_key"], v, direction, run["case"],
                               pair or "-"))
    return entry


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))
