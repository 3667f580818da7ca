#!/usr/bin/env python3
"""A client's allow_auto_topic_creation reaches real Kafka (issue 14).

Kafka 4.4.0 with auto.create.topics.enable=true (the harness default), the
built produce-proxy in front with a 300 ms metadata_max_age_ms, so refreshes
come often. Raw Metadata v7 requests to the proxy:

- allow_auto_topic_creation=false for a missing topic: it is not created,
  neither by that request nor by the refreshes that follow (before issue 14
  every upstream Metadata request asked for creation);
- true for another missing topic: it is created, as a client asking a real
  broker would see;
- that topic deleted afterwards: the proxy's refreshes do not re-create it.

usage: auto_create_test.py --proxy BINARY
"""
import argparse
import os
import socket
import struct
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "daemon"))
from kafka_cluster import KafkaCluster  # noqa: E402
from proxy_under_test import plain_config  # noqa: E402
from daemon_support import Proxy, free_port  # noqa: E402

ARGS = None
REFRESHES_S = 3.0  # ten refreshes at 300 ms


def metadata_v7(port, topic, allow_auto_topic_creation, correlation_id=1):
    """Error code of `topic` in a Metadata v7 answer from the proxy."""
    client = b"auto-create-test"
    name = topic.encode()
    body = struct.pack(">i", 1) + struct.pack(">h", len(name)) + name + bytes([int(allow_auto_topic_creation)])
    msg = struct.pack(">hhih", 3, 7, correlation_id, len(client)) + client + body
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(struct.pack(">i", len(msg)) + msg)
        head = s.recv(4, socket.MSG_WAITALL)
        (size,) = struct.unpack(">i", head)
        resp = s.recv(size, socket.MSG_WAITALL)
    # correlation, throttle, brokers[], cluster_id, controller, topics[]
    off = 8
    (brokers,) = struct.unpack_from(">i", resp, off)
    off += 4
    for _ in range(brokers):
        off += 4
        (hl,) = struct.unpack_from(">h", resp, off)
        off += 2 + hl + 4
        (rl,) = struct.unpack_from(">h", resp, off)
        off += 2 + max(rl, 0)
    (cl,) = struct.unpack_from(">h", resp, off)
    off += 2 + max(cl, 0) + 4
    (topics,) = struct.unpack_from(">i", resp, off)
    off += 4
    assert topics == 1, topics
    (error,) = struct.unpack_from(">h", resp, off)
    return error


def proxy_config(bootstrap, client_port, metrics_port):
    return plain_config(bootstrap, client_port, metrics_port, upstream="metadata_max_age_ms = 300")


class AutoCreate(unittest.TestCase):

    def test_creation_only_when_the_client_asks_and_never_by_refreshes(self):
        kafka = KafkaCluster(nodes=1)
        kafka.start()
        self.addCleanup(kafka.stop)
        client, metrics = free_port(), free_port()
        proxy = Proxy(ARGS.proxy, proxy_config(kafka.bootstrap, client, metrics))
        self.addCleanup(proxy.stop, 30)
        self.assertTrue(proxy.wait_ready(60), proxy.text()[-4000:])

        def exists(topic):
            return kafka.metadata([topic]).topic_errors.get(topic, 3) == 0

        metadata_v7(client, "not-to-be-created", False)
        time.sleep(REFRESHES_S)
        self.assertFalse(exists("not-to-be-created"),
                         "a client that asked not to create a topic must not get it created upstream")

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and metadata_v7(client, "to-be-created", True) != 0:
            time.sleep(0.2)
        self.assertTrue(exists("to-be-created"), "allow_auto_topic_creation=true creates, as a broker would")

        kafka.delete_topic("to-be-created")
        time.sleep(REFRESHES_S)
        self.assertFalse(exists("to-be-created"), "refreshes must not re-create a deleted topic")
        self.assertFalse(exists("not-to-be-created"))
        self.assertTrue(proxy.alive(), proxy.text()[-3000:])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest)
