#!/usr/bin/python3
"""Produces through the proxy with kafka-python 2.0.2, one topic per
(acks, compression) combination, and prints one JSON line per record:
{"topic", "key", "partition", "offset", "timestamp"} (offset -1 for acks=0).

usage: kafka_python_produce.py BOOTSTRAP API_VERSION TOPIC_PREFIX COUNT
API_VERSION is "0.9", "0.10", "0.11" or "auto" (kafka-python probes).
"""
import json
import sys

from kafka import KafkaProducer


def main():
    bootstrap, api, prefix, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    api_version = None if api == "auto" else tuple(int(x) for x in api.split("."))
    # Record headers exist from magic 2 (Produce v3, api 0.11) on.
    with_headers = api_version is None or api_version >= (0, 11)
    base_ts = 1_700_000_000_000
    for acks in (0, 1, "all"):
        for compression in (None, "gzip"):
            topic = "%s-acks%s-%s" % (prefix, acks, compression or "none")
            kwargs = dict(bootstrap_servers=bootstrap, acks=acks, compression_type=compression,
                          linger_ms=10, request_timeout_ms=20000, max_block_ms=20000)
            if api_version is not None:
                kwargs["api_version"] = api_version
            producer = KafkaProducer(**kwargs)
            futures = []
            for i in range(count):
                extra = {"headers": [("n", str(i).encode())]} if with_headers else {}
                futures.append((i, producer.send(topic, key=("k-%d" % i).encode(), value=("v-%d" % i).encode(),
                                                 partition=i % 2, timestamp_ms=base_ts + i, **extra)))
            producer.flush(30)
            for i, f in futures:
                md = f.get(30)
                print(json.dumps({"topic": topic, "key": "k-%d" % i, "partition": md.partition,
                                  "offset": md.offset, "timestamp": base_ts + i, "headers": with_headers}))
            producer.close(10)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
