#!/usr/bin/env python3
"""One memory budget (issue 14): request frames count from their size prefix.

The shipped binary with the example config and the embedded upstream, a
32 MiB budget (producer.buffer_memory_bytes), listener.max_request_bytes
16 MiB and a 3 s frame deadline. Eight connections each announce a 16 MiB
Produce frame, send 14 MiB of it and stall: 112 MiB the proxy would hold
with no budget counting it (the code before issue 14's budget held all of
it, 189 MiB for three 60 MiB frames in the issue's measurement). Now:

- the budget reserves each frame at its prefix; once over, frames begun
  afterwards are not read until the budget has room again (the held ones
  closed), so the connections are read two at a time and the peak VmRSS
  growth stays under the budget plus RSS_SLACK_MIB;
- memory_used_bytes{use="request_frames"} shows the reservation while held;
- after listener.frame_timeout_ms the stalled connections are closed with a
  log line, the budget empties, and a normal produce goes through.

usage: memory_budget_test.py --proxy BINARY [unittest args]
"""
import os
import socket
import struct
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_support  # noqa: E402
from daemon_support import (Proxy, free_port, http_request, is_asan_build, kcat_produce,  # noqa: E402
                            metric_value, reset_peak_rss, status_kib)

ARGS = None
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE_CONFIG = os.path.join(REPO, "config", "produce-proxy.example.toml")
MIB = 1024 * 1024
BUDGET = 32 * MIB
FRAME = 16 * MIB
SENT = 14 * MIB
CONNECTIONS = 8
FRAME_TIMEOUT_MS = 3000
# Read buffers, one partial chunk per refused connection, the allocator's
# slack: the goal is the budget + 32 MiB; this asserts tighter.
RSS_SLACK_MIB = 24


def stalled_sender(port, results, index):
    """Announces a FRAME-byte request, sends SENT bytes of it (as far as the
    proxy reads), then waits for the proxy to close the connection."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=2)
    sent = 0
    try:
        sock.sendall(struct.pack(">i", FRAME) + b"\x00\x00\x00\x07\x00\x00\x00\x01")
        chunk = b"\x00" * (256 * 1024)
        deadline = time.monotonic() + 45
        while sent < SENT and time.monotonic() < deadline:
            try:
                sent += sock.send(chunk[: min(len(chunk), SENT - sent)])
            except socket.timeout:
                continue  # not read: the proxy paused this connection
        sock.settimeout(FRAME_TIMEOUT_MS / 1000 + 20)
        closed = sock.recv(1) == b""
    except (ConnectionResetError, BrokenPipeError):
        closed = True
    except OSError as e:
        closed = f"error {e!r}"
    finally:
        sock.close()
    results[index] = (sent, closed)


class MemoryBudget(unittest.TestCase):

    def test_stalled_frames_are_held_inside_the_budget_and_then_closed(self):
        client, metrics = free_port(), free_port()
        sets = ['upstream.bootstrap_servers=["embedded"]', f'listener.address="127.0.0.1:{client}"',
                f'metrics.address="127.0.0.1:{metrics}"', f"producer.buffer_memory_bytes={BUDGET}",
                f"listener.max_request_bytes={FRAME}", f"listener.frame_timeout_ms={FRAME_TIMEOUT_MS}"]
        proxy = Proxy(ARGS.proxy, config_path=EXAMPLE_CONFIG, sets=sets)
        try:
            self.assertTrue(proxy.wait_ready(), proxy.text()[-3000:])
            pid = proxy.proc.pid
            peak_known = reset_peak_rss(pid)
            rss_before = status_kib(pid, "VmRSS")
            results = [None] * CONNECTIONS
            senders = [threading.Thread(target=stalled_sender, args=(client, results, i), daemon=True)
                       for i in range(CONNECTIONS)]
            for t in senders:
                t.start()
            time.sleep(1.5)  # well inside the frame deadline: the frames are held
            status, body = http_request(metrics, "/metrics")
            self.assertEqual(status, 200)
            held = metric_value(body, 'produce_proxy_memory_used_bytes{use="request_frames"}')
            print(f"while held: request_frames {held}, buffered_bytes {metric_value(body, 'produce_proxy_buffered_bytes')}",
                  flush=True)
            for t in senders:
                t.join(timeout=120)
            rss_growth_kib = (status_kib(pid, "VmHWM") if peak_known else status_kib(pid, "VmRSS")) - rss_before
            print(f"senders: {results}; peak VmRSS +{rss_growth_kib / 1024:.1f} MiB", flush=True)
            self.assertTrue(all(r is not None and r[1] is True for r in results),
                            f"every stalled connection is closed by the proxy: {results}")
            self.assertIn("was not complete", proxy.text(), "the frame deadline is logged")
            self.assertEqual(proxy.text().count("was not complete"), CONNECTIONS,
                             "each stalled connection was read, in turn, and closed at its frame deadline")
            if not is_asan_build(ARGS.proxy):
                self.assertLess(rss_growth_kib, (BUDGET // MIB + RSS_SLACK_MIB) * 1024, "peak VmRSS growth, KiB")
            self.assertIsNotNone(held, "memory_used_bytes{use=request_frames} is exported")
            self.assertGreaterEqual(held, BUDGET, "the reservations are what put the budget over")
            after = kcat_produce(client, "after-stalled-frames", ["k1:v1", "k2:v2"], "-K:")
            self.assertEqual(after.returncode, 0, f"a normal produce afterwards: {after.stderr}")
            self.assertTrue(proxy.alive(), proxy.text()[-3000:])
        finally:
            proxy.stop(10)


if __name__ == "__main__":
    daemon_support.run_tests(sys.modules[__name__])
