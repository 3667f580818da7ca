#!/usr/bin/python3
"""Reads every partition of a topic from the beginning with kafka-python's
KafkaConsumer (an implementation independent of librdkafka) and prints one
line per record: "PARTITION OFFSET VALUE". Used by rdkafka_exactly_once_test.

Usage: read_log_kafka_python.py BOOTSTRAP TOPIC [DEADLINE_SECONDS]
Exits 1 if the end offsets are not reached before the deadline.
"""
import sys
import time

from kafka import KafkaConsumer, TopicPartition


def main():
    bootstrap, topic = sys.argv[1], sys.argv[2]
    deadline = time.monotonic() + (float(sys.argv[3]) if len(sys.argv) > 3 else 30.0)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap.split(","), group_id=None,
                             enable_auto_commit=False, request_timeout_ms=10000,
                             api_version_auto_timeout_ms=5000)
    partitions = sorted(consumer.partitions_for_topic(topic) or [])
    tps = [TopicPartition(topic, p) for p in partitions]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    # Take the end offsets first and read up to them (TOOLS.md: a robust reader).
    end = consumer.end_offsets(tps)
    out = []
    while any(consumer.position(tp) < end[tp] for tp in tps):
        if time.monotonic() > deadline:
            print("deadline reached before the end offsets", file=sys.stderr)
            return 1
        for tp, records in consumer.poll(timeout_ms=500).items():
            for r in records:
                out.append("%d %d %s" % (tp.partition, r.offset, r.value.decode()))
    consumer.close()
    sys.stdout.write("\n".join(out) + ("\n" if out else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
