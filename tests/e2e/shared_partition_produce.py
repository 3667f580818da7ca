#!/usr/bin/python3
"""Three kafka-python 2.0.2 producers (three connections, Produce v2, magic 1)
send to one partition at once, round after round, so the proxy puts their
records in shared upstream batches. Client "b" sends a record keyed
"poison" every fifth round, which the upstream refuses. Prints one JSON
line per record: {"client", "key", "offset", "error"} (offset -1 and the
error's class name when the send failed, error "" when it did not).

usage: shared_partition_produce.py BOOTSTRAP TOPIC ROUNDS
"""
import json
import sys

from kafka import KafkaProducer


def main():
    bootstrap, topic, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    producers = {
        name: KafkaProducer(bootstrap_servers=bootstrap, api_version=(0, 10), acks="all", retries=0, linger_ms=0,
                            max_in_flight_requests_per_connection=1, request_timeout_ms=20000, max_block_ms=20000)
        for name in ("a", "b", "c")
    }
    sent = []
    for i in range(rounds):
        for name, producer in producers.items():
            key = "poison" if name == "b" and i % 5 == 2 else "%s-%d" % (name, i)
            sent.append((name, key, producer.send(topic, key=key.encode(), value=("v-%d" % i).encode(), partition=0)))
        for producer in producers.values():
            producer.flush(30)
    for name, key, future in sent:
        try:
            md = future.get(30)
            print(json.dumps({"client": name, "key": key, "offset": md.offset, "error": ""}))
        except Exception as e:  # the client's view of a refused record: its error class
            print(json.dumps({"client": name, "key": key, "offset": -1, "error": type(e).__name__}))
    for producer in producers.values():
        producer.close(10)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
