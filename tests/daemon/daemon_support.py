"""What the tests of the built daemon share: free loopback ports, the
produce-proxy binary as a child process, HTTP probes and scrapes, RSS.

Stdlib only, run by /usr/bin/python3 (Debian's, which has the kafka modules).
Every wait is bounded; every process is killed at the end.
"""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time


_PORTS_GIVEN = set()


def free_port():
    """A port nothing listens on now, and one this process was not given
    before: the kernel may hand the same ephemeral port to two binds in a row
    once the first socket is closed (daemon_lifecycle_test once got the same
    port for listener.address and metrics.address)."""
    for _ in range(100):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _PORTS_GIVEN:
            _PORTS_GIVEN.add(port)
            return port
    raise RuntimeError("no fresh port in 100 tries")


class Proxy:
    """One produce-proxy process. `config_text` is written to a file, or
    `config_path` names one; `sets` are --set KEY=VALUE overrides;
    `wrapper` runs it under another program (valgrind and its options)."""

    def __init__(self, binary, config_text=None, config_path=None, sets=(), env=None, wrapper=()):
        self.dir = tempfile.TemporaryDirectory()
        if config_text is not None:
            config_path = os.path.join(self.dir.name, "produce-proxy.toml")
            with open(config_path, "w") as f:
                f.write(config_text)
        self.config = config_path
        args = [*wrapper, binary, "--config", config_path]
        for s in sets:
            args += ["--set", s]
        self.log = open(os.path.join(self.dir.name, "proxy.log"), "w+")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT,
                                     env={**os.environ, **(env or {})})

    def text(self):
        self.log.flush()
        with open(self.log.name, errors="replace") as f:
            return f.read()

    def wait_ready(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if "ready: clients connect" in self.text():
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.05)
        return False

    def alive(self):
        return self.proc.poll() is None

    def embedded_bootstrap(self):
        """The in-process mock cluster's address, from the start-up log."""
        m = re.search(r"EMBEDDED mock cluster \(librdkafka\) at (\S+)", self.text())
        return m.group(1) if m else None

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self, timeout=60, sig=signal.SIGTERM):
        """Signals the process and returns its exit code (None if it had to be killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
            return None


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_peak_rss(pid):
    """Resets VmHWM to the current VmRSS (Linux 4.0+, `5` to clear_refs), so
    VmHWM afterwards is the peak of what follows; False where not allowed."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def http_request(port, path, method="GET", timeout=5.0):
    """(status, body) of one request on a fresh connection, as a kubelet
    probe or a Prometheus scrape makes it."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path)
        resp = conn.getresponse()
        return resp.status, resp.read().decode(errors="replace")
    finally:
        conn.close()


def metric_value(text, name):
    """Sum of every series of `name` in a Prometheus text scrape (None if absent)."""
    total = None
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total = (total or 0) + float(line.rsplit(" ", 1)[1])
    return total


def scrape(port, name, timeout=5.0):
    status, body = http_request(port, "/metrics", timeout=timeout)
    if status != 200:
        raise AssertionError(f"GET /metrics answered {status}")
    return metric_value(body, name)


def wait_metric(port, name, want, timeout=30.0):
    """Scrapes until `name` equals `want`; returns the last value seen."""
    deadline = time.time() + timeout
    value = None
    while time.time() < deadline:
        value = scrape(port, name)
        if value == want:
            return value
        time.sleep(0.1)
    return value


def is_asan_build(binary):
    """ASan keeps freed memory in quarantine, so RSS says little there."""
    out = subprocess.run(["nm", "-D", binary], capture_output=True, text=True)
    return "__asan_init" in out.stdout or "__asan_init" in subprocess.run(
        ["nm", binary], capture_output=True, text=True).stdout


def kcat_produce(port, topic, lines, *extra, timeout=30):
    """kcat -P through the proxy; returns the CompletedProcess. kcat exits
    non-zero when a record is not delivered."""
    return subprocess.run(["timeout", str(timeout), "kcat", "-P", "-b", f"127.0.0.1:{port}", "-t", topic, *extra],
                          input="".join(l + "\n" for l in lines), capture_output=True, text=True)


def kcat_consume(bootstrap, topic, timeout=60):
    """Every record of `topic` as (key, value), read to the end."""
    out = subprocess.run(["timeout", str(timeout), "kcat", "-C", "-q", "-b", bootstrap, "-t", topic, "-o", "beginning",
                          "-e", "-f", "%k\t%s\n"], capture_output=True, text=True)
    return [tuple(line.split("\t", 1)) for line in out.stdout.splitlines() if line]


class TestCluster:
    """The test-cluster binary (tests/broker); control commands on its stdin,
    each answered `ok` or, for `stats`, one line of JSON."""

    def __init__(self, binary, *args):
        self.proc = subprocess.Popen([binary, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)
        line = self.proc.stdout.readline().strip()
        assert line.startswith("bootstrap="), line
        self.bootstrap = line.split("=", 1)[1]

    def command(self, text):
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        assert answer == "ok" or answer.startswith("{"), "%s: %s" % (text, answer)
        return answer

    def stats(self):
        return json.loads(self.command("stats"))

    def stop(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait(timeout=10)


def run_tests(module, *required_options, options=None):
    """A test file's __main__: parses --proxy and `required_options` (e.g.
    "--cluster") into module.ARGS, with the file's own `options(parser)`
    if given, then runs its unittest cases with the arguments left over."""
    import argparse
    import sys
    import unittest
    import warnings
    warnings.simplefilter("ignore", ResourceWarning)
    parser = argparse.ArgumentParser(add_help=False)
    for option in ("--proxy",) + required_options:
        parser.add_argument(option, required=True)
    if options is not None:
        options(parser)
    module.ARGS, rest = parser.parse_known_args()
    unittest.main(module=module, argv=[sys.argv[0]] + rest, verbosity=2, warnings="ignore")
