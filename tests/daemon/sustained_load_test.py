#!/usr/bin/env python3
"""A client at full speed keeps the budget full, and the proxy keeps going
(issue 14: admission under back-pressure; issue 17: the benchmarks' shape).

The shipped binary with the example config, a 4 MiB budget and 1 MiB
frames, in front of the 3-broker test cluster. A librdkafka producer
(tests/bench's bench_rdkafka_producer: 1 KiB records, 16 partitions,
acks=all, as fast as its queue allows) sends for SECONDS, once with Produce
v7 and once as a legacy client (no ApiVersions, broker version 0.9.0.1:
Produce v1, magic-0 MessageSets). Reads stop and resume mid-frame many
times, with frames read during a stop waiting for admission beside frames
admitted before it.

It fails on two bugs this test found:
- The front end lost count of which ready frames were admitted (a frame
  finished after an unadmitted one was counted in its place), and the
  connection stopped reading for good with the budget empty: the client's
  requests timed out after 60 s. Here the client fails a request after
  REQUEST_TIMEOUT_MS (retries off), so a stall fails the test, and so does
  a duplicate (each record is delivered once, counted by the proxy), a lost
  record, or a charge left in the budget.
- A request frame stays pinned beside the upstream batch its records are
  copied into, but only the frame had been admitted: the budget's ledger
  reached 6.4 MiB of 4. It must stay within ARCHITECTURE.md rule 5's bound
  for a lone client, the budget plus one read.

usage: sustained_load_test.py --proxy BINARY --cluster TEST_CLUSTER --client BENCH_RDKAFKA_PRODUCER
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_support import Proxy, TestCluster, free_port, http_request, metric_value  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
EXAMPLE_CONFIG = os.path.join(ROOT, "config", "produce-proxy.example.toml")
MIB = 1024 * 1024
BUDGET = 4 * MIB
SECONDS = 4
REQUEST_TIMEOUT_MS = 10000
CLIENT_DEADLINE_S = SECONDS + 60
SETTLE_S = 15
SAMPLE_S = 0.05
READ_BYTES = 64 * 1024  # one socket read, taken before its frame is admitted


def metrics_of(port):
    status, body = http_request(port, "/metrics")
    if status != 200:
        raise AssertionError(f"GET /metrics answered {status}")
    return body


class SustainedLoad(unittest.TestCase):

    def setUp(self):
        self.cluster = TestCluster(ARGS.cluster, "--brokers", "3", "--topic", "p:16", "--seed", "1")
        self.client, self.metrics = free_port(), free_port()
        servers = ", ".join(f'"{b}"' for b in self.cluster.bootstrap.split(","))
        sets = [f"upstream.bootstrap_servers=[{servers}]",
                f'listener.address="127.0.0.1:{self.client}"', f'metrics.address="127.0.0.1:{self.metrics}"',
                f"producer.buffer_memory_bytes={BUDGET}", f"listener.max_request_bytes={MIB}"]
        self.proxy = Proxy(ARGS.proxy, config_path=EXAMPLE_CONFIG, sets=sets)
        self.assertTrue(self.proxy.wait_ready(), self.proxy.text()[-3000:])

    def tearDown(self):
        self.proxy.stop()
        self.cluster.stop()

    def sample_budget(self, stop, peak):
        """The most the budget held, scraped every SAMPLE_S while the client runs."""
        while not stop.wait(SAMPLE_S):
            try:
                peak[0] = max(peak[0], metric_value(metrics_of(self.metrics), "produce_proxy_memory_used_bytes") or 0)
            except OSError:
                pass

    def run_client(self, *mode):
        args = [ARGS.client, "--bootstrap", f"127.0.0.1:{self.client}", "--topic", "p", "--acks", "all",
                "--count", "10000000", "--duration-s", str(SECONDS), "--flush-timeout-ms", "30000",
                "--rdkafka", f"retries=0,request.timeout.ms={REQUEST_TIMEOUT_MS}", *mode]
        out = subprocess.run(args, capture_output=True, text=True, timeout=CLIENT_DEADLINE_S)
        self.assertEqual(out.returncode, 0, out.stderr[-2000:])
        report = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"client {' '.join(mode) or 'v7'}: {report['records']} records, {report['records_per_s']:.0f}/s, "
              f"p99 {report['p99_ms']:.0f} ms, failed {report['failed']}, unsent {report['unsent']}", flush=True)
        return report, out.stderr

    def assert_every_record_once(self, report, stderr, delivered_before):
        self.assertGreater(report["records"], 0, stderr[-2000:])
        self.assertEqual(report["failed"], 0, "no request timed out or failed: " + stderr[-2000:])
        self.assertEqual(report["unsent"], 0, stderr[-2000:])
        self.assertEqual(report["sent"], report["records"], stderr[-2000:])
        delivered = metric_value(metrics_of(self.metrics), "produce_proxy_records_delivered_total")
        self.assertEqual(delivered - delivered_before, report["records"], "each record delivered once upstream")

    def assert_budget_empties(self):
        held, body = None, ""
        deadline = time.monotonic() + SETTLE_S
        while time.monotonic() < deadline:
            body = metrics_of(self.metrics)
            held = metric_value(body, "produce_proxy_memory_used_bytes")
            if held == 0:
                return
            time.sleep(0.2)
        uses = [line for line in body.splitlines() if line.startswith("produce_proxy_memory_used_bytes")]
        self.fail(f"the budget still holds {held} bytes with no client sending: {uses}")

    def test_a_full_budget_stops_and_restarts_reads_without_a_stall(self):
        for mode in ((), ("--legacy", "1")):
            with self.subTest(client=" ".join(mode) or "v7"):
                before = metrics_of(self.metrics)
                stop, peak = threading.Event(), [0]
                sampler = threading.Thread(target=self.sample_budget, args=(stop, peak), daemon=True)
                sampler.start()
                try:
                    report, stderr = self.run_client(*mode)
                finally:
                    stop.set()
                    sampler.join(timeout=10)
                print(f"the budget held at most {peak[0] / MIB:.1f} MiB of {BUDGET / MIB:.0f}", flush=True)
                self.assert_every_record_once(report, stderr,
                                              metric_value(before, "produce_proxy_records_delivered_total"))
                self.assert_budget_empties()
                # Reads stop once a 1 MiB frame no longer fits: the budget was in play (else this tests nothing).
                self.assertGreaterEqual(peak[0], BUDGET // 2, "the client filled the budget")
                # ARCHITECTURE.md rule 5's bound for a lone client: the budget plus one read.
                self.assertLessEqual(peak[0], BUDGET + READ_BYTES, "the budget held what it admitted, copies included")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy", required=True)
    parser.add_argument("--cluster", required=True)
    parser.add_argument("--client", required=True, help="tests/bench's bench_rdkafka_producer")
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
