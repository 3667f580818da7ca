"""The built produce-proxy as the tests against real Kafka start and watch it.

Shared by the tests against real Kafka that start the proxy (it was copied
in each). Stdlib only.

    proxy, client_port, metrics_port = start_proxy(test, binary, lambda c, m: config_text)
    m = scrape_all(metrics_port); total(m, "upstream_auth_failures_total", reason="sasl_token")
    m = wait_metric(test, proxy, metrics_port, "upstream_auth_failures_total", 1, reason="tls_handshake")

Every wait is bounded in time; every proxy started is stopped by the test's
cleanups.
"""

import collections
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "daemon"))

from daemon_support import Proxy, free_port, http_request  # noqa: E402

SERIES = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)\s*$')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def plain_config(bootstrap, client_port, metrics_port, upstream="", producer=""):
    """A plaintext proxy config: the listener and metrics on 127.0.0.1, the
    upstream at `bootstrap`; `upstream` and `producer` are extra TOML lines
    for those sections."""
    return ('[listener]\naddress = "127.0.0.1:%d"\n'
            '[upstream]\nbootstrap_servers = ["%s"]\n%s\n'
            '[producer]\n%s\n'
            '[metrics]\naddress = "127.0.0.1:%d"\n') % (client_port, bootstrap, upstream, producer, metrics_port)


def proxy_env(env=None):
    """`env` plus leak checking for an ASan build, unless the caller set ASAN_OPTIONS."""
    env = dict(env or {})
    if "ASAN_OPTIONS" not in os.environ:
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1")
    return env


def start_proxy(test, binary, make_config, env=None, wait_ready=True, ready_timeout=90, stop_timeout=30):
    """Starts `binary` with make_config(client_port, metrics_port) on two free
    127.0.0.1 ports; the test's cleanups stop it and remove its files. With
    wait_ready, fails the test unless it gets ready in ready_timeout s."""
    client, metrics = free_port(), free_port()
    proxy = Proxy(binary, make_config(client, metrics), env=proxy_env(env))
    test.addCleanup(proxy.dir.cleanup)
    test.addCleanup(proxy.log.close)
    test.addCleanup(proxy.stop, stop_timeout)
    if wait_ready:
        test.assertTrue(proxy.wait_ready(ready_timeout), "the proxy did not get ready:\n" + proxy.text()[-4000:])
    return proxy, client, metrics


def parse_metrics(text):
    """{name: [(labels dict, value)]}"""
    out = collections.defaultdict(list)
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SERIES.match(line)
        if m:
            out[m.group(1)].append((dict(LABEL.findall(m.group(2) or "")), float(m.group(3))))
    return out


def scrape_all(port):
    status, body = http_request(port, "/metrics", timeout=5.0)
    if status != 200:
        raise AssertionError("GET /metrics answered %d" % status)
    return parse_metrics(body)


def try_scrape(port):
    """scrape_all, or {} while the metrics listener is not up (yet)."""
    try:
        return scrape_all(port)
    except (OSError, AssertionError):
        return {}


def total(metrics, name, **labels):
    """The sum of produce_proxy_<name> over the series whose labels match."""
    return sum(v for l, v in metrics.get("produce_proxy_" + name, [])
               if all(l.get(k) == w for k, w in labels.items()))


def by_label(metrics, name, label, **match):
    out = {}
    for l, v in metrics.get("produce_proxy_" + name, []):
        if all(l.get(k) == w for k, w in match.items()):
            out[l.get(label)] = out.get(l.get(label), 0) + v
    return out


def auth_failures(metrics_port):
    """{(broker, reason): count} of upstream_auth_failures_total, one scrape."""
    return {(l.get("broker"), l.get("reason")): v
            for l, v in scrape_all(metrics_port).get("produce_proxy_upstream_auth_failures_total", [])}


def wait_metric(test, proxy, metrics_port, name, at_least, timeout=60, **labels):
    """Scrapes until total(name, labels) >= at_least (then returns the
    scrape) or fails the test after `timeout` s or when the proxy exits."""
    deadline = time.monotonic() + timeout
    seen = {}
    while time.monotonic() < deadline and proxy.alive():
        seen = try_scrape(metrics_port)
        if total(seen, name, **labels) >= at_least:
            return seen
        time.sleep(0.2)
    test.fail("%s%s stayed below %s (last %s):\n%s" % (name, labels or "", at_least, total(seen, name, **labels),
                                                        proxy.text()[-3000:]))
