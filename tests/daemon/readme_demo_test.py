#!/usr/bin/env python3
"""The README's first command and its demo, verbatim (issue 11).

Starts `scripts/run.sh` with no arguments, exactly as a newcomer does (it runs
the setup script, builds the release binary if needed, and execs the proxy on
the embedded upstream at 127.0.0.1:9092 / :9464), then runs the shell block
that follows "Try it with a legacy client" in README.md and checks what it
prints, then presses Ctrl-C (SIGINT) and expects a drained exit 0.

The demo's ports are fixed by the README, so this test holds the ctest
resource lock `readme_ports`; it fails, saying so, when something else
already listens there.
"""
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_support import kcat_consume  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEMO_PORTS = (9092, 9464)
# A fresh machine builds the release binary first; CI has built it already.
START_BOUND_S = 1200


def readme_demo_block():
    with open(os.path.join(REPO, "README.md")) as f:
        text = f.read()
    after = text.split("Try it with a legacy client", 1)[1]
    m = re.search(r"```sh\n(.*?)```", after, re.S)
    return m.group(1)


def port_in_use(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


class ReadmeDemo(unittest.TestCase):
    def test_run_sh_then_the_demo_lines(self):
        for port in DEMO_PORTS:
            self.assertFalse(port_in_use(port), f"127.0.0.1:{port} is taken; the README's demo needs it")
        log = tempfile.NamedTemporaryFile("w+", suffix=".log")
        proc = subprocess.Popen([os.path.join(REPO, "scripts", "run.sh")], cwd=REPO, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

        def text():
            log.flush()
            with open(log.name, errors="replace") as f:
                return f.read()

        try:
            deadline = time.time() + START_BOUND_S
            while time.time() < deadline and "ready: clients connect" not in text() and proc.poll() is None:
                time.sleep(0.2)
            self.assertIn("ready: clients connect to 127.0.0.1:9092", text(), text()[-3000:])

            block = readme_demo_block()
            self.assertIn("kcat", block)
            demo = subprocess.run(["bash", "-c", "set -euo pipefail\n" + block], cwd=REPO, capture_output=True,
                                  text=True, timeout=60)
            self.assertEqual(demo.returncode, 0, demo.stderr)
            # What the README promises the last line prints.
            self.assertRegex(demo.stdout, r"(?m)^produce_proxy_records_delivered_total 2$", demo.stdout)
            bootstrap = re.search(r"EMBEDDED mock cluster \(librdkafka\) at (\S+)", text()).group(1)
            self.assertEqual(sorted(kcat_consume(bootstrap, "demo")), [("k1", "hello"), ("k2", "world")])
            self.assertIsNone(proc.poll(), "the proxy died during the demo")

            proc.send_signal(signal.SIGINT)  # Ctrl-C
            self.assertEqual(proc.wait(timeout=60), 0, text()[-3000:])
            self.assertIn("drained: every accepted record was delivered", text())
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
