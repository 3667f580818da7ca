#!/usr/bin/env python3
"""No open relay, as an operator meets it: the built produce-proxy refuses a
client listener beyond loopback unless listener.allow_unauthenticated = true,
since it authenticates no client and produces upstream under its own
identity.

- --check-config on a file with listener.address = 0.0.0.0:PORT exits 2 and
  prints FILE:LINE:COLUMN with the reason and the fix; so does an address
  given by --set.
- Started with that file, the daemon exits 2 with the same message and opens
  neither the client port nor the metrics port.
- With allow_unauthenticated = true it starts (embedded upstream) and logs
  exactly one warning naming the risk and the address; on loopback it logs
  none.
- With --helm: the chart refuses to render such a listener without the
  allowance, and what it renders with it passes --check-config.

The one allowed listener binds 0.0.0.0 on an ephemeral port (127.x is
loopback and would not be the case under test); every connection this test
makes goes to 127.0.0.1.

usage: open_relay_test.py --proxy BINARY [--helm HELM --chart DIR] [unittest args]
"""
import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_support import Proxy, free_port, http_request  # noqa: E402

ARGS = None
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
REASON = (r'listener\.address = "{address}" is not loopback and the proxy does not authenticate its clients: an '
          r"open relay, where anyone who reaches the port produces to the upstream cluster under the proxy's "
          r"identity .*set listener\.allow_unauthenticated = true where a firewall or network policy restricts "
          r"who reaches the port")
WARNING = "is not loopback and clients are not authenticated"


def config(address, metrics_port, extra=""):
    """Embedded upstream; the listener address is on line 3."""
    return f"""[listener]
# the address under test
address = "{address}"
{extra}
[upstream]
bootstrap_servers = ["embedded"]
[metrics]
address = "127.0.0.1:{metrics_port}"
"""


def listening(port):
    """True when something accepts on 127.0.0.1:port."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def warning_lines(text):
    return [line for line in text.splitlines() if WARNING in line]


def finish(proxy):
    """Stops the process (killed if it hangs) and removes its files."""
    proxy.stop(5)
    proxy.log.close()
    proxy.dir.cleanup()


class OpenRelay(unittest.TestCase):
    def check_config(self, *args):
        return subprocess.run([ARGS.proxy, "--check-config", *args], capture_output=True, text=True, timeout=30)

    def test_check_config_refuses_a_listener_beyond_loopback(self):
        port = free_port()
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "relay.toml")
            with open(path, "w") as f:
                f.write(config(f"0.0.0.0:{port}", free_port()))
            out = self.check_config("--config", path)
            self.assertEqual(out.returncode, 2, out.stderr)
            self.assertRegex(out.stderr, "^" + re.escape(path) + ":3:11: " +
                             REASON.format(address=re.escape(f"0.0.0.0:{port}")) + "\n$")

            allowed = os.path.join(d, "allowed.toml")
            with open(allowed, "w") as f:
                f.write(config(f"0.0.0.0:{port}", free_port(), "allow_unauthenticated = true"))
            out = self.check_config("--config", allowed)
            self.assertEqual(out.returncode, 0, out.stderr)

            # From --set, the error points at the option.
            loopback = os.path.join(d, "loopback.toml")
            with open(loopback, "w") as f:
                f.write(config("127.0.0.1:0", free_port()))
            self.assertEqual(self.check_config("--config", loopback).returncode, 0)
            out = self.check_config("--config", loopback, "--set", "listener.address=[::]:9092")
            self.assertEqual(out.returncode, 2, out.stderr)
            self.assertRegex(out.stderr, r"^--set:1:18: " + REASON.format(address=re.escape("[::]:9092")) + "\n$")

    def test_the_daemon_refuses_to_start_and_opens_no_port(self):
        client, metrics = free_port(), free_port()
        proxy = Proxy(ARGS.proxy, config(f"0.0.0.0:{client}", metrics))
        try:
            code = proxy.proc.wait(timeout=30)
            text = proxy.text()
        finally:
            finish(proxy)
        self.assertEqual(code, 2, text)
        self.assertRegex(text, re.escape(proxy.config) + ":3:11: " +
                         REASON.format(address=re.escape(f"0.0.0.0:{client}")))
        self.assertNotIn("starting", text)
        self.assertFalse(listening(client), "the client port was opened")
        self.assertFalse(listening(metrics), "the metrics port was opened")

    def test_allowed_it_starts_and_warns_once(self):
        metrics = free_port()
        proxy = Proxy(ARGS.proxy, config("0.0.0.0:0", metrics, "allow_unauthenticated = true"))
        try:
            self.assertTrue(proxy.wait_ready(), proxy.text()[-3000:])
            status, _ = http_request(metrics, "/readyz")
            self.assertEqual(status, 200)
            # The ready line names the port the wildcard got; reach it on loopback only.
            m = re.search(r"clients connect to 0\.0\.0\.0:(\d+)", proxy.text())
            self.assertIsNotNone(m, proxy.text()[-3000:])
            self.assertTrue(listening(int(m.group(1))))
            time.sleep(0.5)  # anything logged just after ready is counted too
            code = proxy.stop(30)
            text = proxy.text()
        finally:
            finish(proxy)
        self.assertEqual(code, 0, text[-3000:])
        lines = warning_lines(text)
        self.assertEqual(len(lines), 1, text[-3000:])
        self.assertIn(" warning ", lines[0])
        self.assertIn("listener: 0.0.0.0:0 ", lines[0])
        self.assertIn("anyone who reaches this port produces to the upstream cluster under the proxy's identity",
                      lines[0])
        self.assertIn("open relay", lines[0])

    def test_on_loopback_there_is_no_warning(self):
        metrics = free_port()
        proxy = Proxy(ARGS.proxy, config("127.0.0.1:0", metrics))
        try:
            self.assertTrue(proxy.wait_ready(), proxy.text()[-3000:])
            code = proxy.stop(30)
            text = proxy.text()
        finally:
            finish(proxy)
        self.assertEqual(code, 0, text[-3000:])
        self.assertEqual(warning_lines(text), [])

    def test_the_chart_keeps_the_listener_on_loopback(self):
        if not ARGS.helm or not os.access(ARGS.helm, os.X_OK):
            self.skipTest("no --helm given")
        import yaml  # Debian's python3-yaml

        def render(*sets):
            args = [ARGS.helm, "template", "t", ARGS.chart]
            for s in sets:
                args += ["--set", s]
            return subprocess.run(args, capture_output=True, text=True, timeout=60)

        refused = render("config.listener.address=0.0.0.0:9092")
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("config.listener.address \"0.0.0.0:9092\" is not loopback", refused.stderr)
        self.assertIn("config.listener.allow_unauthenticated=true", refused.stderr)
        with tempfile.TemporaryDirectory() as d:
            for name, sets in {"default": (), "allowed": ("config.listener.address=0.0.0.0:9092",
                                                          "config.listener.allow_unauthenticated=true")}.items():
                out = render(*sets)
                self.assertEqual(out.returncode, 0, out.stderr)
                docs = [doc for doc in yaml.safe_load_all(out.stdout) if doc]
                toml = next(doc for doc in docs if doc["kind"] == "ConfigMap")["data"]["produce-proxy.toml"]
                path = os.path.join(d, name + ".toml")
                with open(path, "w") as f:
                    f.write(toml)
                check = self.check_config("--config", path)
                self.assertEqual(check.returncode, 0, f"{name}: {check.stderr}\n{toml}")
                if name == "default":
                    self.assertIn('address = "127.0.0.1:9092"', toml)


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
