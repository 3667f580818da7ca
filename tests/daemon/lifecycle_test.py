#!/usr/bin/env python3
"""The daemon as an operator runs it (issue 6): the built binary under a user's
configuration, against the test-cluster binary, with real signals.

- SIGTERM while ~100,000 records are buffered against a slowed upstream: every
  record kcat saw acknowledged is in the upstream log, and the exit code tells
  the truth (0 drained, 1 records lost to the deadline).
- sd_notify: READY=1, WATCHDOG=1 and STOPPING=1 reach NOTIFY_SOCKET.
- Bad configurations exit 2 with FILE:LINE:COLUMN messages.
- SIGHUP: each key logged as applied takes effect (the idle and request
  timeouts, the codec of the next batch, the delivery timeout).

Every process is bounded in time and killed at the end; all on 127.0.0.1.
"""
import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_support import Proxy, TestCluster, free_port, http_request, scrape  # noqa: E402

ARGS = None


def Cluster(*extra):
    """Two brokers of the test-cluster binary."""
    return TestCluster(ARGS.cluster, "--brokers", "2", *extra)


def config(bootstrap, client_port, metrics_port, drain_ms=30000, extra=""):
    return f"""
[listener]
address = "127.0.0.1:{client_port}"
[upstream]
bootstrap_servers = [{", ".join('"%s"' % b for b in bootstrap.split(","))}]
request_timeout_ms = 10000
[producer]
linger_ms = 5
delivery_timeout_ms = 60000
{extra or "batch_bytes = 65536"}
[metrics]
address = "127.0.0.1:{metrics_port}"
[shutdown]
drain_timeout_ms = {drain_ms}
"""


def consume(bootstrap, topic):
    out = subprocess.run(["timeout", "60", "kcat", "-C", "-q", "-b", bootstrap, "-t", topic, "-o", "beginning", "-e",
                          "-f", "%s\n"], capture_output=True, text=True)
    return out.stdout.split()


def produce_fast_legacy(client_port, topic, values, acked):
    """confluent-kafka (librdkafka) in legacy mode (Produce v1, magic 0): fast
    enough to put 100,000 records into the proxy before the upstream drains
    them. Delivery callbacks name each acknowledged value."""
    from confluent_kafka import Producer  # Debian's python3-confluent-kafka

    producer = Producer({"bootstrap.servers": f"127.0.0.1:{client_port}", "api.version.request": False,
                         "broker.version.fallback": "0.9.0.1", "acks": "all", "linger.ms": 20,
                         "queue.buffering.max.messages": 200000, "message.timeout.ms": 60000})

    def on_delivery(err, msg):
        if err is None:
            acked.append(msg.value().decode())

    for v in values:
        producer.produce(topic, v.encode(), on_delivery=on_delivery)
        producer.poll(0)
    producer.flush(60)


def produce_legacy(client_port, topic, values, acked, stop_event):
    """kafka-python in legacy mode (Produce v2, magic 1), acks=all: a value
    counts as acknowledged only when its future succeeds."""
    from kafka import KafkaProducer  # Debian's python3-kafka

    producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{client_port}", api_version=(0, 10), acks="all",
                             linger_ms=20, retries=0, max_block_ms=10000, request_timeout_ms=60000,
                             buffer_memory=256 * 1024 * 1024)
    try:
        for v in values:
            if stop_event.is_set():
                break
            future = producer.send(topic, v.encode())
            future.add_callback(lambda _meta, v=v: acked.append(v))
        producer.flush(timeout=90)
    except Exception:
        pass  # the proxy going away mid-stream is the point of the test
    finally:
        producer.close(timeout=5)


class Lifecycle(unittest.TestCase):
    def test_sigterm_with_buffered_records_delivers_every_acknowledged_record(self):
        cluster = Cluster("--topic", "drain:4:20", "--rtt-ms", "400")
        client, metrics = free_port(), free_port()
        proxy = Proxy(ARGS.proxy, config(cluster.bootstrap, client, metrics, extra="batch_bytes = 8192"))
        try:
            self.assertTrue(proxy.wait_ready(), proxy.text())
            values = [f"v{i:06d}" for i in range(100000)]
            acked = []
            t = threading.Thread(target=produce_fast_legacy, args=(client, "drain", values, acked))
            t.start()
            # SIGTERM while the proxy holds records buffered against the slow
            # upstream, as its own /metrics reports them: the client has
            # handed them over and few are acked.
            deadline = time.time() + 30
            scraped = 0
            while time.time() < deadline and t.is_alive() and (len(acked) < 2000 or scraped < 10 * 1024):
                scraped = scrape(metrics, "produce_proxy_buffered_bytes") or 0
                time.sleep(0.02)
            self.assertGreater(scraped, 0, "/metrics never showed buffered bytes")
            code = proxy.stop(timeout=90)
            t.join(timeout=120)
            log = proxy.text()
            self.assertIn("draining", log)
            logged = consume(cluster.bootstrap, "drain")
            missing = set(acked) - set(logged)
            self.assertFalse(missing, f"{len(missing)} acknowledged records are not upstream")
            self.assertEqual(len(logged), len(set(logged)), "duplicates upstream")
            if code == 0:
                self.assertIn("drained: every accepted record was delivered", log)
            else:
                self.assertEqual(code, 1, log[-2000:])
                self.assertIn("were not delivered", log)
            self.assertGreater(len(acked), 0)
            buffered = int(re.search(r"draining: (\d+) bytes buffered", log).group(1))
            self.assertGreater(buffered, 0, "nothing was buffered when SIGTERM came")
            print(f"drain: {buffered} bytes buffered at SIGTERM, "
                  f"{len(acked)} acknowledged to the client, {len(logged)} upstream, exit {code}")
        finally:
            proxy.stop(5)
            cluster.stop()

    def test_drain_deadline_is_reported_with_exit_code_one(self):
        cluster = Cluster("--topic", "stuck:1:5")
        client, metrics = free_port(), free_port()
        proxy = Proxy(ARGS.proxy, config(cluster.bootstrap, client, metrics, drain_ms=1000))
        try:
            self.assertTrue(proxy.wait_ready(), proxy.text())
            from kafka import KafkaProducer
            producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{client}", api_version=(0, 10), acks="all",
                                     retries=0, max_block_ms=10000, request_timeout_ms=60000)
            producer.send("stuck", b"warm").get(timeout=20)  # the topic is known from here on
            # The upstream stops answering: records stay buffered past the deadline.
            self.assertEqual(cluster.command("rtt 60000"), "ok")
            for i in range(100):
                producer.send("stuck", f"late{i}".encode())
            try:
                producer.flush(timeout=2)  # hands them to the proxy; no answer can come in time
            except Exception:
                pass
            code = proxy.stop(timeout=30)
            producer.close(timeout=1)
            self.assertEqual(code, 1, proxy.text()[-2000:])
            self.assertIn("were not delivered", proxy.text())
            self.assertGreater(int(re.search(r"draining: (\d+) bytes buffered", proxy.text()).group(1)), 0)
        finally:
            proxy.stop(5)
            cluster.stop()

    def test_fatal_producer_fails_readiness_and_exits_one(self):
        cluster = Cluster("--topic", "denied:1:5")
        client, metrics = free_port(), free_port()
        proxy = Proxy(ARGS.proxy, config(cluster.bootstrap, client, metrics))
        try:
            self.assertTrue(proxy.wait_ready(), proxy.text())
            self.assertEqual(http_request(metrics, "/readyz")[0], 200)
            from kafka import KafkaProducer
            producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{client}", api_version=(0, 10), acks="all",
                                     retries=0, max_block_ms=10000, request_timeout_ms=30000)
            producer.send("denied", b"warm").get(timeout=20)
            # The cluster revokes the proxy's rights: fatal for an idempotent producer.
            self.assertEqual(cluster.command("error denied 0 CLUSTER_AUTHORIZATION_FAILED 1"), "ok")
            with self.assertRaises(Exception):
                producer.send("denied", b"refused").get(timeout=20)
            producer.close(timeout=1)

            def readyz():
                try:
                    return http_request(metrics, "/readyz", timeout=1)[0]
                except OSError:
                    return None  # gone: a failing probe as well
            deadline = time.time() + 5
            while time.time() < deadline and readyz() == 200:
                time.sleep(0.05)
            self.assertNotEqual(readyz(), 200, "a fatal producer must fail /readyz")
            code = proxy.proc.wait(timeout=30)  # exits by itself, no signal
            self.assertEqual(code, 1, proxy.text()[-2000:])
            self.assertIn("the upstream producer is fatal (CLUSTER_AUTHORIZATION_FAILED)", proxy.text())
            self.assertIn("drained: the producer is fatal", proxy.text())
        finally:
            proxy.stop(5)
            cluster.stop()

    def start_for_reload(self, topic, client_request_timeout_ms):
        """A proxy in front of a test cluster with `topic` (NAME:PARTITIONS[...])
        and a kafka-python producer to it; the test's cleanups stop both."""
        cluster = Cluster("--topic", topic)
        self.addCleanup(cluster.stop)
        client, metrics = free_port(), free_port()
        text = config(cluster.bootstrap, client, metrics)
        proxy = Proxy(ARGS.proxy, text)
        self.addCleanup(proxy.stop, 5)
        self.assertTrue(proxy.wait_ready(), proxy.text())
        from kafka import KafkaProducer
        producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{client}", api_version=(0, 10), acks="all",
                                 retries=0, max_block_ms=10000, request_timeout_ms=client_request_timeout_ms)
        return cluster, proxy, text, client, metrics, producer

    @staticmethod
    def reload(proxy, text, last_change):
        """Writes `text` as the proxy's config, sends SIGHUP and waits until
        the log names `last_change` (the reload's last key)."""
        with open(proxy.config, "w") as f:
            f.write(text)
        proxy.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 10
        while time.time() < deadline and last_change not in proxy.text():
            time.sleep(0.05)

    def test_sighup_applies_the_timeouts_it_reports_as_applied(self):
        cluster, proxy, text, client, _metrics, producer = self.start_for_reload("slow:1:5", 60000)
        producer.send("slow", b"warm").get(timeout=20)  # topic metadata known before the broker slows
        idle = socket.create_connection(("127.0.0.1", client), timeout=20)
        reloaded = text.replace('address = "127.0.0.1:%d"' % client,
                                'address = "127.0.0.1:%d"\nidle_timeout_ms = 1000' % client)
        reloaded = reloaded.replace("request_timeout_ms = 10000", "request_timeout_ms = 500")
        self.reload(proxy, reloaded, "upstream.request_timeout_ms = 500")
        self.assertIn("SIGHUP: listener.idle_timeout_ms = 1000 (was 600000), applied", proxy.text())
        self.assertIn("SIGHUP: upstream.request_timeout_ms = 500 (was 10000), applied", proxy.text())
        # The connection opened before the reload is closed by the new idle timeout.
        started = time.time()
        self.assertEqual(idle.recv(1), b"", "an idle client must be closed")
        self.assertLess(time.time() - started, 5)
        # A broker slower than the new request timeout: the proxy's request times out at 500 ms.
        self.assertEqual(cluster.command("rtt 3000"), "ok")
        future = producer.send("slow", b"patient")
        deadline = time.time() + 15
        while time.time() < deadline and "timed out after 500 ms" not in proxy.text():
            time.sleep(0.1)
        self.assertIn("timed out after 500 ms", proxy.text())
        self.assertEqual(cluster.command("rtt 0"), "ok")
        future.get(timeout=50)  # retried upstream under the same sequence: delivered, once
        producer.close(timeout=5)
        self.assertEqual(consume(cluster.bootstrap, "slow").count("patient"), 1)

    def test_sighup_applies_compression_and_the_delivery_timeout(self):
        """The producer keys SIGHUP reports as applied reach the pipeline (issue 14)."""
        cluster, proxy, text, _client, metrics, producer = self.start_for_reload("z:1", 90000)

        def batch_bytes_of_one(value):
            before = scrape(metrics, "produce_proxy_batch_bytes_sum") or 0
            producer.send("z", value).get(timeout=20)
            return scrape(metrics, "produce_proxy_batch_bytes_sum") - before

        value = b"x" * 8192  # lz4 takes it to well under 1 KiB
        plain = batch_bytes_of_one(value)
        self.assertGreater(plain, 8192)
        # delivery_timeout_ms must cover linger_ms + request_timeout_ms.
        reloaded = text.replace("delivery_timeout_ms = 60000",
                                'delivery_timeout_ms = 2000\ncompression = "lz4"')
        reloaded = reloaded.replace("request_timeout_ms = 10000", "request_timeout_ms = 1000")
        self.reload(proxy, reloaded, "producer.delivery_timeout_ms = 2000")
        self.assertIn('SIGHUP: producer.compression = "lz4" (was "none"), applied', proxy.text())
        self.assertIn("SIGHUP: producer.delivery_timeout_ms = 2000 (was 60000), applied", proxy.text())
        compressed = batch_bytes_of_one(value)
        self.assertLess(compressed, 1024, "after SIGHUP the batch is lz4 (plain: %d bytes)" % plain)

        # Both brokers down: the record fails at the new delivery timeout, not the old 60 s.
        for broker in ("1", "2"):
            self.assertEqual(cluster.command("down " + broker), "ok")
        started = time.time()
        future = producer.send("z", b"late")
        with self.assertRaises(Exception):
            future.get(timeout=50)
        failed_after = time.time() - started
        print("  one 8 KiB record's batch: %d bytes plain, %d after SIGHUP to lz4; failed after %.1f s "
              "with delivery_timeout_ms reloaded to 2000" % (plain, compressed, failed_after), file=sys.stderr)
        self.assertLess(failed_after, 20, "the reloaded 2 s delivery timeout did not apply")
        producer.close(timeout=5)

    def test_sd_notify_ready_watchdog_stopping(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "notify")
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            sock.bind(path)
            sock.settimeout(0.2)
            cluster = Cluster("--topic", "n:1")
            proxy = Proxy(ARGS.proxy, config(cluster.bootstrap, free_port(), free_port()),
                          env={"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "400000"})
            seen = []
            try:
                deadline = time.time() + 20
                while time.time() < deadline and not any("WATCHDOG=1" in m for m in seen):
                    try:
                        seen.append(sock.recv(4096).decode())
                    except socket.timeout:
                        pass
                proxy.stop(20)
                deadline = time.time() + 5
                while time.time() < deadline and not any("STOPPING=1" in m for m in seen):
                    try:
                        seen.append(sock.recv(4096).decode())
                    except socket.timeout:
                        pass
            finally:
                proxy.stop(5)
                cluster.stop()
                sock.close()
            self.assertTrue(any(m.startswith("READY=1") for m in seen), seen)
            self.assertTrue(any("WATCHDOG=1" in m for m in seen), seen)
            self.assertTrue(any(m.startswith("STOPPING=1") for m in seen), seen)
            self.assertLess(min(i for i, m in enumerate(seen) if m.startswith("READY=1")),
                            min(i for i, m in enumerate(seen) if m.startswith("STOPPING=1")))

    def test_bad_configs_exit_two_with_locations(self):
        cases = {
            "unknown key": ("[producer]\nlingr_ms = 5\n", r":2:1: .*lingr_ms.*linger_ms"),
            "wrong type": ("[producer]\nlinger_ms = \"five\"\n", r":2:\d+: .*linger_ms"),
            "window cap below 5": ("[producer]\nmax_partition_window = 3\n", r":2:\d+: .*max_partition_window"),
        }
        with tempfile.TemporaryDirectory() as d:
            for name, (text, pattern) in cases.items():
                path = os.path.join(d, "bad.toml")
                with open(path, "w") as f:
                    f.write('[upstream]\nbootstrap_servers = ["k:9092"]\n' + text)
                # The [upstream] lines come first, so the bad key sits on line 4.
                out = subprocess.run([ARGS.proxy, "--check-config", "--config", path], capture_output=True, text=True,
                                     timeout=20)
                self.assertEqual(out.returncode, 2, name)
                self.assertRegex(out.stderr, path.replace(".", r"\.") + pattern.replace(":2:", ":4:"), name)
            out = subprocess.run([ARGS.proxy, "--check-config", "--config", os.path.join(d, "missing.toml")],
                                 capture_output=True, text=True, timeout=20)
            self.assertEqual(out.returncode, 2)
            self.assertIn("missing.toml", out.stderr)


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore", ResourceWarning)
    warnings.simplefilter("ignore", ImportWarning)
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy", required=True)
    parser.add_argument("--cluster", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], "-v", *rest])
