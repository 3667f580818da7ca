#!/usr/bin/env python3
"""Golden frames from a real Apache Kafka 4.4.0 broker and real Java
producers (org.apache.kafka:kafka-clients 2.7.2 ... 4.4.0), recorded by a
relay on 127.0.0.1 (kafka4_relay.py). Run by capture_kafka4.sh, which fetches
the clients and compiles java/GoldenProducer.java against each first.

    capture_kafka4.py CLASSES_ROOT CLIENTS_ROOT VERSION... [--out DIR] [--only CASE]

Writes <api>_<request|response>/v<N>/<case>[_k].hex and .json under DIR
(default tests/golden), replaces its own earlier rows (cases named java_*) in
DIR/MANIFEST.tsv and appends the new ones, and prints a counts table.
"""
import argparse
import datetime
import json
import os
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "kafka"))

import kafka4_bodies as kb  # noqa: E402
import kafka_decode as kd  # noqa: E402
from describe import error_name  # noqa: E402
from kafka4_relay import Relay, pair_frames  # noqa: E402
from kafka_cluster import KafkaCluster, free_ports, kafka_version  # noqa: E402
from kafka_records import flatten  # noqa: E402
from kafka_wire import API_NAMES, FIRST_FLEXIBLE  # noqa: E402

TOPIC = "golden"
CASE_PREFIX = "java_"
JVM = ["-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Djava.awt.headless=true"]
RECORDS = [("order-1", "created"), ("order-2", "paid"), ("order-1", "shipped"),
           ("order-3", "note: " + "gift wrap please; " * 8)]
HEADERS = [("trace-id", "abc123"), ("source", "java")]


def cases(versions):
    """(case name, kafka-clients version, compression or None for the raw
    requests, headers)."""
    out = []
    for v in versions:
        tag = v.replace(".", "_")
        out.append(("java_kafka_clients_%s_idempotent_none_headers" % tag, v, "none", True))
        out.append(("java_kafka_clients_%s_idempotent_zstd" % tag, v, "zstd", False))
    newest = versions[-1]
    out.append(("java_kafka_clients_%s_idempotent_lz4_headers" % newest.replace(".", "_"),
                newest, "lz4", True))
    out.append(("java_kafka_clients_%s_raw_metadata" % newest.replace(".", "_"), newest, None, False))
    return out


RAW_METADATA_VERSIONS = ["10"]


def records_sent(headers):
    return [{"key": k, "value": v,
             "headers": [{"key": hk, "value": hv} for hk, hv in HEADERS] if headers else []}
            for k, v in RECORDS]


def strip_corr(frame, request):
    off = 4 if request else 0
    return frame[:off] + b"\0\0\0\0" + frame[off + 4:]


def produce_summary(body):
    parts = []
    for t in body["topics"]:
        for p in t["partitions"]:
            entries = (p["records"] or {}).get("entries", [])
            s = {"topic": t.get("topic"), "topic_id": t.get("topic_id"),
                 "partition": p["partition"],
                 "magic": sorted({e["batch"]["magic"] for e in entries if "batch" in e}),
                 "compression": sorted({e["batch"]["codec"] for e in entries if "batch" in e}),
                 "entries": len(entries), "records": flatten(p["records"])}
            batches = [e["batch"] for e in entries if "batch" in e]
            if batches:
                b = batches[0]
                s.update(producer_id=b["producer_id"], producer_epoch=b["producer_epoch"],
                         base_sequence=b["base_sequence"], transactional=b["transactional"])
            parts.append(s)
    return {"acks": body["acks"], "timeout_ms": body["timeout_ms"],
            "transactional_id": body.get("transactional_id"), "partitions": parts}


def response_errors(api_key, body):
    out = []
    if api_key == 0:
        for t in body.get("topics") or []:
            for p in t["partitions"]:
                out.append({"topic": t.get("topic"), "topic_id": t.get("topic_id"),
                            "partition": p["partition"], "error_code": p["error_code"],
                            "error": error_name(p["error_code"])})
    if api_key == 3:
        for t in body.get("topics") or []:
            out.append({"topic": t["topic"], "error_code": t["error_code"],
                        "error": error_name(t["error_code"])})
    if "error_code" in body:
        out.append({"error_code": body["error_code"], "error": error_name(body["error_code"])})
    return out


def header_of(direction, frame, api_key, v):
    if direction == "request":
        hdr, reader = kd.decode_request_header(frame)
    else:
        hdr, reader = kd.decode_response_header(frame, api_key, v)
    return hdr, reader


def describe(direction, frame, req_hdr, run, pair, where, date, broker):
    api_key, v = req_hdr["api_key"], req_hdr["api_version"]
    doc = {"api": API_NAMES.get(api_key, "api_%d" % api_key), "api_key": api_key, "api_version": v,
           "direction": direction, "case": run["case"], "date": date, "frame_size": len(frame),
           "size_prefix_included": False, "flexible": kd.is_flexible(api_key, v), "pair": pair,
           "client": {k: run[k] for k in ("peer", "version", "role", "command", "config", "outcome")},
           "broker": broker,
           "captured": dict(where, how="recording TCP relay on 127.0.0.1 "
                            "(tests/golden/capture/kafka4_relay.py), bytes forwarded and kept "
                            "unchanged, split by the 4-byte size prefix")}
    doc["sent_by"] = run["version"] if direction == "request" else broker
    hdr, reader = header_of(direction, frame, api_key, v)
    doc["header"] = hdr
    if api_key not in FIRST_FLEXIBLE and api_key not in kb.BODIES:
        doc["header_note"] = "flexible versions of this API unknown to the capture decoder"
    body, err = kb.decode_body(direction, api_key, v, reader)
    if err:
        doc["body_decode_error"] = err
    if body is not None:
        doc["body"] = body
        if api_key == 0 and direction == "request":
            doc["produce"] = produce_summary(body)
            doc["records_sent"] = run["records_sent"]
        if direction == "response":
            errs = response_errors(api_key, body)
            if errs:
                doc["errors"] = errs
    elif not err:
        doc["body_note"] = "body not decoded by the capture tooling (header only)"
    return doc


def write_hex(path, frame):
    h = frame.hex()
    with open(path, "w") as f:
        for i in range(0, len(h), 64):
            f.write(h[i:i + 64] + "\n")


def write_cases(runs, out_dir, date, broker, answered_by, ports):
    """Splits each run's relay connections into frames, pairs them, keeps one
    exchange per distinct content, writes the .hex/.json files under out_dir
    (responses named <answered_by>_to_<case>), replaces the runs' MANIFEST
    rows and prints the counts table. `ports` goes into each .json's
    `captured`."""
    rows, counts = [], {}
    for run in runs:
        seen = {}  # (api, version) -> {content key: doc pair}
        for conn in run["conns"]:
            for idx, req, resp in pair_frames(conn):
                req_hdr, _ = kd.decode_request_header(req)
                key = (req_hdr["api_key"], req_hdr["api_version"])
                content = (strip_corr(req, True), strip_corr(resp, False) if resp else None)
                kept = seen.setdefault(key, {})
                if content in kept:
                    kept[content]["occurrences"] += 1
                    continue
                kept[content] = {"n": len(kept) + 1, "req": req, "resp": resp, "occurrences": 1,
                                 "where": dict(ports, connection=conn.index, request_index_in_connection=idx),
                                 "hdr": req_hdr}
        for (api_key, v), kept in sorted(seen.items()):
            api = API_NAMES.get(api_key, "api_%d" % api_key)
            for e in kept.values():
                suffix = "" if e["n"] == 1 else "_%d" % e["n"]
                req_rel = "%s_request/v%d/%s%s.hex" % (api, v, run["case"], suffix)
                resp_rel = ("%s_response/v%d/%s_to_%s%s.hex" % (api, v, answered_by, run["case"], suffix)
                            if e["resp"] is not None else None)
                for direction, rel, frame, pair in (("request", req_rel, e["req"], resp_rel),
                                                    ("response", resp_rel, e["resp"], req_rel)):
                    if rel is None:
                        continue
                    path = os.path.join(out_dir, rel)
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    write_hex(path, frame)
                    doc = describe(direction, frame, e["hdr"], run, pair, e["where"], date, broker)
                    doc["occurrences"] = e["occurrences"]
                    with open(path[:-4] + ".json", "w") as f:
                        json.dump(doc, f, indent=1, sort_keys=True)
                        f.write("\n")
                    rows.append("\t".join([rel, api, str(api_key), str(v), direction, run["case"],
                                           pair or ""]))
                    c = counts.setdefault((api, v), [0, 0])
                    c[0 if direction == "request" else 1] += 1
                    if doc.get("body_decode_error"):
                        print("DECODE ERROR %s: %s" % (rel, doc["body_decode_error"]), file=sys.stderr)

    manifest = os.path.join(out_dir, "MANIFEST.tsv")
    old = []
    if os.path.exists(manifest):
        with open(manifest) as f:
            old = [ln.rstrip("\n") for ln in f if ln.strip()]
    if not old:
        old = ["path\tapi\tapi_key\tapi_version\tdirection\tcase\tpair"]
    ran = {r["case"] for r in runs}
    keep = [ln for ln in old if ln.split("\t")[5:6] == [] or ln.split("\t")[5] not in ran]
    with open(manifest, "w") as f:
        f.write("\n".join(keep + rows) + "\n")

    print("| api | version | requests | responses |")
    print("|---|---|---|---|")
    for (api, v), (nq, ns) in sorted(counts.items()):
        print("| %s | %d | %d | %d |" % (api, v, nq, ns))
    print("| **total files** | | %d | %d |" % (sum(c[0] for c in counts.values()),
                                               sum(c[1] for c in counts.values())))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("classes_root")
    ap.add_argument("clients_root")
    ap.add_argument("versions", nargs="+")
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "golden"))
    ap.add_argument("--only", action="append")
    args = ap.parse_args()
    date = datetime.date.today().isoformat()
    broker_version = kafka_version()
    broker = "Apache Kafka %s (org.apache.kafka:kafka_2.13:%s, KRaft, 1 node, tests/kafka/kafka_cluster.py)" % (
        broker_version, broker_version)

    broker_port, relay_port = free_ports(2)
    relay = Relay(relay_port, broker_port).start()
    runs = []
    with KafkaCluster(nodes=1, broker_ports=[broker_port], broker_config={
            "advertised.listeners": "PLAINTEXT://127.0.0.1:%d" % relay_port,
            "auto.create.topics.enable": "false"}) as k:
        k.create_topic(TOPIC, partitions=2)
        for case, v, codec, headers in cases(args.versions):
            if args.only and case not in args.only:
                continue
            classes = os.path.join(args.classes_root, "classes-%s" % v)
            libs = os.path.join(args.clients_root, "kafka-clients-%s" % v)
            if codec is None:
                main_args = ["GoldenRawRequests", "127.0.0.1", str(relay_port), TOPIC] + RAW_METADATA_VERSIONS
            else:
                main_args = ["GoldenProducer", "127.0.0.1:%d" % relay_port, TOPIC, codec,
                             "1" if headers else "0"]
            cmd = ["timeout", "60", "java"] + JVM + ["-cp", "%s:%s/*" % (classes, libs)] + main_args
            relay.set_case(case)
            t0 = time.time()
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            closed = relay.wait_closed(case, 10)
            relay.set_case(None)
            time.sleep(0.3)
            out = {"exit_code": p.returncode, "stderr_tail": p.stderr[-300:],
                   "seconds": round(time.time() - t0, 1)}
            try:
                out["report"] = json.loads(p.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                out["stdout_tail"] = p.stdout[-300:]
            if not closed:
                out["note"] = "a connection was still open 10 s after the client exited"
            print("%s: exit %d, %d connections, %.1f s" % (
                case, p.returncode, len(relay.connections_of(case)), out["seconds"]), file=sys.stderr)
            if codec is None:
                peer, role = "kafka-clients (generated MetadataRequestData, plain socket)", "raw requests"
                config = {"main": "tests/golden/capture/java/GoldenRawRequests.java",
                          "metadata_versions": RAW_METADATA_VERSIONS, "topics": [TOPIC],
                          "allow_auto_topic_creation": False, "client.id": "golden-java-raw"}
            else:
                peer, role, config = "kafka-clients (Java KafkaProducer)", "producer", {
                                    "main": "tests/golden/capture/java/GoldenProducer.java",
                                    "bootstrap.servers": "127.0.0.1:%d" % relay_port, "acks": "all",
                                    "enable.idempotence": "true", "compression.type": codec,
                                    "linger.ms": "50", "client.id": "golden-java-%s" % v,
                                    "max.in.flight.requests.per.connection": "5",
                                    "headers": headers}
            runs.append({"case": case, "peer": peer,
                         "version": "org.apache.kafka:kafka-clients %s" % v, "role": role,
                         "command": cmd,
                         "config": config,
                         "outcome": out, "records_sent": records_sent(headers) if codec else None,
                         "conns": relay.connections_of(case)})
    relay.stop()

    write_cases(runs, args.out, date, broker, "kafka_%s" % broker_version.replace(".", "_"),
                {"relay_port": relay_port, "broker_port": broker_port})
    bad = [r["case"] for r in runs if r["outcome"]["exit_code"] != 0]
    if bad:
        print("clients that failed: %s" % bad, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
