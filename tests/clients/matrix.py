#!/usr/bin/env python3
"""Runs every client of run_client.py against one bootstrap and prints a table.

  tests/clients/matrix.py --bootstrap HOST:PORT [--topic t] [--count 6]
      [--partitions 3] [--timeout-s 20] [--clients a,b,...] [-- run_client flags...]

One row per client: acked/count, exit code, wall time, first_error. For manual
checks (tests/clients/README.md keeps the last recorded matrix).
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run_client import CLIENTS  # noqa: E402


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
    a = ap.parse_args(argv)
    for c in a.clients.split(","):
        t0 = time.monotonic()
        p = subprocess.run([sys.executable, os.path.join(HERE, "run_client.py"), c, "--bootstrap", a.bootstrap,
                            "--topic", a.topic, "--count", str(a.count), "--partitions", str(a.partitions),
                            "--timeout-s", str(a.timeout_s)] + rest,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        lines = [l for l in p.stdout.splitlines() if l.strip()]
        s = json.loads(lines[-1]) if lines else {}
        print("%-22s %2s/%-2d rc=%d %5.1fs  %s" % (c, s.get("acked", "?"), a.count, p.returncode,
                                                   time.monotonic() - t0, s.get("first_error") or ""), flush=True)


if __name__ == "__main__":
    main()
