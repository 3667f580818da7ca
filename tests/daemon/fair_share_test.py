#!/usr/bin/env python3
"""Fair share of the one memory budget (issue 14): a client producing to a
partition whose upstream never acknowledges cannot starve another client.

The shipped binary with the example config, the test cluster upstream (one
broker; partition stalled-0 answers every Produce NOT_ENOUGH_REPLICAS, a
retriable error, so the proxy keeps its records until the delivery timeout)
and a 16 MiB budget (producer.buffer_memory_bytes). The hog, a librdkafka
producer, sends to stalled-0 until the proxy holds the whole budget for it.
Then a second client produces to healthy-0 one record at a time, each
waited for: on the code before the fair share every reader was paused while
the budget was full, so the second client got no answer at all (not even to
Metadata) until the hog's records timed out. Now the second client is
admitted in the headroom (1/8 of the budget) and every record is acked
within ACK_TIMEOUT_S; peak VmRSS growth stays under the budget, the
headroom and RSS_SLACK_MIB.

usage: fair_share_test.py --proxy BINARY --cluster TEST_CLUSTER [unittest args]
"""
import os
import statistics
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_support  # noqa: E402
from daemon_support import (Proxy, TestCluster, free_port, http_request, is_asan_build,  # noqa: E402
                            metric_value, reset_peak_rss, status_kib)

from confluent_kafka import Producer  # noqa: E402

ARGS = None
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE_CONFIG = os.path.join(REPO, "config", "produce-proxy.example.toml")
MIB = 1024 * 1024
BUDGET = 16 * MIB
# Full for the hog: no room for another of its frames (listener.max_request_bytes
# is 1 MiB here), as frames are admitted only if they fit whole.
FULL = BUDGET - MIB
RECORD = b"x" * 10000
PROBE_RECORDS = 20
ACK_TIMEOUT_S = 5.0
HOG_FILL_TIMEOUT_S = 30
RSS_SLACK_MIB = 24


def hog(port, stop, sent):
    """Produces to stalled-0 as fast as librdkafka lets it, until `stop`."""
    p = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "acks": 1, "linger.ms": 20,
                  "message.timeout.ms": 300000, "queue.buffering.max.kbytes": 256 * 1024,
                  "api.version.request": True})
    deadline = time.monotonic() + 120
    while not stop.is_set() and time.monotonic() < deadline:
        try:
            p.produce("stalled", RECORD, partition=0)
            sent[0] += 1
        except BufferError:
            time.sleep(0.01)
        p.poll(0)
    p.purge()
    p.flush(1)


def probe(port, count):
    """Produces `count` records to healthy-0 one at a time; returns each
    one's ack latency in seconds (None for a record not acked in time)."""
    p = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "acks": 1, "linger.ms": 0,
                  "message.timeout.ms": int(ACK_TIMEOUT_S * 1000), "socket.timeout.ms": int(ACK_TIMEOUT_S * 1000)})
    latencies = []
    for i in range(count):
        result = {}
        start = time.monotonic()
        p.produce("healthy", b"probe-%d" % i, partition=0,
                  on_delivery=lambda err, msg: result.update(err=err, at=time.monotonic()))
        deadline = start + ACK_TIMEOUT_S + 1
        while "at" not in result and time.monotonic() < deadline:
            p.poll(0.05)
        ok = "at" in result and result["err"] is None
        latencies.append(result["at"] - start if ok else None)
        if not ok:
            break  # librdkafka's timeout: the rest would time out the same way
    p.purge()
    p.flush(1)
    return latencies


def stalled_cluster_and_proxy(extra_sets=()):
    """The test cluster (stalled-0 answering NOT_ENOUGH_REPLICAS once armed,
    healthy-0) and the shipped proxy before it with a BUDGET budget and 1 MiB
    frames: (cluster, proxy, client port, metrics port)."""
    cluster = TestCluster(ARGS.cluster, "--brokers", "1", "--topic", "stalled:1:5", "--topic", "healthy:1:5")
    client, metrics = free_port(), free_port()
    sets = [f'upstream.bootstrap_servers=["{cluster.bootstrap}"]', f'listener.address="127.0.0.1:{client}"',
            f'metrics.address="127.0.0.1:{metrics}"', f"producer.buffer_memory_bytes={BUDGET}",
            f"listener.max_request_bytes={MIB}", *extra_sets]
    return cluster, Proxy(ARGS.proxy, config_path=EXAMPLE_CONFIG, sets=sets), client, metrics


def fill_budget(test, cluster, client, metrics, stop):
    """Arms the stall and starts the hog on stalled-0; returns its thread once
    the budget holds FULL (the test fails if it does not in time)."""
    test.assertEqual(cluster.command("error stalled 0 NOT_ENOUGH_REPLICAS 100000000"), "ok")
    sent = [0]
    thread = threading.Thread(target=hog, args=(client, stop, sent), daemon=True)
    thread.start()
    held = 0
    deadline = time.monotonic() + HOG_FILL_TIMEOUT_S
    while time.monotonic() < deadline and held < FULL:
        time.sleep(0.2)
        held = metric_value(http_request(metrics, "/metrics")[1], "produce_proxy_buffered_bytes") or 0
    print(f"hog: {sent[0]} records sent, the budget holds {held / MIB:.1f} MiB", flush=True)
    test.assertGreaterEqual(held, FULL, "the stalled client filled the budget")
    return thread


class FairShare(unittest.TestCase):

    def test_a_stalled_client_does_not_starve_another(self):
        cluster, proxy, client, metrics = stalled_cluster_and_proxy(["producer.delivery_timeout_ms=300000"])
        stop = threading.Event()
        hog_thread = None
        try:
            self.assertTrue(proxy.wait_ready(), proxy.text()[-3000:])
            pid = proxy.proc.pid
            peak_known = reset_peak_rss(pid)
            rss_before = status_kib(pid, "VmRSS")
            hog_thread = fill_budget(self, cluster, client, metrics, stop)

            latencies = probe(client, PROBE_RECORDS)
            acked = [x for x in latencies if x is not None]
            rss_growth_kib = (status_kib(pid, "VmHWM") if peak_known else status_kib(pid, "VmRSS")) - rss_before
            status, body = http_request(metrics, "/metrics")
            pauses = metric_value(body, "produce_proxy_client_share_pauses_total")
            summary = (f"second client: {len(acked)}/{PROBE_RECORDS} acked"
                       + (f", median {statistics.median(acked) * 1000:.1f} ms, max {max(acked) * 1000:.1f} ms"
                          if acked else "")
                       + f"; budget {metric_value(body, 'produce_proxy_buffered_bytes') / MIB:.1f} MiB"
                       + f"; peak VmRSS +{rss_growth_kib / 1024:.1f} MiB; share pauses {pauses}")
            print(summary, flush=True)
            self.assertEqual(len(acked), PROBE_RECORDS, summary)
            self.assertLess(max(acked), ACK_TIMEOUT_S, summary)
            self.assertIsNotNone(pauses, "client_share_pauses_total is exported")
            if not is_asan_build(ARGS.proxy):
                self.assertLess(rss_growth_kib, (BUDGET * 9 // 8 // MIB + RSS_SLACK_MIB) * 1024, "peak VmRSS growth")
            self.assertTrue(proxy.alive(), proxy.text()[-3000:])
        finally:
            stop.set()
            if hog_thread:
                hog_thread.join(timeout=30)
            proxy.stop(10)
            cluster.stop()


if __name__ == "__main__":
    daemon_support.run_tests(sys.modules[__name__], "--cluster")
