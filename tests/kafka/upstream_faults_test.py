#!/usr/bin/env python3
"""The proxy's own upstream producer against real Apache Kafka 4.4.0, with faults.

  /usr/bin/python3 tests/kafka/upstream_faults_test.py --proxy BINARY [unittest args]

A legacy client (Debian's confluent-kafka, librdkafka in 0.9 mode: Produce v1,
message format 0, acks=all, no client retries) produces a paced stream of
unique records through the built produce-proxy, which re-batches them and
sends them upstream through its idempotent producer. Cases:

1. Versions (1 node, behind tests/clients/wire_sniff.py so every upstream
   request is seen on the wire): the versions the proxy logs at "ready"
   are min(its own max, the broker's max) per API, and the records land
   through Produce v13 (topics by id).
2. Leader moves mid-stream (3 nodes, rf 3, min.insync.replicas=2, 6
   partitions): zero duplicates, zero lost acknowledged records, per-partition
   send order kept, keys and values intact, client offsets equal log offsets;
   leader_changes_total / window_resets_total / partition_window /
   retries_total agree with what the brokers and the proxy's log say.
3. kill -9 of a broker leading partitions mid-stream, then its restart: the
   same exactly-once checks; the stream on the victim's partitions resumes
   within a bound; metrics agree.

Every check asserts. Every loop is bounded in count and time; every process
started here is stopped here. All servers listen on 127.0.0.1.
"""

import argparse
import collections
import json
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import unittest

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "daemon"))

from kafka_cluster import KafkaCluster  # noqa: E402
from daemon_support import Proxy, free_port  # noqa: E402
import proxy_under_test  # noqa: E402
from proxy_under_test import by_label, scrape_all, total  # noqa: E402

WIRE_SNIFF = os.path.join(REPO, "tests", "clients", "wire_sniff.py")
ARGS = None

PARTITIONS = 6
RATE = 2500             # records per second the client offers
MAX_RECORDS = 60000     # hard bound on one stream
MAX_STREAM_SECONDS = 60
RESUME_BOUND_S = 20     # a partition whose leader died must move on within this (5x the fencing time)
PAYLOAD = bytes(range(32, 127))  # 95 bytes of every printable character

# ---------------------------------------------------------------------------
# What the proxy itself can speak, asked of the binary under test: a stub
# broker that offers every API up to v32767 answers its ApiVersions, so the
# versions it then logs as negotiated are its own maxima.

API_KEYS = {"Produce": 0, "Metadata": 3, "InitProducerId": 22, "ApiVersions": 18}
_proxy_max = None


def _stub_api_versions_response(version, correlation_id):
    keys = list(range(0, 100))
    if version >= 3:   # flexible body (KIP-511); the response header stays v0
        body = struct.pack(">h", 0) + bytes([len(keys) + 1])
        body += b"".join(struct.pack(">hhh", k, 0, 32767) + b"\x00" for k in keys)
        body += struct.pack(">i", 0) + b"\x00"
    else:
        body = struct.pack(">hi", 0, len(keys)) + b"".join(struct.pack(">hhh", k, 0, 32767) for k in keys)
        if version >= 1:
            body += struct.pack(">i", 0)
    frame = struct.pack(">i", correlation_id) + body
    return struct.pack(">i", len(frame)) + frame


def proxy_max_versions():
    """{api: the proxy binary's highest version}, and the ApiVersions version
    it asks first, as (maxima, first_api_versions_version)."""
    global _proxy_max
    if _proxy_max:
        return _proxy_max
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    asked = []
    done = threading.Event()

    def serve():
        conns = []
        try:
            while not done.is_set():
                try:
                    c, _ = listener.accept()
                except socket.timeout:
                    continue
                conns.append(c)
                c.settimeout(10)
                head = c.recv(4, socket.MSG_WAITALL)
                if len(head) < 4:
                    continue
                req = c.recv(struct.unpack(">i", head)[0], socket.MSG_WAITALL)
                key, ver, corr = struct.unpack(">hhi", req[:8])
                if key == 18:
                    asked.append(ver)
                    c.sendall(_stub_api_versions_response(ver, corr))
        except OSError:
            pass
        finally:
            for c in conns:
                c.close()

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    proxy = Proxy(ARGS.proxy, proxy_config("127.0.0.1:%d" % port, free_port(), free_port()))
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not ready_lines(proxy.text()) and proxy.alive():
            time.sleep(0.05)
        lines = ready_lines(proxy.text())
    finally:
        proxy.stop(10)
        proxy.log.close()
        proxy.dir.cleanup()
        done.set()
        server.join(timeout=5)
        listener.close()
    assert lines and asked, "the proxy never negotiated with the stub broker:\n" + proxy.text()[-3000:]
    _proxy_max = (lines[0][2], asked[0])
    return _proxy_max


READY_LINE = re.compile(r"\[upstream\] ([^\n]+?): ready \(ApiVersions v(\d+)\): Produce v(\d+), Metadata v(\d+), "
                        r"InitProducerId v(\d+), ApiVersions v(\d+)")


def ready_lines(log):
    """[(connection, sent ApiVersions version, {api: negotiated version})]."""
    out = []
    for m in READY_LINE.finditer(log):
        out.append((m.group(1), int(m.group(2)), {"Produce": int(m.group(3)), "Metadata": int(m.group(4)),
                                                  "InitProducerId": int(m.group(5)),
                                                  "ApiVersions": int(m.group(6))}))
    return out


def expected_versions(kafka):
    """({api: min(proxy max, broker max)}, the broker's ranges, the ApiVersions
    version the proxy asks first)."""
    broker = kafka.api_versions()
    ours, first = proxy_max_versions()
    return {api: min(ours[api], broker[API_KEYS[api]][1]) for api in ours}, broker, first


# ---------------------------------------------------------------------------
# Prometheus text, by series


class MetricsPoller(threading.Thread):
    """Scrapes /metrics every 0.25 s during a stream and keeps every
    partition_window value of `topic` that is not 5."""

    def __init__(self, port, topic):
        super().__init__(daemon=True)
        self.port, self.topic = port, topic
        self.stop_event = threading.Event()
        self.scrapes = 0
        self.errors = []
        self.bad_windows = []          # (time, partition, value)
        self.max_window_series = 0

    def run(self):
        deadline = time.monotonic() + 3 * MAX_STREAM_SECONDS
        while not self.stop_event.is_set() and time.monotonic() < deadline:
            try:
                m = scrape_all(self.port)
                self.scrapes += 1
                windows = by_label(m, "partition_window", "partition", topic=self.topic)
                self.max_window_series = max(self.max_window_series, len(windows))
                for p, v in windows.items():
                    if v != 5:
                        self.bad_windows.append((time.monotonic(), p, v))
            except Exception as e:  # noqa: BLE001 - a failed scrape is a finding, reported
                self.errors.append(repr(e))
            self.stop_event.wait(0.25)

    def finish(self):
        self.stop_event.set()
        self.join(timeout=10)


# ---------------------------------------------------------------------------
# The legacy client


def value_of(topic, partition, index):
    return b"%s|%d|%08d|" % (topic.encode(), partition, index) + PAYLOAD


def key_of(index):
    return b"key-%08d" % index


class Stream(threading.Thread):
    """confluent-kafka in 0.9 mode (Produce v1, magic 0, acks=all), no client
    retries (a client retry would be a duplicate the proxy cannot know about).
    Record i goes to partition i % PARTITIONS with a unique value. Offers
    RATE records/s until stop(), MAX_RECORDS or MAX_STREAM_SECONDS; then
    flushes (bounded)."""

    def __init__(self, client_port, topic, rate=RATE):
        super().__init__(daemon=True)
        self.client_port, self.topic, self.rate = client_port, topic, rate
        self.stop_event = threading.Event()
        self.lock = threading.Lock()
        self.sent = 0
        self.acked = {}                 # value -> (partition, offset, monotonic time)
        self.ack_times = collections.defaultdict(list)  # partition -> [monotonic time]
        self.failed = []                # (value, error string)
        self.unflushed = None
        self.error = None
        self.started_at = self.ended_at = None

    def acks_on(self, partition, after=0.0):
        with self.lock:
            return sum(1 for t in self.ack_times[partition] if t > after)

    def first_ack_after(self, partition, after):
        with self.lock:
            return next((t for t in self.ack_times[partition] if t > after), None)

    def run(self):
        try:
            self._run()
        except Exception as e:  # noqa: BLE001 - surfaced by the test
            self.error = repr(e)

    def _run(self):
        from confluent_kafka import Producer  # Debian's python3-confluent-kafka
        producer = Producer({
            "bootstrap.servers": "127.0.0.1:%d" % self.client_port,
            "api.version.request": False, "broker.version.fallback": "0.9.0.1",
            "acks": "all", "linger.ms": 5, "message.send.max.retries": 0,
            "request.timeout.ms": 120000, "message.timeout.ms": 180000,
            "queue.buffering.max.messages": 200000,
        })

        def on_delivery(err, msg):
            now = time.monotonic()
            with self.lock:
                if err is None:
                    self.acked[msg.value()] = (msg.partition(), msg.offset(), now)
                    self.ack_times[msg.partition()].append(now)
                else:
                    self.failed.append((msg.value(), str(err)))

        # Know every partition before the first record (explicit partitions
        # are checked against the client's metadata).
        deadline = time.monotonic() + 30
        while True:
            md = producer.list_topics(self.topic, timeout=10).topics.get(self.topic)
            if md is not None and md.error is None and len(md.partitions) == PARTITIONS:
                break
            if time.monotonic() > deadline:
                raise AssertionError("the proxy's Metadata never listed %d partitions of %s: %s" % (
                    PARTITIONS, self.topic, md and (md.error, sorted(md.partitions))))
            time.sleep(0.2)
        self.started_at = time.monotonic()
        hard_end = self.started_at + MAX_STREAM_SECONDS
        while not self.stop_event.is_set() and self.sent < MAX_RECORDS and time.monotonic() < hard_end:
            target = min(MAX_RECORDS, int((time.monotonic() - self.started_at) * self.rate))
            while self.sent < target:
                i, p = self.sent, self.sent % PARTITIONS
                try:
                    producer.produce(self.topic, value=value_of(self.topic, p, i), key=key_of(i), partition=p,
                                     on_delivery=on_delivery)
                except BufferError:
                    break
                self.sent += 1
            producer.poll(0.002)
        self.ended_at = time.monotonic()
        self.unflushed = producer.flush(150)

    def finish(self, timeout=180):
        self.stop_event.set()
        self.join(timeout=timeout)
        return not self.is_alive()


# ---------------------------------------------------------------------------


def proxy_config(bootstrap, client_port, metrics_port, level="info"):
    servers = ", ".join('"%s"' % b for b in bootstrap.split(","))
    return """
[listener]
address = "127.0.0.1:%d"
[upstream]
bootstrap_servers = [%s]
[metrics]
address = "127.0.0.1:%d"
[log]
level = "%s"
""" % (client_port, servers, metrics_port, level)


def start_proxy(test, bootstrap, level="info"):
    return proxy_under_test.start_proxy(test, ARGS.proxy, lambda client, metrics: proxy_config(
        bootstrap, client, metrics, level), ready_timeout=60)


LEADER_LINE = r"%s-(\d+): leader (-?\d+) \(epoch (-?\d+)\) -> (-?\d+) \(epoch (-?\d+)\); window (\d+) -> (\d+)"


def leader_change_lines(log, topic):
    """[(partition, old leader, old epoch, new leader, new epoch, window before, window after)]
    from IdempotentProducer::leader_changed (proxy/pipeline/response_handler.cc)."""
    return [tuple(int(x) for x in m.groups()) for m in re.finditer(LEADER_LINE % re.escape(topic), log)]


def say(fmt, *args):
    print(fmt % args if args else fmt, file=sys.stderr, flush=True)


class Checks:
    """The exactly-once / order / no-loss / offset checks of one stream against
    the topic as the real consumer reads it."""

    @staticmethod
    def log_and_stream(test, kafka, stream, topic):
        records = kafka.read_topic(topic, timeout=60)
        seen = collections.Counter()
        bad_content, order_breaks, wrong_partition, offset_mismatch = [], [], [], []
        where = {}
        for p, recs in sorted(records.items()):
            last = -1
            for r in recs:
                seen[r.value] += 1
                where[r.value] = (p, r.offset)
                try:
                    t, vp, idx = r.value.split(b"|")[:3]
                    idx, vp = int(idx), int(vp)
                except ValueError:
                    bad_content.append((p, r.offset, r.value[:60]))
                    continue
                if r.value != value_of(topic, vp, idx) or r.key != key_of(idx) or t != topic.encode():
                    bad_content.append((p, r.offset, r.key, r.value[:60]))
                if vp != p:
                    wrong_partition.append((p, r.offset, idx))
                if idx <= last:
                    order_breaks.append((p, r.offset, last, idx))
                last = max(last, idx)
        duplicates = {v: c for v, c in seen.items() if c > 1}
        with stream.lock:
            acked = dict(stream.acked)
            failed = list(stream.failed)
        lost = [v for v in acked if v not in seen]
        for v, (p, off, _t) in acked.items():
            if v in where and where[v] != (p, off):
                offset_mismatch.append((v[:30], (p, off), where[v]))
        unacked_in_log = [v for v in seen if v not in acked]
        in_log = sum(seen.values())
        say("  %s: sent %d, acked %d, failed %d, in log %d (distinct %d), duplicates %d, lost %d, "
            "order breaks %d, bad content %d, offset mismatches %d, unacked in log %d",
            topic, stream.sent, len(acked), len(failed), in_log, len(seen), len(duplicates), len(lost),
            len(order_breaks), len(bad_content), len(offset_mismatch), len(unacked_in_log))
        test.assertIsNone(stream.error, "the client thread failed")
        test.assertEqual(stream.unflushed, 0, "records still unanswered after the client's flush")
        test.assertEqual(failed[:5], [], "%d records failed at the client" % len(failed))
        test.assertEqual(len(duplicates), 0, "duplicates in the log: %s" % list(duplicates.items())[:5])
        test.assertEqual(lost[:5], [], "%d acknowledged records are not in the log" % len(lost))
        test.assertEqual(order_breaks[:5], [], "per-partition send order broken")
        test.assertEqual(bad_content[:5], [], "keys/values not intact")
        test.assertEqual(wrong_partition[:5], [], "records in the wrong partition")
        test.assertEqual(offset_mismatch[:5], [], "offsets told to the client differ from the log")
        test.assertEqual(unacked_in_log[:5], [], "records in the log the client never saw acknowledged")
        test.assertEqual(len(acked), stream.sent)
        test.assertEqual(in_log, stream.sent)
        return records


class UpstreamFaults(unittest.TestCase):
    """3 nodes, rf 3, min.insync.replicas=2 (the harness's 3-node defaults)."""

    @classmethod
    def setUpClass(cls):
        cls.kafka = KafkaCluster(nodes=3)
        cls.kafka.start()
        say("\n3-node Kafka up in %.1f s at %s", cls.kafka.startup_seconds, cls.kafka.bootstrap)

    @classmethod
    def tearDownClass(cls):
        cls.kafka.stop()

    # ---- shared pieces

    def assert_versions(self, proxy):
        want, broker, first = expected_versions(self.kafka)
        lines = ready_lines(proxy.text())
        self.assertTrue(lines, "no 'ready (ApiVersions ...)' line in the proxy log")
        for conn, sent, got in lines:
            history = "\n".join(l for l in proxy.text().splitlines() if conn in l)[-4000:]
            self.assertEqual(got, want, "%s negotiated %s; broker offers %s:\n%s" % (conn, got, broker, history))
            self.assertEqual(sent, first, "%s: asked ApiVersions v%d of a Kafka %s broker, not v%d first; its log:\n%s"
                             % (conn, sent, "4.4.0", first, history))
        return want

    def wait_all_partitions(self, stream, proxy, n=50, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(stream.acks_on(p) >= n for p in range(PARTITIONS)):
                return
            self.assertTrue(proxy.alive(), "the proxy died:\n" + proxy.text()[-4000:])
            self.assertIsNone(stream.error)
            time.sleep(0.1)
        self.fail("not every partition got %d acks within %d s: %s\n%s" % (
            n, timeout, {p: stream.acks_on(p) for p in range(PARTITIONS)}, proxy.text()[-4000:]))

    def wait_resumed(self, stream, partition, after, n=100, timeout=RESUME_BOUND_S):
        """Seconds from `after` to the first ack of the n acks after it, or None."""
        deadline = after + timeout
        while time.monotonic() < deadline:
            if stream.acks_on(partition, after) >= n:
                return stream.first_ack_after(partition, after) - after
            time.sleep(0.05)
        return None

    def assert_metrics(self, proxy, metrics_port, poller, stream, topic, epochs_before, epochs_after,
                       must_change, allowed_retry_errors):
        """What every fault case's /metrics must say. must_change: {partition:
        number of leader changes the proxy must have seen at least}."""
        m = scrape_all(metrics_port)
        log = proxy.text()
        resets = {int(p): v for p, v in by_label(m, "window_resets_total", "partition", topic=topic).items()}
        windows = {int(p): v for p, v in by_label(m, "partition_window", "partition", topic=topic).items()}
        retries = by_label(m, "retries_total", "error")
        changes = total(m, "leader_changes_total")
        lines = leader_change_lines(log, topic)
        say("  metrics: leader_changes_total %d, window_resets_total %s, partition_window %s, retries_total %s, "
            "epoch bumps %s, delivered %d, failed %d, duplicate_sequence %d; %d scrapes during the stream",
            changes, resets, windows, retries, by_label(m, "producer_epoch_bumps_total", "reason"),
            total(m, "records_delivered_total"), total(m, "records_failed_total"),
            total(m, "duplicate_sequence_total"), poller.scrapes)
        say("  leader epochs before %s after %s; proxy saw %s", epochs_before, epochs_after,
            [(p, "%d->%d e%d->e%d" % (a, b, c, d)) for p, a, c, b, d, _w1, _w2 in lines])
        self.assertEqual(poller.errors, [], "scrapes failed during the stream")
        self.assertGreaterEqual(poller.scrapes, 10)
        self.assertEqual(poller.max_window_series, PARTITIONS)
        self.assertEqual(poller.bad_windows[:5], [], "partition_window was not 5 (Kafka 4.4.0 has no KIP-1269)")
        self.assertEqual(windows, {p: 5 for p in range(PARTITIONS)})
        # Every leader change resets that partition's window: the two counters
        # move together in IdempotentProducer::leader_changed, which logs each.
        self.assertEqual(sorted(resets), list(range(PARTITIONS)))
        self.assertEqual(changes, sum(resets.values()))
        self.assertEqual(changes, len(lines))
        per_partition = collections.Counter(l[0] for l in lines)
        for p in range(PARTITIONS):
            delta = epochs_after[p][1] - epochs_before[p][1]
            self.assertEqual(resets[p], per_partition[p], "partition %d: resets vs logged changes" % p)
            self.assertLessEqual(resets[p], delta, "partition %d: more resets than leader epochs" % p)
            self.assertGreaterEqual(resets[p], must_change.get(p, 0), "partition %d: leader changes missed" % p)
            mine = [l for l in lines if l[0] == p]
            for l in mine:
                self.assertEqual((l[5], l[6]), (5, 5))
                self.assertGreater(l[4], l[2], "a leader change to a lower epoch")
            if mine:
                self.assertEqual((mine[-1][3], mine[-1][4]), epochs_after[p],
                                 "partition %d: the proxy's last leader is not the broker's" % p)
        self.assertGreaterEqual(changes, sum(must_change.values()))
        unexpected = {e: v for e, v in retries.items() if e not in allowed_retry_errors and v}
        self.assertEqual(unexpected, {}, "retries under unexpected errors")
        self.assertEqual(total(m, "records_failed_total"), 0)
        self.assertEqual(total(m, "records_delivered_total"), len(stream.acked))
        # Kafka 4.4.0 answers a retried duplicate with NONE and the first offset.
        self.assertEqual(total(m, "duplicate_sequence_total"), 0)
        self.assertEqual(by_label(m, "producer_epoch_bumps_total", "reason"), {},
                         "epoch bumps: nothing here should need one")
        return retries, lines

    def epochs(self, topic):
        return {p: (s.leader, s.leader_epoch) for p, s in self.kafka.describe(topic).items()}

    # ---- case 1 on three nodes: versions from the log and records landing

    def test_1_versions_three_nodes(self):
        k = self.kafka
        topic = "versions3"
        k.create_topic(topic, partitions=PARTITIONS)
        proxy, client, _metrics = start_proxy(self, k.bootstrap)
        stream = Stream(client, topic, rate=2000)
        stream.start()
        self.wait_all_partitions(stream, proxy, n=20)
        self.assertTrue(stream.finish())
        want = self.assert_versions(proxy)
        brokers = {b: k.api_versions(b) for b in k.broker_ids}
        self.assertEqual(len(set(map(lambda v: tuple(sorted(v.items())), brokers.values()))), 1,
                         "the three brokers advertise different ranges")
        conns = [c for c, _s, _v in ready_lines(proxy.text())]
        say("  versions: broker Produce max v%d, proxy max v%d -> %s on %d connections",
            brokers[1][0][1], proxy_max_versions()[0]["Produce"], want, len(conns))
        self.assertEqual(want["Produce"], 13)   # Kafka 4.4.0: no v14, so no KIP-1269 window
        Checks.log_and_stream(self, k, stream, topic)
        self.assertEqual(proxy.stop(60), 0, proxy.text()[-3000:])

    # ---- case 2: leaders moved mid-stream

    def test_2_leader_moves_mid_stream(self):
        k = self.kafka
        topic = "moves"
        k.create_topic(topic, partitions=PARTITIONS)
        proxy, client, metrics_port = start_proxy(self, k.bootstrap)
        poller = MetricsPoller(metrics_port, topic)
        stream = Stream(client, topic)
        t0 = time.monotonic()
        stream.start()
        poller.start()
        self.addCleanup(poller.finish)
        self.addCleanup(stream.finish, 5)
        self.wait_all_partitions(stream, proxy)
        before = self.epochs(topic)
        moves = []   # (partition, from, to, seconds, resumed after s)
        for p in (0, 3, 0):
            cur = k.leader(topic, p)
            to = cur % 3 + 1
            t_move = time.monotonic()
            state = k.move_leader(topic, p, to)
            took = time.monotonic() - t_move
            self.assertEqual(state.leader, to)
            resumed = self.wait_resumed(stream, p, time.monotonic())
            moves.append((p, cur, to, round(took, 2), None if resumed is None else round(resumed, 2)))
            self.assertIsNotNone(resumed, "partition %d got no acks for %d s after its leader moved to %d:\n%s" % (
                p, RESUME_BOUND_S, to, proxy.text()[-4000:]))
        time.sleep(1.0)
        self.assertTrue(stream.finish(), "the client did not finish")
        poller.finish()
        after = self.epochs(topic)
        say("  moves (partition, from, to, move took s, acks resumed after s): %s; stream %.1f s, %d records",
            moves, stream.ended_at - stream.started_at, stream.sent)
        self.assertTrue(proxy.alive(), proxy.text()[-4000:])
        self.assert_versions(proxy)
        must = collections.Counter(p for p, *_ in moves)
        retries, _lines = self.assert_metrics(proxy, metrics_port, poller, stream, topic, before, after, must,
                                              allowed_retry_errors={"NOT_LEADER_OR_FOLLOWER"})
        # Produce names no leader epoch, so the first word of every move the
        # proxy hears is the old leader's NOT_LEADER_OR_FOLLOWER (with KIP-951's
        # CurrentLeader); nothing else refreshes its metadata within 300 s.
        self.assertGreaterEqual(retries.get("NOT_LEADER_OR_FOLLOWER", 0), len(moves))
        Checks.log_and_stream(self, k, stream, topic)
        self.assertEqual(proxy.stop(60), 0, proxy.text()[-3000:])
        say("  case took %.1f s", time.monotonic() - t0)

    # ---- case 3: kill -9 of a leader mid-stream, then restart

    def wait_all_resumed(self, stream, after, bound, n=100):
        """{partition: seconds from `after` to its first ack after it, or None}
        once every partition has n acks after `after`, or at `after + bound`."""
        deadline = after + bound
        while time.monotonic() < deadline and not all(stream.acks_on(p, after) >= n for p in range(PARTITIONS)):
            time.sleep(0.05)
        return {p: (None if stream.acks_on(p, after) < n else round(stream.first_ack_after(p, after) - after, 2))
                for p in range(PARTITIONS)}

    def test_3_kill9_leader_mid_stream_then_restart(self):
        k = self.kafka
        topic = "kill9"
        k.create_topic(topic, partitions=PARTITIONS)
        proxy, client, metrics_port = start_proxy(self, k.bootstrap)
        poller = MetricsPoller(metrics_port, topic)
        stream = Stream(client, topic)
        t0 = time.monotonic()
        stream.start()
        poller.start()
        self.addCleanup(poller.finish)
        self.addCleanup(stream.finish, 5)
        self.wait_all_partitions(stream, proxy, n=300)
        before = self.epochs(topic)
        led = collections.defaultdict(list)
        for p, (leader, _e) in before.items():
            led[leader].append(p)
        victim = max(sorted(led), key=lambda b: len(led[b]))
        victim_parts = led[victim]
        t_kill = time.monotonic()
        k.kill9(victim)
        self.addCleanup(lambda: k.is_alive(victim) or k.restart(victim))
        say("  killed broker %d (leader of %s) %.1f s into the stream, %d records acked",
            victim, victim_parts, t_kill - stream.started_at, len(stream.acked))
        # The controller fences the dead broker after broker.session.timeout.ms
        # (4 s in the harness) and elects new leaders from the ISR; the proxy
        # must find them. A client request spans every partition and the proxy
        # answers requests in order, so one stalled partition stalls all acks.
        stalls = self.wait_all_resumed(stream, t_kill, RESUME_BOUND_S)
        mid = self.epochs(topic)
        acked_at_restart = len(stream.acked)
        say("  acks resumed after the kill (s): %s (bound %d s); leaders (leader, epoch) now %s",
            stalls, RESUME_BOUND_S, mid)
        t_restart = time.monotonic()
        k.restart(victim)
        restart_took = time.monotonic() - t_restart
        after_restart = self.wait_all_resumed(stream, time.monotonic(), 20, n=50)
        time.sleep(1.0)
        self.assertTrue(stream.finish(), "the client did not finish")
        poller.finish()
        after = self.epochs(topic)
        log = proxy.text()
        say("  restart took %.1f s; acks after it (s) %s; %d records acked before the restart; "
            "stream %.1f s, %d records", restart_took, after_restart, acked_at_restart,
            stream.ended_at - stream.started_at, stream.sent)
        say("  proxy log after the kill:\n    %s", "\n    ".join(
            l for l in log.splitlines() if "[upstream] broker %d " % victim in l or ("%s-" % topic) in l)[-3000:])
        self.assertTrue(proxy.alive(), log[-4000:])
        for p, s in after_restart.items():
            self.assertIsNotNone(s, "partition %d got no acks after broker %d restarted" % (p, victim))
        retries, _lines = self.assert_metrics(
            proxy, metrics_port, poller, stream, topic, before, after, {p: 1 for p in victim_parts},
            # What the code names (broker_connection.cc close_session, response_handler.cc):
            # requests outstanding on the killed connection fail NETWORK_EXCEPTION (REQUEST_TIMED_OUT
            # if their deadline passed); a broker that lost leadership answers NOT_LEADER_OR_FOLLOWER;
            # while the ISR is short, NOT_ENOUGH_REPLICAS(_AFTER_APPEND) are possible.
            allowed_retry_errors={"NETWORK_EXCEPTION", "REQUEST_TIMED_OUT", "NOT_LEADER_OR_FOLLOWER",
                                  "NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND"})
        # NETWORK_EXCEPTION retries exactly when requests were outstanding on
        # the victim's connection as it died (the proxy logs how many failed).
        failed_on_kill = [int(n) for n in re.findall(
            r"broker %d [^\n]*disconnected while ready: [^\n]*\((\d+) outstanding requests failed\)" % victim, log)]
        say("  requests failed as broker %d died: %s", victim, failed_on_kill)
        # A Produce request carries at most one batch per partition, and the
        # victim's requests only its own partitions.
        net = retries.get("NETWORK_EXCEPTION", 0)
        if sum(failed_on_kill):
            self.assertTrue(1 <= net <= sum(failed_on_kill) * len(victim_parts),
                            "retries_total{error=NETWORK_EXCEPTION} %d vs %d requests failed on broker %d" % (
                                net, sum(failed_on_kill), victim))
        else:
            self.assertEqual(net, 0, "NETWORK_EXCEPTION retries while no request was outstanding on the victim")
        Checks.log_and_stream(self, k, stream, topic)
        self.assertEqual(proxy.stop(60), 0, proxy.text()[-3000:])
        say("  case took %.1f s", time.monotonic() - t0)
        # Every connection, the ones made to the restarted broker included.
        self.assert_versions(proxy)
        # Last, so every other check above has had its say: the new leaders
        # were elected while the victim was down (mid), and the proxy must
        # have followed them without waiting for the dead broker to return.
        self.assertTrue(all(mid[p][0] != victim for p in victim_parts), "no new leaders elected: %s" % mid)
        stalled = {p: s for p, s in stalls.items() if s is None}
        self.assertEqual(stalled, {}, "partitions with no acks within %d s of kill -9 of broker %d (new leaders "
                         "%s were elected meanwhile); they moved on only after the restart (%s)" % (
                             RESUME_BOUND_S, victim, mid, after_restart))


class VersionsOnTheWire(unittest.TestCase):
    """Case 1 on the wire: 1 node advertising a wire_sniff.py forwarder, so
    every request the proxy sends upstream is decoded (api, version)."""

    def test_versions_on_the_wire(self):
        real, sniff_port = free_port(), free_port()
        sniff_log = open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "pp-sniff-%d.log" % os.getpid()), "w+")
        self.addCleanup(os.unlink, sniff_log.name)
        self.addCleanup(sniff_log.close)
        sniffer = subprocess.Popen([sys.executable, WIRE_SNIFF, "--listen", "127.0.0.1:%d" % sniff_port,
                                    "--upstream", "127.0.0.1:%d" % real, "--seconds", "150"],
                                   stdin=subprocess.PIPE, stdout=sniff_log, stderr=subprocess.STDOUT)

        def stop_sniffer():
            if sniffer.poll() is None:
                sniffer.stdin.close()
                try:
                    sniffer.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    sniffer.kill()
                    sniffer.wait(timeout=5)
        self.addCleanup(stop_sniffer)
        kafka = KafkaCluster(nodes=1, broker_ports=[real],
                             broker_config={"advertised.listeners": "PLAINTEXT://127.0.0.1:%d" % sniff_port})
        kafka.start()
        self.addCleanup(kafka.stop)
        topic = "wire"
        kafka.create_topic(topic, partitions=PARTITIONS)
        want, broker, first = expected_versions(kafka)
        proxy, client, _m = start_proxy(self, "127.0.0.1:%d" % sniff_port, level="debug")
        stream = Stream(client, topic, rate=1000)
        stream.start()
        deadline = time.monotonic() + 30
        while sum(stream.acks_on(p) for p in range(PARTITIONS)) < 500 and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertTrue(stream.finish())
        Checks.log_and_stream(self, kafka, stream, topic)
        log = proxy.text()
        self.assertEqual(proxy.stop(60), 0, log[-3000:])
        stop_sniffer()

        sniff_log.seek(0)
        reqs = [json.loads(l) for l in sniff_log if l.startswith("{")]
        mine = [r for r in reqs if r.get("client_id") == "produce-proxy"]
        by_api = collections.defaultdict(collections.Counter)
        for r in mine:
            by_api[r["api"]][r["version"]] += 1
        say("  broker max: Produce v%d Metadata v%d InitProducerId v%d ApiVersions v%d; proxy max %s",
            broker[0][1], broker[3][1], broker[22][1], broker[18][1], proxy_max_versions())
        say("  proxy log: %s", [v for _c, _s, v in ready_lines(log)][:1])
        say("  on the wire from the proxy: %s", {a: dict(c) for a, c in by_api.items()})
        lines = ready_lines(log)
        self.assertTrue(lines)
        for conn, sent, got in lines:
            self.assertEqual(got, want, conn)
            self.assertEqual(sent, first)
        self.assertEqual(want["Produce"], 13)
        self.assertEqual(dict(by_api["Produce"]).keys(), {13}, "every upstream Produce is v13 (topic ids)")
        self.assertGreater(by_api["Produce"][13], 0)
        self.assertEqual(set(by_api["ApiVersions"]), {first})
        self.assertEqual(set(by_api["Metadata"]), {want["Metadata"]})
        self.assertEqual(set(by_api["InitProducerId"]), {want["InitProducerId"]})
        produce = [r for r in mine if r["api"] == "Produce"]
        self.assertTrue(all(r.get("magic") == 2 and r.get("acks") == -1 and r.get("producer_id", -1) >= 0
                            for r in produce), produce[:3])
        # the debug lines send_produce writes when it falls back below v13
        self.assertNotIn("instead of v13", log)
        self.assertNotIn("negotiated; sending", log)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy", required=True, help="the produce-proxy binary")
    ARGS, rest = parser.parse_known_args()
    ARGS.proxy = os.path.abspath(ARGS.proxy)
    unittest.main(argv=[sys.argv[0], "-v", *rest])


if __name__ == "__main__":
    main()
