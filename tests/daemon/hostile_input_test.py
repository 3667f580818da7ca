#!/usr/bin/env python3
"""No input makes the loop stall (issue 14): the shipped binary with the
example config and the embedded upstream, sent the hostile cases of the
issue, each on its own connection, while a probe connection times ApiVersions
round trips:

- ApiVersions v3 whose request header carries 200,000 unknown tagged fields
  in decreasing tag order (about 0.8 MB);
- one RecordBatch v2 record with 3,000,000 empty headers (5.7 MiB);
- the same record inside a gzip batch (about 6 KiB on the wire).

Each case runs against a fresh proxy, so a stall of one (on code without the
fix) is not counted against the next. The hostile connection must be refused
(closed, or answered MESSAGE_TOO_LARGE, and the reason logged), the probe's
round trips stay short, VmRSS at its peak (VmHWM, reset before each case)
grows by less than RSS_BOUND_KIB, and afterwards a normal produce on another
connection succeeds. Before the fix (release build, this box) the three cases
measured a 34.9 s stall; 243 ms and +253 MiB; 269 ms and +253 MiB
(docs/BENCHMARKS.md).

The round-trip bound: the issue's goal is 100 ms. This box is shared (2 cores,
other builds running), so one scheduling hiccup can stretch a single round
trip of an idle loop well past that. The median of the probes must stay under
100 ms (a loop that is busy with the hostile input for a long time moves the
median) and the max under 250 ms (a real stall, 1.4 s or 20 s as the issue
measured, moves the max far beyond it).

usage: hostile_input_test.py --proxy BINARY [unittest args]
"""
import argparse
import os
import statistics
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile_wire as wire  # noqa: E402
from daemon_support import Proxy, free_port, is_asan_build, kcat_produce, reset_peak_rss, status_kib  # noqa: E402

ARGS = None
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE_CONFIG = os.path.join(REPO, "config", "produce-proxy.example.toml")
MEDIAN_BOUND_MS = 100
MAX_BOUND_MS = 250
# A request's decoded form may take at most the per-request decode cap
# (max(buffer_memory_bytes, 32 MiB) = 64 MiB with the example config), and
# the hostile cases are refused at the header count, before the header views
# are allocated; what remains is the frame and read buffers (measured: 2-10
# MiB; the code before the fix peaked at +253 MiB on both record cases).
RSS_BOUND_KIB = 64 * 1024
CASE_DEADLINE_S = 40  # the original code froze for 20.4 s on the first case
TAGS = 200_000
HEADERS = 3_000_000


class Probe(threading.Thread):
    """ApiVersions v0 round trips on one connection, every 10 ms, until stopped."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.sock = wire.connect(port, timeout=CASE_DEADLINE_S)
        self.rtts_ms, self.failures = [], []
        self.stop_event = threading.Event()

    def run(self):
        correlation = 0
        while not self.stop_event.is_set() and len(self.rtts_ms) < 100_000:
            correlation += 1
            start = time.monotonic()
            try:
                self.sock.sendall(wire.api_versions_v0(correlation))
                answer = wire.read_frame(self.sock)
            except OSError as e:
                self.failures.append(repr(e))
                return
            if answer is None:
                self.failures.append("the probe connection was closed")
                return
            self.rtts_ms.append((time.monotonic() - start) * 1000)
            time.sleep(0.01)

    def finish(self):
        self.stop_event.set()
        self.join(timeout=CASE_DEADLINE_S + 5)
        self.sock.close()


def hostile_outcome(port, request):
    """Sends one hostile request on a fresh connection: 'closed', or
    'error N' / 'ok' from a Produce answer, or 'no answer' at the deadline."""
    sock = wire.connect(port, timeout=CASE_DEADLINE_S)
    try:
        try:
            sock.sendall(request)
            answer = wire.read_frame(sock)
        except (TimeoutError, OSError) as e:
            return "closed" if isinstance(e, (ConnectionResetError, BrokenPipeError)) else f"no answer ({e!r})"
        if answer is None:
            return "closed"
        if request[4:6] != b"\x00\x00":  # not Produce: an answer at all is the wrong outcome
            return "answered"
        code = wire.produce_error_code(answer)
        return "ok" if code == 0 else f"error {code}"
    finally:
        sock.close()


def start_proxy():
    client, metrics = free_port(), free_port()
    sets = ['upstream.bootstrap_servers=["embedded"]', f'listener.address="127.0.0.1:{client}"',
            f'metrics.address="127.0.0.1:{metrics}"']
    return Proxy(ARGS.proxy, config_path=EXAMPLE_CONFIG, sets=sets), client


class HostileInput(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.plain, cls.gzipped = wire.hostile_batches(HEADERS)
        cls.tags = wire.api_versions_v3_with_tags(7, TAGS)
        print(f"hostile sizes: tags {len(cls.tags)} bytes, batch {len(cls.plain)} bytes uncompressed, "
              f"{len(cls.gzipped)} bytes gzip", flush=True)

    def measure(self, proxy, port, name, request, send=hostile_outcome):
        pid = proxy.proc.pid
        peak_known = reset_peak_rss(pid)
        rss_before = status_kib(pid, "VmRSS")
        probe = Probe(port)
        probe.start()
        time.sleep(0.2)  # some round trips of an idle loop first
        outcome = send(port, request)
        time.sleep(0.3)  # and some after
        probe.finish()
        # The peak is what an OOM killer sees; memory given back afterwards
        # does not help a pod at its limit.
        rss_growth = (status_kib(pid, "VmHWM") if peak_known else status_kib(pid, "VmRSS")) - rss_before
        rtts = probe.rtts_ms or [float("inf")]
        median, worst = statistics.median(rtts), max(rtts)
        print(f"{name}: {outcome}; {len(probe.rtts_ms)} probes, median {median:.1f} ms, max {worst:.1f} ms; "
              f"peak VmRSS +{rss_growth / 1024:.1f} MiB; probe failures {probe.failures}", flush=True)
        return outcome, probe.failures, median, worst, rss_growth

    def check_case(self, name, request, want, logged, send=hostile_outcome):
        proxy, port = start_proxy()
        try:
            self.assertTrue(proxy.wait_ready(), proxy.text()[-3000:])
            warm = kcat_produce(port, "warm-up", ["k:v"], "-K:")
            self.assertEqual(warm.returncode, 0, warm.stderr)
            outcome, failures, median, worst, rss_growth = self.measure(proxy, port, name, request, send)
            self.assertIn(outcome, want, f"{name}: what the hostile connection got")
            self.assertEqual(failures, [], f"{name}: the probe failed")
            self.assertLess(median, MEDIAN_BOUND_MS, f"{name}: median probe round trip")
            self.assertLess(worst, MAX_BOUND_MS, f"{name}: slowest probe round trip")
            if not is_asan_build(ARGS.proxy):
                self.assertLess(rss_growth, RSS_BOUND_KIB, f"{name}: peak VmRSS growth, KiB")
            self.assertTrue(proxy.alive(), proxy.text()[-3000:])
            after = kcat_produce(port, "after-hostile", ["k1:v1", "k2:v2"], "-K:")
            self.assertEqual(after.returncode, 0, f"a normal produce after {name}: {after.stderr}")
            self.assertIn(logged, proxy.text(), "the refusal is logged with its reason")
        finally:
            proxy.stop(10)

    def test_200000_unknown_tags_in_decreasing_order(self):
        self.check_case("200,000 tags, decreasing", self.tags, ("closed",),
                        "malformed request header: field 'header._tagged_fields'")

    def test_3000000_empty_headers(self):
        self.check_case("3,000,000 headers", wire.produce_v7(8, b"hostile", self.plain),
                        (f"error {wire.MESSAGE_TOO_LARGE}",), "refused with MESSAGE_TOO_LARGE")

    def test_3000000_empty_headers_gzip(self):
        self.check_case("3,000,000 headers, gzip", wire.produce_v7(9, b"hostile", self.gzipped),
                        (f"error {wire.MESSAGE_TOO_LARGE}",), "refused with MESSAGE_TOO_LARGE")

    def test_three_connections_announcing_90_mib_frames(self):
        # The fourth case: each announces 90 MiB and sends up to 60
        # MiB of it, at once. Refused from the size prefix (max_request_bytes,
        # 16 MiB), so none of it is ever held.
        self.check_case("3 x 90 MiB frames", None, ("closed",), "request size prefix over max_request_bytes",
                        send=announce_big_frames)


def announce_big_frames(port, _request, connections=3, announced=90 << 20, sent=60 << 20):
    """'closed' when the proxy hung up on every connection before taking the
    bytes each tried to send."""
    outcomes = []

    def one():
        sock = wire.connect(port, timeout=CASE_DEADLINE_S)
        try:
            sock.sendall(announced.to_bytes(4, "big") + b"\x00\x00\x00\x07" + b"\x00" * 8)
            chunk = b"\x00" * (1 << 20)
            for _ in range(sent >> 20):
                sock.sendall(chunk)
            outcomes.append("sent all")  # the proxy read it all: not refused at the prefix
        except (ConnectionResetError, BrokenPipeError):
            outcomes.append("closed")
        except OSError as e:
            outcomes.append(f"no answer ({e!r})")
        finally:
            sock.close()

    threads = [threading.Thread(target=one) for _ in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=CASE_DEADLINE_S + 5)
    return outcomes[0] if len(set(outcomes)) == 1 and len(outcomes) == connections else repr(outcomes)


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore", ResourceWarning)
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy", required=True)
    ARGS, rest = parser.parse_known_args()
    if not os.access(ARGS.proxy, os.X_OK):
        sys.exit(f"FAIL: {ARGS.proxy} is not an executable (build it: cmake --build --preset release)")
    unittest.main(argv=[sys.argv[0], "-v", *rest])
