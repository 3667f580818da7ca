"""Runs confluent_kafka (Debian's python3-confluent-kafka 1.7.0 on librdkafka
2.0.2) as a producer against the mock cluster so capture_all.sh can record
InitProducerId and idempotent Produce frames. Run with /usr/bin/python3.

  confluent_peer.py CONFIG_JSON RECORDS_JSON

CONFIG_JSON is merged over {"bootstrap.servers": ...}; prints one JSON line.
"""
import json
import sys

import confluent_kafka
from confluent_kafka import Producer


def main(argv):
    config = json.loads(argv[1])
    records = json.loads(argv[2])
    results = []

    def on_delivery(err, msg):
        if err:
            results.append({"error": str(err)})
        else:
            results.append({"partition": msg.partition(), "offset": msg.offset()})

    producer = Producer(config)
    for rec in records:
        kwargs = {}
        if rec.get("partition") is not None:
            kwargs["partition"] = rec["partition"]
        if rec.get("headers"):
            kwargs["headers"] = [(h["key"], h["value"].encode()) for h in rec["headers"]]
        producer.produce("golden", key=rec.get("key"), value=rec.get("value"),
                         on_delivery=on_delivery, **kwargs)
    left = producer.flush(10)
    print(json.dumps({"confluent_kafka_version": confluent_kafka.version()[0],
                      "librdkafka_version": confluent_kafka.libversion()[0],
                      "undelivered": left, "results": results}))


if __name__ == "__main__":
    main(sys.argv)
