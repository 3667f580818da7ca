"""Shared pieces of the idempotent-client tests (issue 16): the test-cluster
binary with its control commands, a proxy in front of it, running a client of
tests/clients, and reading the upstream log back with kcat to check every
record exactly once, in per-partition order, at the offsets the client was told.
Every process is bounded in time; everything binds to 127.0.0.1."""
import argparse
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "daemon"))
from daemon_support import Proxy, TestCluster, free_port, http_request  # noqa: E402,F401

RUN_CLIENT = os.path.join(REPO, "tests", "clients", "run_client.py")


Cluster = TestCluster


def main(module):
    """Runs a test module's unittest cases; --proxy and --cluster go to module.ARGS."""
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--proxy", required=True)
    ap.add_argument("--cluster", required=True)
    module.ARGS, rest = ap.parse_known_args()
    unittest.main(module=module, argv=[sys.argv[0]] + rest, verbosity=2)


def start_proxy(binary, bootstrap, extra_sets=(), listen=None):
    listen = listen or free_port()
    metrics = free_port()
    while metrics == listen:
        metrics = free_port()
    servers = ",".join('"%s"' % b for b in bootstrap.split(","))
    proxy = Proxy(binary, config_text="""
[listener]
address = "127.0.0.1:%d"
[upstream]
bootstrap_servers = [%s]
request_timeout_ms = 5000
[producer]
delivery_timeout_ms = 120000
[metrics]
address = "127.0.0.1:%d"
[log]
level = "debug"
""" % (listen, servers, metrics), sets=list(extra_sets))
    if not proxy.wait_ready(timeout=60):
        text = proxy.text()
        proxy.stop()
        raise AssertionError("produce-proxy not ready:\n" + text[-4000:])
    proxy.listen_port, proxy.metrics_port = listen, metrics
    return proxy


def metric_sum(port, prefix):
    """Sum of every sample whose line starts with `prefix` (name and labels)."""
    status, body = http_request(port, "/metrics", timeout=10)
    assert status == 200
    return sum(float(l.rsplit(" ", 1)[1]) for l in body.splitlines() if l.startswith(prefix))


def run_client(client, bootstrap, topic, count, partitions, codec="none", extra=(), timeout_s=60):
    """run_client.py's per-record results (by i) and its summary."""
    cmd = [sys.executable, RUN_CLIENT, client, "--bootstrap", bootstrap, "--topic", topic, "--count", str(count),
           "--partitions", str(partitions), "--compression", codec, "--acks", "all", "--timeout-s", str(timeout_s)]
    for kv in extra:
        cmd += ["--extra", kv]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout_s + 90)
    lines = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
    if not lines or not lines[-1].get("done"):
        raise AssertionError("run_client.py %s gave no summary (exit %d): %s" % (client, p.returncode,
                                                                               p.stderr[-3000:]))
    return lines[:-1], lines[-1], p.stderr


def kcat_produce(bootstrap, topic, count, codec, extra=(), timeout_s=60):
    """kcat -P of keys k-0..k-(count-1), record i to partition i % 3 is not
    possible with kcat's line mode, so keys are hashed by librdkafka; order is
    checked per partition. Returns the CompletedProcess."""
    data = "".join("k-%d:v-%d\n" % (i, i) for i in range(count))
    cmd = ["timeout", "-k", "5", str(timeout_s), "kcat", "-P", "-b", bootstrap, "-t", topic, "-K:", "-z", codec,
           "-X", "enable.idempotence=true", "-X", "acks=all", *extra]
    return subprocess.run(cmd, input=data, capture_output=True, text=True)


def read_log(bootstrap, topic, timeout=60):
    """{partition: [(offset, key), ...]} of the upstream log, read to the end."""
    out = subprocess.run(["timeout", str(timeout), "kcat", "-C", "-q", "-b", bootstrap, "-t", topic, "-o",
                          "beginning", "-e", "-f", "%p\t%o\t%k\n"], capture_output=True, text=True)
    log = {}
    for line in out.stdout.splitlines():
        p, o, k = line.split("\t", 2)
        log.setdefault(int(p), []).append((int(o), k))
    return log


def log_problems(log, count, results=None):
    """Duplicates, losses, per-partition order and (with results) offsets the
    client was told that differ from the log's. Keys are k-<i>."""
    problems, where = [], {}
    for p, recs in sorted(log.items()):
        last = -1
        for offset, k in recs:
            i = int(k[2:]) if k.startswith("k-") and k[2:].isdigit() else None
            if i is None:
                problems.append("p%d@%d: unexpected key %r" % (p, offset, k))
                continue
            if i in where:
                problems.append("duplicate k-%d at p%d@%d and p%d@%d" % (i, *where[i], p, offset))
            where[i] = (p, offset)
            if i <= last:
                problems.append("p%d@%d: k-%d after k-%d (order broken)" % (p, offset, i, last))
            last = i
    missing = [i for i in range(count) if i not in where]
    if missing:
        problems.append("%d records missing, e.g. %s" % (len(missing), missing[:10]))
    for r in results or []:
        if r["error"] is None and r["i"] in where and (r["partition"], r["offset"]) != where[r["i"]]:
            problems.append("k-%d: the client was told p%d@%d, the log has p%d@%d" % (
                r["i"], r["partition"], r["offset"], *where[r["i"]]))
    return problems
