"""Runs kafka-python (Debian's python3-kafka 2.0.2) against the mock cluster,
one producer or consumer per invocation, so capture_all.sh can record the
bytes it puts on the wire. Run with /usr/bin/python3 (Debian's modules).

  kafka_python_peer.py produce BOOTSTRAP API_VERSION COMPRESSION ACKS RECORDS_JSON
  kafka_python_peer.py consume BOOTSTRAP API_VERSION GROUP_ID|-

API_VERSION is "auto" (let kafka-python probe the broker) or e.g. "0,10".
Prints one JSON line describing the outcome; exit 0 even when the broker
refuses the records (error 35 is an expected, recorded answer).
"""
import json
import logging
import sys

import kafka
from kafka import KafkaConsumer, KafkaProducer


def api_version(arg):
    return None if arg == "auto" else tuple(int(x) for x in arg.split(","))


def produce(bootstrap, version, compression, acks, records):
    cfg = dict(bootstrap_servers=bootstrap, api_version=api_version(version),
               compression_type=None if compression == "none" else compression,
               acks="all" if acks == "all" else int(acks),
               linger_ms=50, retries=0, request_timeout_ms=5000,
               max_block_ms=5000)
    producer = KafkaProducer(**cfg)
    futures = []
    for rec in records:
        key = None if rec.get("key") is None else rec["key"].encode()
        value = None if rec.get("value") is None else rec["value"].encode()
        futures.append(producer.send("golden", key=key, value=value,
                                     partition=rec.get("partition")))
    producer.flush(timeout=10)
    results = []
    for f in futures:
        try:
            md = f.get(timeout=5)
            results.append({"partition": md.partition, "offset": md.offset})
        except Exception as e:  # the mock refuses magic 0/1 (error 35)
            results.append({"error": f"{type(e).__name__}: {e}"})
    negotiated = producer.config.get("api_version")
    producer.close(timeout=5)
    return {"negotiated_api_version": negotiated, "results": results}


def consume(bootstrap, version, group):
    cfg = dict(bootstrap_servers=bootstrap, api_version=api_version(version),
               auto_offset_reset="earliest", consumer_timeout_ms=3000,
               request_timeout_ms=5000, fetch_max_wait_ms=100,
               group_id=None if group == "-" else group,
               enable_auto_commit=group != "-")
    if group != "-":
        # kafka-python insists that requests may outlive a session.
        cfg.update(session_timeout_ms=6000, heartbeat_interval_ms=1000,
                   request_timeout_ms=8000, consumer_timeout_ms=6000)
    consumer = KafkaConsumer("golden", **cfg)
    got = []
    try:
        for msg in consumer:
            got.append({"partition": msg.partition, "offset": msg.offset,
                        "key": None if msg.key is None else msg.key.decode(errors="replace"),
                        "value": None if msg.value is None else msg.value.decode(errors="replace")})
    except Exception as e:
        got.append({"error": f"{type(e).__name__}: {e}"})
    negotiated = consumer.config.get("api_version")
    consumer.close()
    return {"negotiated_api_version": negotiated, "consumed": len(got),
            "messages": got[:50]}


def main(argv):
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    mode, bootstrap, version = argv[1], argv[2], argv[3]
    if mode == "produce":
        out = produce(bootstrap, version, argv[4], argv[5], json.loads(argv[6]))
    elif mode == "consume":
        out = consume(bootstrap, version, argv[4])
    else:
        raise SystemExit(f"unknown mode {mode}")
    out["kafka_python_version"] = kafka.__version__
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main(sys.argv)
