#!/usr/bin/env python3
"""What a request decodes to fits in the room the budget has left (issue 14,
docs/design/ARCHITECTURE.md rule 5).

The shipped binary with the example config, the test cluster upstream (one
broker; partition stalled-0 answers every Produce NOT_ENOUGH_REPLICAS, so
the proxy keeps its records until producer.delivery_timeout_ms) and a
16 MiB budget. A librdkafka client fills the budget on stalled-0. Then a
second client sends one Produce of a few KiB: a gzip batch whose one record
carries HEADERS empty headers, about 8 MiB once decoded (under the
per-request cap of 32 MiB, so it is a legal request). The code before
decoded it at once, over the full budget: the budget then held 16 + 8 MiB.
Now it is parked (requests_parked_total) while the budget holds no room for
it, and the budget stays within its fair-share headroom. Once the stalled
records time out and the budget drains, the parked request is decoded and
acknowledged without error. The release build's peak VmRSS growth while
the request waits stays under RSS_BOUND_KIB.

usage: decode_room_test.py --proxy BINARY --cluster TEST_CLUSTER [unittest args]
"""
import argparse
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile_wire as wire  # noqa: E402
from daemon_support import (Proxy, TestCluster, free_port, http_request, is_asan_build,  # noqa: E402
                            metric_value, reset_peak_rss, status_kib)
from fair_share_test import hog  # noqa: E402

ARGS = None
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE_CONFIG = os.path.join(REPO, "config", "produce-proxy.example.toml")
MIB = 1024 * 1024
BUDGET = 16 * MIB
# Full for the hog: no room for another of its frames (listener.max_request_bytes
# is 1 MiB here), as frames are admitted only if they fit whole.
FULL = BUDGET - MIB
HEADERS = 200_000  # 40 bytes of memory each once decoded, 2 on the wire before gzip
DELIVERY_TIMEOUT_MS = 10000
FILL_TIMEOUT_S = 30
PARKED_OBSERVED_S = 1.0
RSS_BOUND_KIB = 5 * 1024


def metrics_of(port):
    _, body = http_request(port, "/metrics")
    return body


class DecodeRoom(unittest.TestCase):

    def test_a_request_decoding_past_the_room_waits_for_it(self):
        cluster = TestCluster(ARGS.cluster, "--brokers", "1", "--topic", "stalled:1:5", "--topic", "healthy:1:5")
        client, metrics = free_port(), free_port()
        sets = [f'upstream.bootstrap_servers=["{cluster.bootstrap}"]', f'listener.address="127.0.0.1:{client}"',
                f'metrics.address="127.0.0.1:{metrics}"', f"producer.buffer_memory_bytes={BUDGET}",
                f"listener.max_request_bytes={MIB}", f"producer.delivery_timeout_ms={DELIVERY_TIMEOUT_MS}",
                "upstream.request_timeout_ms=5000"]
        proxy = Proxy(ARGS.proxy, config_path=EXAMPLE_CONFIG, sets=sets)
        stop = threading.Event()
        hog_thread = None
        sock = None
        try:
            self.assertTrue(proxy.wait_ready(), proxy.text()[-3000:])
            self.assertEqual(cluster.command("error stalled 0 NOT_ENOUGH_REPLICAS 100000000"), "ok")
            sent = [0]
            hog_thread = threading.Thread(target=hog, args=(client, stop, sent), daemon=True)
            hog_thread.start()
            held = 0
            deadline = time.monotonic() + FILL_TIMEOUT_S
            while time.monotonic() < deadline and held < FULL:
                time.sleep(0.2)
                held = metric_value(metrics_of(metrics), "produce_proxy_buffered_bytes") or 0
            self.assertGreaterEqual(held, FULL, "the stalled client filled the budget")

            pid = proxy.proc.pid
            peak_known = reset_peak_rss(pid)
            rss_before = status_kib(pid, "VmRSS")
            _, gzipped = wire.hostile_batches(HEADERS)
            sock = wire.connect(client, timeout=DELIVERY_TIMEOUT_MS / 1000 + 30)
            sock.sendall(wire.produce_v7(11, b"healthy", gzipped))
            parked, most_held = None, 0
            observe_until = time.monotonic() + PARKED_OBSERVED_S
            while time.monotonic() < observe_until:
                body = metrics_of(metrics)
                parked = metric_value(body, "produce_proxy_requests_parked_total")
                most_held = max(most_held, metric_value(body, "produce_proxy_buffered_bytes") or 0)
                time.sleep(0.05)
            rss_growth_kib = (status_kib(pid, "VmHWM") if peak_known else status_kib(pid, "VmRSS")) - rss_before
            summary = (f"{len(gzipped)}-byte batch of {HEADERS} headers; while the budget was full: "
                       f"budget held at most {most_held / MIB:.1f} MiB, peak VmRSS +{rss_growth_kib / 1024:.1f} MiB, "
                       f"requests_parked_total {parked}")
            print(summary, flush=True)
            self.assertIsNotNone(parked, "requests_parked_total is exported")
            self.assertGreaterEqual(parked, 1, summary)
            self.assertLessEqual(most_held, BUDGET * 9 // 8 + MIB, "decoded only into room: " + summary)
            if not is_asan_build(ARGS.proxy):
                # Decoded at once, the request adds about 8 MiB (+8.7 MiB
                # measured on the code before); parked, 1.3-1.7 MiB.
                self.assertLess(rss_growth_kib, RSS_BOUND_KIB, "peak VmRSS growth, KiB: " + summary)

            stop.set()
            hog_thread.join(timeout=30)
            answer = wire.read_frame(sock)
            self.assertIsNotNone(answer, "the parked request is answered once the stalled records time out")
            self.assertEqual(wire.produce_error_code(answer), 0, "and its record is delivered")
            self.assertTrue(proxy.alive(), proxy.text()[-3000:])
        finally:
            stop.set()
            if hog_thread:
                hog_thread.join(timeout=30)
            if sock:
                sock.close()
            proxy.stop(10)
            cluster.stop()


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore", ResourceWarning)
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy", required=True)
    parser.add_argument("--cluster", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest)
