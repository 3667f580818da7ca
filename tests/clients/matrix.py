#!/usr/bin/env python3
"""Runs every client of run_client.py against one bootstrap and prints a table.

  tests/clients/matrix.py --bootstrap HOST:PORT [--topic t] [--count 6]
      [--partitions 3] [--timeout-s 20] [--clients a,b,...]
      [--proxy-metrics HOST:PORT] [-- run_client flags...]

One row per client: acked/count, exit code, wall time, first_error. With
--proxy-metrics (the bootstrap is a produce-proxy; its metrics.address), also
the Produce and Metadata versions the client negotiated through it, from the
proxy's client_requests_total counter before and after the client ran. For
manual checks (tests/clients/README.md keeps the last recorded matrix).
"""
import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run_client import CLIENTS  # noqa: E402


def negotiated(metrics_address):
    """{api: {version: count}} of the proxy's client_requests_total, for Produce and Metadata."""
    with urllib.request.urlopen("http://%s/metrics" % metrics_address, timeout=10) as r:
        body = r.read().decode()
    out = {"Produce": {}, "Metadata": {}}
    for line in body.splitlines():
        if not line.startswith("produce_proxy_client_requests_total{"):
            continue
        for api in out:
            if 'api="%s"' % api in line:
                version = int(line.split('version="', 1)[1].split('"', 1)[0])
                out[api][version] = float(line.rsplit(" ", 1)[1])
    return out


def grown(before, after):
    return "/".join("v%d" % v for v in sorted(after) if after[v] > before.get(v, 0)) or "-"


def main():
    argv = sys.argv[1:]
    rest = []
    if "--" in argv:
        rest = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", default="t")
    ap.add_argument("--count", type=int, default=6)
    ap.add_argument("--partitions", type=int, default=3)
    ap.add_argument("--timeout-s", type=float, default=20)
    ap.add_argument("--clients", default=",".join(CLIENTS))
    ap.add_argument("--proxy-metrics", help="HOST:PORT of the proxy's metrics, to show negotiated versions")
    a = ap.parse_args(argv)
    for c in a.clients.split(","):
        before = negotiated(a.proxy_metrics) if a.proxy_metrics else None
        t0 = time.monotonic()
        p = subprocess.run([sys.executable, os.path.join(HERE, "run_client.py"), c, "--bootstrap", a.bootstrap,
                            "--topic", a.topic, "--count", str(a.count), "--partitions", str(a.partitions),
                            "--timeout-s", str(a.timeout_s)] + rest,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        lines = [l for l in p.stdout.splitlines() if l.strip()]
        s = json.loads(lines[-1]) if lines else {}
        versions = ""
        if before is not None:
            after = negotiated(a.proxy_metrics)
            versions = "Produce %-7s Metadata %-7s " % (grown(before["Produce"], after["Produce"]),
                                                       grown(before["Metadata"], after["Metadata"]))
        print("%-22s %2s/%-2d rc=%d %5.1fs  %s%s" % (c, s.get("acked", "?"), a.count, p.returncode,
                                                     time.monotonic() - t0, versions, s.get("first_error") or ""),
              flush=True)


if __name__ == "__main__":
    main()
