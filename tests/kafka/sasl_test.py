#!/usr/bin/env python3
"""The proxy authenticating upstream with SASL against real Apache Kafka 4.4.0.

  /usr/bin/python3 tests/kafka/sasl_test.py --proxy BINARY [unittest args]

One 1-node KRaft cluster with a SASL_PLAINTEXT listener offering PLAIN (JAAS
users), SCRAM-SHA-256 and SCRAM-SHA-512 (users created at format time) and
OAUTHBEARER (Kafka's unsecured validator), and connections.max.reauth.ms =
10 s, so every session is re-authenticated (KIP-368) while the tests run.
The built produce-proxy sits in front of that listener; a legacy client
(Debian's confluent-kafka in 0.9 mode: Produce v1, magic 0, no client
retries) produces through it; the topic is read back with the Java consumer
on the PLAINTEXT listener. Cases:

1. Each mechanism (PLAIN from a password file, SCRAM-SHA-256 from the
   environment, SCRAM-SHA-512 from a file, OAUTHBEARER from a token file and
   from a token command): every acknowledged record exactly once in the log,
   nothing lost.
2. Re-authentication: a 60 s paced stream through SCRAM-SHA-512; zero
   duplicates, zero loss, upstream_reauthentications_total > 0.
3. A wrong password: one log line naming the broker and the reason, the
   auth-failure metric counts it, /readyz stays 503 (the client listener
   opens only once ready), the process keeps retrying; the password is in no
   log line, no metric, no --check-config output. A password rotated to a
   wrong one (SIGHUP) while serving: the next re-authentication fails,
   clients get REQUEST_TIMED_OUT (retriable) for every record, nothing of it
   lands; rotated back, delivery resumes, exactly once.
4. A token file that disappears: the last token keeps re-authenticating
   until it expires; then a clear sasl_token failure.
5. A token command that takes 2 s (run again after SIGHUP, at the next
   re-authentication): ApiVersions round trips to the proxy go on meanwhile,
   none stalled over 100 ms, and the re-authentication then succeeds with
   the command's token.

Every check asserts; every loop is bounded in count and time; every process
started here is stopped here. All servers listen on 127.0.0.1.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "daemon"))

from kafka_cluster import KafkaCluster, api_versions, unsecured_jwt  # noqa: E402
from daemon_support import http_request  # noqa: E402
from proxy_under_test import scrape_all, start_proxy, total, try_scrape, wait_metric  # noqa: E402

ARGS = None
PARTITIONS = 3
PLAIN_PASSWORD = "plain-Secret-4711"
SCRAM_PASSWORD = "scram-Secret-0815"
REAUTH_MS = 10000
SASL = {
    "mechanisms": ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"],
    "plain_users": {"proxy": PLAIN_PASSWORD},
    "scram_users": [("SCRAM-SHA-256", "proxy", SCRAM_PASSWORD), ("SCRAM-SHA-512", "proxy", SCRAM_PASSWORD)],
}


def json_string(text):
    """A TOML basic string (JSON's escaping is a subset TOML accepts)."""
    return json.dumps(text)


def count_lines(path, word):
    with open(path) as f:
        return sum(1 for line in f if line.strip() == word)


def say(fmt, *args):
    print(fmt % args if args else fmt, file=sys.stderr, flush=True)


def proxy_config(bootstrap, client_port, metrics_port, sasl_lines, delivery_timeout_ms=60000):
    servers = ", ".join('"%s"' % b for b in bootstrap.split(","))
    return """
[listener]
address = "127.0.0.1:%d"
[upstream]
bootstrap_servers = [%s]
request_timeout_ms = 10000
[upstream.sasl]
%s
[producer]
delivery_timeout_ms = %d
[metrics]
address = "127.0.0.1:%d"
[log]
level = "info"
""" % (client_port, servers, sasl_lines, delivery_timeout_ms, metrics_port)


def produce(client_port, topic, count, rate=None, max_seconds=90, tag=b"r"):
    """confluent-kafka in 0.9 mode; returns (acked {value: (partition, offset)},
    failed [(value, error)], unflushed). `rate` paces records per second."""
    from confluent_kafka import Producer  # Debian's python3-confluent-kafka
    producer = Producer({
        "bootstrap.servers": "127.0.0.1:%d" % client_port,
        "api.version.request": False, "broker.version.fallback": "0.9.0.1",
        "acks": "all", "linger.ms": 5, "message.send.max.retries": 0,
        "request.timeout.ms": 90000, "message.timeout.ms": 120000,
    })
    acked, failed = {}, []

    def on_delivery(err, msg):
        if err is None:
            acked[msg.value()] = (msg.partition(), msg.offset())
        else:
            failed.append((msg.value(), str(err)))

    start = time.monotonic()
    sent = 0
    while sent < count and time.monotonic() - start < max_seconds:
        if rate is not None and sent >= (time.monotonic() - start) * rate:
            producer.poll(0.01)
            continue
        value = b"%s|%s|%08d" % (topic.encode(), tag, sent)
        try:
            producer.produce(topic, value=value, partition=sent % PARTITIONS, on_delivery=on_delivery)
        except BufferError:
            producer.poll(0.05)
            continue
        sent += 1
        producer.poll(0)
    unflushed = producer.flush(150)
    return sent, acked, failed, unflushed


class SaslTest(unittest.TestCase):
    kafka = None

    @classmethod
    def setUpClass(cls):
        cls.kafka = KafkaCluster(nodes=1, sasl=SASL, broker_config={"connections.max.reauth.ms": REAUTH_MS})
        cls.kafka.start()
        say("kafka up in %.1f s; SASL listener %s", cls.kafka.startup_seconds, cls.kafka.sasl_bootstrap)
        cls.secrets = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        if cls.kafka:
            cls.kafka.stop()
        cls.secrets.cleanup()

    def secret_file(self, name, text):
        path = os.path.join(self.secrets.name, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o600)
        return path

    def start_proxy(self, sasl_lines, env=None, wait_ready=True, delivery_timeout_ms=60000):
        return start_proxy(self, ARGS.proxy, lambda client, metrics: proxy_config(
            self.kafka.sasl_bootstrap, client, metrics, sasl_lines, delivery_timeout_ms), env=env,
            wait_ready=wait_ready)

    def check_exactly_once(self, topic, acked, failed, unflushed, sent):
        records = self.kafka.read_topic(topic, timeout=60)
        seen = {}
        for p, recs in records.items():
            for r in recs:
                seen[r.value] = seen.get(r.value, 0) + 1
        duplicates = [v for v, c in seen.items() if c > 1]
        lost = [v for v in acked if v not in seen]
        say("  %s: sent %d, acked %d, failed %d, in log %d, duplicates %d, lost %d", topic, sent, len(acked),
            len(failed), sum(seen.values()), len(duplicates), len(lost))
        self.assertEqual(unflushed, 0)
        self.assertEqual(failed, [])
        self.assertEqual(len(acked), sent)
        self.assertEqual(duplicates, [])
        self.assertEqual(lost, [])
        self.assertEqual(sum(seen.values()), sent)

    def run_mechanism(self, topic, sasl_lines, env=None, count=600):
        self.kafka.create_topic(topic, partitions=PARTITIONS)
        proxy, client, metrics = self.start_proxy(sasl_lines, env)
        sent, acked, failed, unflushed = produce(client, topic, count)
        self.check_exactly_once(topic, acked, failed, unflushed, sent)
        log = proxy.text()
        self.assertRegex(log, r"ready \(ApiVersions v\d+\): .*authenticated with SASL")
        self.assertEqual(total(scrape_all(metrics), "upstream_auth_failures_total"), 0, log[-3000:])
        self.assertEqual(proxy.stop(60), 0)
        return proxy.text()

    def test_plain(self):
        path = self.secret_file("plain.pw", PLAIN_PASSWORD + "\n")
        log = self.run_mechanism("sasl-plain", 'mechanism = "PLAIN"\nusername = "proxy"\npassword_file = "%s"\n'
                                 'allow_plain_without_tls = true' % path)
        self.assertNotIn(PLAIN_PASSWORD, log)

    def test_scram_sha256_from_environment(self):
        log = self.run_mechanism("sasl-scram256", 'mechanism = "SCRAM-SHA-256"\nusername = "proxy"\n'
                                 'password_env = "PP_TEST_SCRAM_PASSWORD"',
                                 env={"PP_TEST_SCRAM_PASSWORD": SCRAM_PASSWORD})
        self.assertNotIn(SCRAM_PASSWORD, log)

    def test_scram_sha512(self):
        path = self.secret_file("scram.pw", SCRAM_PASSWORD)
        log = self.run_mechanism("sasl-scram512", 'mechanism = "SCRAM-SHA-512"\nusername = "proxy"\n'
                                 'password_file = "%s"' % path)
        self.assertNotIn(SCRAM_PASSWORD, log)

    def test_oauthbearer_token_file(self):
        token = unsecured_jwt("proxy", time.time() + 3600)
        path = self.secret_file("token", token + "\n")
        log = self.run_mechanism("sasl-oauth-file", 'mechanism = "OAUTHBEARER"\ntoken_file = "%s"' % path)
        self.assertNotIn(token, log)

    def test_oauthbearer_token_command(self):
        token = unsecured_jwt("proxy", time.time() + 3600)
        path = self.secret_file("token-for-command", token)
        log = self.run_mechanism("sasl-oauth-command",
                                 'mechanism = "OAUTHBEARER"\ntoken_command = ["/bin/cat", "%s"]' % path)
        self.assertNotIn(token, log)

    def test_reauthentication_loses_and_duplicates_nothing(self):
        topic = "sasl-reauth"
        self.kafka.create_topic(topic, partitions=PARTITIONS)
        path = self.secret_file("reauth.pw", SCRAM_PASSWORD)
        proxy, client, metrics = self.start_proxy('mechanism = "SCRAM-SHA-512"\nusername = "proxy"\n'
                                                  'password_file = "%s"' % path)
        # 60 s at 200 records/s (issue 15's run): about six re-authentications
        # of the one broker connection (plus the bootstrap one's) under a
        # steady stream.
        sent, acked, failed, unflushed = produce(client, topic, 12000, rate=200, max_seconds=85)
        self.check_exactly_once(topic, acked, failed, unflushed, sent)
        m = scrape_all(metrics)
        reauths = total(m, "upstream_reauthentications_total")
        say("  re-authentications: %d", reauths)
        self.assertGreaterEqual(reauths, 3, proxy.text()[-3000:])
        self.assertEqual(total(m, "upstream_auth_failures_total"), 0)
        self.assertIn("re-authenticated with SASL SCRAM-SHA-512", proxy.text())
        self.assertEqual(proxy.stop(60), 0)

    def test_wrong_password_is_visible_and_retried(self):
        wrong = "wrong-Secret-1234"
        path = self.secret_file("wrong.pw", wrong)
        sasl_lines = 'mechanism = "SCRAM-SHA-512"\nusername = "proxy"\npassword_file = "%s"' % path
        proxy, client, metrics = self.start_proxy(sasl_lines, wait_ready=False)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and total(try_scrape(metrics), "upstream_auth_failures_total") < 2:
            time.sleep(0.5)
        m = scrape_all(metrics)
        self.assertGreaterEqual(total(m, "upstream_auth_failures_total", reason="sasl_authentication"), 2,
                                proxy.text()[-3000:])
        status, _ = http_request(metrics, "/readyz")
        self.assertEqual(status, 503)
        self.assertTrue(proxy.alive())
        log = proxy.text()
        lines = [line for line in log.splitlines() if "authentication failed (sasl_authentication)" in line]
        self.assertTrue(lines, log[-3000:])
        self.assertRegex(lines[0], r"broker .*127\.0\.0\.1:%d" % int(self.kafka.sasl_bootstrap.split(":")[1]))
        self.assertIn("SASL_AUTHENTICATION_FAILED", lines[0])
        _, body = http_request(metrics, "/metrics")
        check = subprocess.run([ARGS.proxy, "--check-config", "--config", proxy.config], capture_output=True,
                               text=True, timeout=30)
        self.assertEqual(check.returncode, 0, check.stderr)
        for where, text in (("log", log), ("/metrics", body), ("--check-config", check.stdout + check.stderr)):
            self.assertNotIn(wrong, text, where)
            self.assertNotIn(SCRAM_PASSWORD, text, where)
        # Retried with backoff, never a tight loop: well under one attempt per 50 ms.
        attempts = total(scrape_all(metrics), "upstream_auth_failures_total")
        self.assertLess(attempts, 2000)

    def test_password_rotated_to_a_wrong_one_gives_retriable_errors_then_recovers(self):
        topic = "sasl-rotated"
        self.kafka.create_topic(topic, partitions=PARTITIONS)
        path = self.secret_file("rotated.pw", SCRAM_PASSWORD)
        proxy, client, metrics = self.start_proxy(
            'mechanism = "SCRAM-SHA-512"\nusername = "proxy"\npassword_file = "%s"' % path,
            delivery_timeout_ms=15000)
        sent, acked, failed, _ = produce(client, topic, 30, tag=b"first")
        self.assertEqual((len(acked), failed), (sent, []))
        with open(path, "w") as f:
            f.write("not-the-password")
        proxy.proc.send_signal(signal.SIGHUP)
        # The next KIP-368 re-authentication (within 10 s) uses the re-read, wrong password.
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline and total(try_scrape(metrics), "upstream_auth_failures_total") < 1:
            time.sleep(0.5)
        self.assertGreaterEqual(total(scrape_all(metrics), "upstream_auth_failures_total",
                                      reason="sasl_authentication"), 1, proxy.text()[-3000:])
        sent, acked, failed, unflushed = produce(client, topic, 30, tag=b"refused")
        say("  while refused: sent %d, acked %d, failed %d %s", sent, len(acked), len(failed),
            sorted({e for _, e in failed}))
        self.assertEqual(unflushed, 0)
        self.assertEqual((len(acked), len(failed)), (0, sent))  # every record answered, none silently lost
        self.assertTrue(all("timed out" in e.lower() for _, e in failed), failed[:3])  # retriable
        self.assertTrue(proxy.alive())
        with open(path, "w") as f:
            f.write(SCRAM_PASSWORD)
        proxy.proc.send_signal(signal.SIGHUP)
        sent, acked, failed, unflushed = produce(client, topic, 200, tag=b"after")
        self.assertEqual((len(acked), failed, unflushed), (sent, [], 0))
        counts = {}
        for recs in self.kafka.read_topic(topic, timeout=60).values():
            for r in recs:
                counts[r.value] = counts.get(r.value, 0) + 1
        by_tag = {}
        for value, n in counts.items():
            self.assertEqual(n, 1, value)
            tag = value.split(b"|")[1]
            by_tag[tag] = by_tag.get(tag, 0) + 1
        self.assertEqual(by_tag, {b"first": 30, b"after": 200})
        self.assertNotIn("not-the-password", proxy.text())
        self.assertEqual(proxy.stop(60), 0)

    def test_slow_token_command_does_not_stall_the_loop(self):
        topic = "sasl-oauth-slow-command"
        self.kafka.create_topic(topic, partitions=PARTITIONS)
        token_path = self.secret_file("token-for-slow-command", unsecured_jwt("proxy", time.time() + 3600))
        runs = self.secret_file("slow-command-runs", "")
        # Each run logs "start" and "done"; every run after the first sleeps 2 s.
        script = ('if [ -s "$1" ]; then echo start >> "$1"; sleep 2; else echo start >> "$1"; fi; '
                  'echo done >> "$1"; cat "$2"')
        proxy, client, metrics = self.start_proxy(
            'mechanism = "OAUTHBEARER"\ntoken_command = ["/bin/sh", "-c", %s, "token-helper", "%s", "%s"]'
            % (json_string(script), runs, token_path))
        sent, acked, failed, unflushed = produce(client, topic, 50, tag=b"before")
        self.assertEqual((len(acked), failed, unflushed), (sent, [], 0))
        reauths_before = total(scrape_all(metrics), "upstream_reauthentications_total")
        started_before = count_lines(runs, "start")
        proxy.proc.send_signal(signal.SIGHUP)  # the next authentication runs the command again
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and count_lines(runs, "start") == started_before:
            time.sleep(0.01)
        self.assertGreater(count_lines(runs, "start"), started_before, proxy.text()[-3000:])
        done_before = count_lines(runs, "done")
        # While the 2 s command runs: ApiVersions round trips to the proxy, each on a new connection.
        longest, trips = 0.0, 0
        while time.monotonic() < deadline and count_lines(runs, "done") == done_before:
            t0 = time.monotonic()
            versions = api_versions("127.0.0.1", client, timeout=5)
            longest = max(longest, time.monotonic() - t0)
            trips += 1
            self.assertIn(0, versions)  # Produce is offered
            time.sleep(0.02)
        say("  during the 2 s token command: %d ApiVersions round trips, the longest %.1f ms", trips, longest * 1000)
        self.assertGreater(count_lines(runs, "done"), done_before)
        self.assertGreaterEqual(trips, 20)
        self.assertLess(longest, 0.100, "the loop stalled while the token command ran")
        # The token the command gave is what the re-authentication used.
        m = wait_metric(self, proxy, metrics, "upstream_reauthentications_total", reauths_before + 1, timeout=20)
        self.assertEqual(total(m, "upstream_auth_failures_total"), 0, proxy.text()[-3000:])
        sent, acked, failed, unflushed = produce(client, topic, 50, tag=b"after")
        self.assertEqual((len(acked), failed, unflushed), (sent, [], 0))
        self.assertEqual(proxy.stop(60), 0)

    def test_token_file_that_disappears(self):
        topic = "sasl-token-gone"
        self.kafka.create_topic(topic, partitions=PARTITIONS)
        expires_at = time.time() + 40
        path = self.secret_file("vanishing-token", unsecured_jwt("proxy", expires_at))
        proxy, client, metrics = self.start_proxy('mechanism = "OAUTHBEARER"\ntoken_file = "%s"' % path)
        sent, acked, failed, unflushed = produce(client, topic, 100)
        self.check_exactly_once(topic, acked, failed, unflushed, sent)
        os.unlink(path)
        gone_at = time.monotonic()
        # The broker caps each session at 10 s: the next re-authentication
        # runs with the token kept from the file that is gone.
        deadline = gone_at + 30
        while time.monotonic() < deadline and total(try_scrape(metrics), "upstream_reauthentications_total") < 1:
            time.sleep(0.5)
        self.assertGreaterEqual(total(scrape_all(metrics), "upstream_reauthentications_total"), 1,
                                proxy.text()[-3000:])
        # Past its expiry, the next authentication fails, clearly.
        deadline = time.monotonic() + max(0, expires_at - time.time()) + 40
        while time.monotonic() < deadline and total(try_scrape(metrics), "upstream_auth_failures_total",
                                                    reason="sasl_token") < 1:
            time.sleep(0.5)
        self.assertGreaterEqual(total(scrape_all(metrics), "upstream_auth_failures_total", reason="sasl_token"), 1,
                                proxy.text()[-3000:])
        lines = [line for line in proxy.text().splitlines() if "authentication failed (sasl_token)" in line]
        self.assertTrue(lines)
        self.assertIn("token file %s" % path, lines[0])
        self.assertIn("has expired", lines[0])
        self.assertTrue(proxy.alive())


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy", required=True, help="the produce-proxy binary")
    ARGS, rest = parser.parse_known_args()
    ARGS.proxy = os.path.abspath(ARGS.proxy)
    unittest.main(argv=[sys.argv[0], "-v", *rest])


if __name__ == "__main__":
    main()
