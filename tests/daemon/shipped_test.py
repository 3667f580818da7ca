#!/usr/bin/env python3
"""The product as it ships (issue 11): the built produce-proxy binary (run for
the release and the ASan build), the example config, the embedded upstream,
driven as the README tells a user to and as Prometheus and Kubernetes do.

- The binary carries no large static TLS: glibc takes the static TLS block out
  of every thread's stack, and civetweb's HTTP workers get a fixed 100 KiB one.
- The release binary runs on jemalloc, configured to keep freed memory.
- kcat Produce v0, v1 and the default in; /metrics, /healthz, /readyz (GET and
  HEAD) answered 200, 1,000 times while a producer runs; every record counted
  in records_delivered_total and present once upstream; SIGTERM exits 0.
- Stalled HTTP peers (half a request line, then nothing) do not make /healthz
  miss a 1 s deadline.
- The helm chart's probes, as `helm template` renders them, against the binary
  started with the chart's own config.

usage: shipped_test.py --proxy BINARY [--helm HELM --chart DIR] [unittest args]
"""
import argparse
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_support import (Proxy, free_port, http_request, is_asan_build, kcat_consume, kcat_produce,  # noqa: E402
                            scrape, wait_metric)

ARGS = None
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE_CONFIG = os.path.join(REPO, "config", "produce-proxy.example.toml")
DELIVERED = "produce_proxy_records_delivered_total"
# civetweb's workers have a fixed 100 KiB stack, and glibc takes the whole
# static TLS block (the executable's and every initially loaded library's) out
# of it. Debian's librdkafka alone has 15 KiB; the executable's 64 KiB read
# buffer on top of that was what crashed every scrape.
MAX_EXECUTABLE_TLS = 4096
MAX_PROCESS_TLS = 24 * 1024
HEALTHZ_DEADLINE_S = 1.0
CHART_PROBE_TIMEOUT_S = 2.0  # helm/produce-proxy/values.yaml, timeoutSeconds


def tls_segment_bytes(path):
    """p_memsz of the PT_TLS program header of an ELF64 file (0 if none)."""
    with open(path, "rb") as f:
        ident = f.read(64)
        if ident[:4] != b"\x7fELF" or ident[4] != 2:
            raise AssertionError(f"{path}: not an ELF64 file")
        endian = "<" if ident[5] == 1 else ">"
        phoff, = struct.unpack_from(endian + "Q", ident, 32)
        phentsize, phnum = struct.unpack_from(endian + "HH", ident, 54)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    for i in range(phnum):
        p_type, = struct.unpack_from(endian + "I", table, i * phentsize)
        if p_type == 7:  # PT_TLS
            return struct.unpack_from(endian + "Q", table, i * phentsize + 40)[0]
    return 0


def linked_libraries(binary):
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, timeout=30)
    libs = []
    for line in out.stdout.splitlines():
        parts = line.split("=>")
        path = (parts[1] if len(parts) > 1 else parts[0]).strip().split(" ")[0]
        if path.startswith("/"):
            libs.append(path)
    return libs


def demo_sets(client_port, metrics_port):
    """The README's demo (scripts/run.sh) on free ports instead of 9092/9464."""
    return ['upstream.bootstrap_servers=["embedded"]', f'listener.address="127.0.0.1:{client_port}"',
            f'metrics.address="127.0.0.1:{metrics_port}"']


def legacy_producer(port, topic, count, acked, stop):
    """confluent-kafka (librdkafka) in legacy mode, Produce v1, acks=all: a
    record counts once its delivery report says so."""
    from confluent_kafka import Producer  # Debian's python3-confluent-kafka

    producer = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "api.version.request": False,
                         "broker.version.fallback": "0.9.0.1", "acks": "all", "linger.ms": 5,
                         "message.timeout.ms": 60000})

    def on_delivery(err, msg):
        if err is None:
            acked.append(msg.value())

    for i in range(count):
        if stop.is_set():
            break
        while True:
            try:
                producer.produce(topic, f"bg-{i:06d}".encode(), on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.05)
        producer.poll(0)
        if i % 200 == 199:
            time.sleep(0.02)  # a steady stream for the whole scrape loop, not one burst
    producer.flush(60)


class StalledPeers:
    """HTTP connections that send half a request line and then nothing, as a
    slow or hostile scraper does."""

    def __init__(self, port, count):
        self.socks = []
        for _ in range(count):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET /metr")
            self.socks.append(s)

    def closed_by_server(self):
        """How many the server has closed (civetweb answers 400 first)."""
        closed = 0
        for s in self.socks:
            s.settimeout(0.5)
            try:
                while s.recv(4096):
                    pass
                closed += 1
            except socket.timeout:
                pass
            except OSError:
                closed += 1
        return closed

    def close(self):
        for s in self.socks:
            s.close()


class ShippedBinary(unittest.TestCase):
    def test_no_large_static_tls(self):
        own = tls_segment_bytes(ARGS.proxy)
        self.assertLessEqual(own, MAX_EXECUTABLE_TLS,
                             f"{ARGS.proxy} has a {own}-byte PT_TLS segment: every thread, civetweb's 100 KiB "
                             "workers included, loses that much stack (use the heap)")
        total = own + sum(tls_segment_bytes(lib) for lib in linked_libraries(ARGS.proxy))
        print(f"static TLS: executable {own} bytes, with its libraries {total} bytes")
        if not is_asan_build(ARGS.proxy):
            self.assertLessEqual(total, MAX_PROCESS_TLS)

    def test_readme_walk_with_scrapes_and_probes_under_load(self):
        client, metrics = free_port(), free_port()
        proxy = Proxy(ARGS.proxy, config_path=EXAMPLE_CONFIG, sets=demo_sets(client, metrics))
        stop = threading.Event()
        try:
            self.assertTrue(proxy.wait_ready(), proxy.text()[-3000:])
            if not is_asan_build(ARGS.proxy):
                # The release daemon's allocator, configured to keep freed
                # memory (daemon/allocator_tuning.cc).
                self.assertIn("allocator: jemalloc", proxy.text())
                self.assertIn("freed memory is kept for reuse", proxy.text())
            # The README's demo line, and the other legacy shapes kcat has.
            shapes = {"v0": ["-X", "api.version.request=false", "-X", "broker.version.fallback=0.8.2.2"],
                      "v1": ["-X", "api.version.request=false", "-X", "broker.version.fallback=0.9.0.1"],
                      "default": []}
            sent = []
            for name, flags in shapes.items():
                lines = [f"{name}-k{i}:{name}-value-{i}" for i in range(50)]
                out = kcat_produce(client, "demo", lines, "-K:", *flags)
                self.assertEqual(out.returncode, 0, f"kcat {name}: {out.stderr}")
                sent += [tuple(l.split(":", 1)) for l in lines]
            self.assertEqual(wait_metric(metrics, DELIVERED, len(sent)), len(sent))

            rss_before = proxy.rss_kib()
            acked = []
            producer = threading.Thread(target=legacy_producer, args=(client, "background", 20000, acked, stop))
            producer.start()
            requests = [("/metrics", "GET"), ("/healthz", "GET"), ("/readyz", "GET"), ("/metrics", "HEAD"),
                        ("/healthz", "HEAD"), ("/readyz", "HEAD")]
            answered = 0
            for i in range(1000):
                path, method = requests[i % len(requests)]
                status, body = http_request(metrics, path, method)
                self.assertEqual(status, 200, f"{method} {path} #{i}: {status} {body[:200]}")
                if method == "HEAD":
                    self.assertEqual(body, "", f"HEAD {path} sent a body")
                answered += 1
            self.assertTrue(proxy.alive(), proxy.text()[-3000:])
            producer.join(timeout=120)
            self.assertFalse(producer.is_alive(), "the background producer did not finish")
            self.assertEqual(len(acked), 20000, "the background producer's records were not all acknowledged")
            total = len(sent) + len(acked)
            self.assertEqual(wait_metric(metrics, DELIVERED, total), total)
            rss_after = proxy.rss_kib()
            print(f"{answered} HTTP requests answered 200 while 20,000 records went through; "
                  f"RSS {rss_before} KiB before, {rss_after} KiB after")
            if not is_asan_build(ARGS.proxy):
                self.assertLess(rss_after - rss_before, 64 * 1024, "RSS grew by more than 64 MiB")

            upstream = kcat_consume(proxy.embedded_bootstrap(), "demo")
            self.assertEqual(sorted(upstream), sorted(sent), "the demo records upstream, each once")
            self.assertEqual(proxy.stop(timeout=60), 0, proxy.text()[-3000:])
            self.assertIn("drained: every accepted record was delivered", proxy.text())
        finally:
            stop.set()
            proxy.stop(5)

    def probe_beside_stalled_peers(self, count, probe_until, probe_timeout_s):
        """Times /healthz probes while `count` stalled peers hold workers, until
        probe_until() is false; returns the slowest answer (s) and the peers."""
        client, metrics = free_port(), free_port()
        proxy = Proxy(ARGS.proxy, config_path=EXAMPLE_CONFIG, sets=demo_sets(client, metrics))
        peers = None
        try:
            self.assertTrue(proxy.wait_ready(), proxy.text()[-3000:])
            peers = StalledPeers(metrics, count)
            worst = 0.0
            while probe_until():
                start = time.monotonic()
                status, _ = http_request(metrics, "/healthz", timeout=probe_timeout_s)
                worst = max(worst, time.monotonic() - start)
                self.assertEqual(status, 200)
                time.sleep(0.2)
            self.assertEqual(scrape(metrics, "produce_proxy_build_info"), 1)
            closed = peers.closed_by_server()
            print(f"/healthz beside {count} stalled peers: slowest answer {worst * 1000:.0f} ms")
            self.assertTrue(proxy.alive())
            self.assertEqual(proxy.stop(timeout=30), 0, proxy.text()[-3000:])
            return worst, closed
        finally:
            if peers:
                peers.close()
            proxy.stop(5)

    def test_stalled_http_peers_do_not_starve_probes(self):
        # docs/design/INTERFACES.md: 16 workers, so 15 stalled peers leave one for the probe.
        deadline = time.time() + 3  # past the 1 s request timeout, when the peers are dropped
        _, closed = self.probe_beside_stalled_peers(15, lambda: time.time() < deadline, HEALTHZ_DEADLINE_S)
        self.assertEqual(closed, 15, "stalled peers must be dropped after the request timeout")

    def test_more_stalled_peers_than_workers_delay_a_probe_less_than_its_timeout(self):
        # 24 > the 16 workers: the probe queues behind them until the request
        # timeout (1 s) drops them, inside the chart's 2 s.
        probes = iter(range(4))
        worst, _ = self.probe_beside_stalled_peers(24, lambda: next(probes, None) is not None, CHART_PROBE_TIMEOUT_S)
        self.assertLess(worst, CHART_PROBE_TIMEOUT_S)

    def test_helm_chart_probes_against_the_binary(self):
        if not ARGS.helm or not os.access(ARGS.helm, os.X_OK):
            self.skipTest("helm is not installed (scripts/setup.sh installs it)")
        import yaml  # Debian's python3-yaml
        rendered = subprocess.run([ARGS.helm, "template", "t", ARGS.chart], capture_output=True, text=True,
                                  timeout=60, check=True).stdout
        docs = [d for d in yaml.safe_load_all(rendered) if d]
        config_text = next(d for d in docs if d["kind"] == "ConfigMap")["data"]["produce-proxy.toml"]
        pod = next(d for d in docs if d["kind"] == "Deployment")["spec"]["template"]["spec"]
        container = next(c for c in pod.get("initContainers", []) + pod["containers"] if c["name"] == "produce-proxy")
        named_ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
        probes = {k: container[k] for k in ("startupProbe", "readinessProbe", "livenessProbe")}
        self.assertEqual(len(probes), 3)

        client, metrics = free_port(), free_port()
        chart_metrics_port = None
        for name, probe in probes.items():
            port = probe["httpGet"]["port"]
            port = named_ports.get(port, port)
            chart_metrics_port = chart_metrics_port or port
            self.assertEqual(port, chart_metrics_port, f"{name} probes another port")
        self.assertIn(f':{chart_metrics_port}"', config_text, "the probes' port is the config's metrics port")
        # The chart's config as rendered; only what a test may not use changes:
        # loopback instead of 0.0.0.0, free ports, the embedded upstream.
        proxy = Proxy(ARGS.proxy, config_text=config_text, sets=demo_sets(client, metrics))
        stop = threading.Event()
        peers = None
        try:
            startup = probes["startupProbe"]
            budget = startup.get("periodSeconds", 10) * startup.get("failureThreshold", 3)
            started = self.kubelet_until_success(metrics, startup, budget)
            self.assertTrue(started, f"startupProbe never succeeded in {budget} s: {proxy.text()[-2000:]}")
            acked = []
            producer = threading.Thread(target=legacy_producer, args=(client, "helm", 5000, acked, stop))
            producer.start()
            peers = StalledPeers(metrics, 2)
            for name in ("readinessProbe", "livenessProbe"):
                probe = probes[name]
                for _ in range(3):
                    ok, status, took = self.kubelet_probe(metrics, probe)
                    self.assertTrue(ok, f"{name} {probe['httpGet']['path']}: {status} after {took:.2f} s")
                    time.sleep(min(probe.get("periodSeconds", 10), 1))
            producer.join(timeout=120)
            self.assertEqual(len(acked), 5000)
            # SIGTERM: readiness goes false while draining, the process exits 0
            # well inside the grace period the chart gives.
            proxy.proc.send_signal(signal.SIGTERM)
            grace = pod.get("terminationGracePeriodSeconds", 30)
            self.assertEqual(proxy.proc.wait(timeout=grace), 0, proxy.text()[-2000:])
        finally:
            stop.set()
            if peers:
                peers.close()
            proxy.stop(5)

    @staticmethod
    def kubelet_probe(port, probe):
        """One probe as the kubelet makes it: success is 200-399 within timeoutSeconds."""
        timeout = probe.get("timeoutSeconds", 1)
        start = time.monotonic()
        try:
            status, _ = http_request(port, probe["httpGet"]["path"], timeout=timeout)
        except OSError as e:
            return False, repr(e), time.monotonic() - start
        took = time.monotonic() - start
        return 200 <= status < 400 and took <= timeout, status, took

    def kubelet_until_success(self, port, probe, budget_s):
        deadline = time.time() + budget_s
        while time.time() < deadline:
            if self.kubelet_probe(port, probe)[0]:
                return True
            time.sleep(min(probe.get("periodSeconds", 10), 0.5))
        return False


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore", ResourceWarning)
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy", required=True)
    parser.add_argument("--helm", default="")
    parser.add_argument("--chart", default=os.path.join(REPO, "helm", "produce-proxy"))
    ARGS, rest = parser.parse_known_args()
    if not os.access(ARGS.proxy, os.X_OK):
        sys.exit(f"FAIL: {ARGS.proxy} is not an executable (build it: cmake --build --preset release)")
    unittest.main(argv=[sys.argv[0], "-v", *rest])
