#!/usr/bin/python3
"""Duplicates per 100,000 records after an upstream outage (issue 40), direct
and through produce-proxy, for 30 s, 75 s and 150 s outages, in one run.

  /usr/bin/python3 tests/bench/outage_duplicates.py [--proxy BIN] [--cluster BIN]
      [--outages 30:short,75:default,150:default] [--rate 2000] [--json FILE]

Each outage is the scenario of tests/e2e/outage_deadline_test.py: the test
cluster (3 brokers, a topic of 3 partitions per client) goes dark (every broker
`down`) while paced confluent-kafka producers run (`--rate` records/s each),
then comes back (`up`); the clients send 10 s more and drain. Clients, at once:
non-idempotent straight to the test cluster, and through the proxy
non-idempotent, legacy mode (Produce v1) and idempotent. "short" timeouts are
request.timeout.ms=5000, socket.timeout.ms=10000, message.timeout.ms=120000;
"default" are librdkafka 2.0.2's (30 s, 60 s, 300 s).

Prints a Markdown table of duplicates per 100,000 records sent (what goes into
docs/BENCHMARKS.md), then every run's full numbers. Takes about 7 minutes with
the default outages (each run: its outage + ~25 s).
"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))
import outage_support as s  # noqa: E402

LABELS = {"direct": "non-idempotent, straight to the cluster", "proxy": "non-idempotent, through the proxy",
          "legacy": "legacy mode (Produce v1), through the proxy", "idempotent": "idempotent, through the proxy"}
TIMEOUTS = {"short": s.SHORT_TIMEOUTS, "default": s.DEFAULT_TIMEOUTS}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--proxy", default=os.path.join(REPO, "build", "release", "daemon", "produce-proxy"))
    ap.add_argument("--cluster", default=os.path.join(REPO, "build", "release", "tests", "broker", "test-cluster"))
    ap.add_argument("--outages", default="30:short,75:default,150:default",
                    help="comma-separated SECONDS:short|default")
    ap.add_argument("--rate", type=int, default=2000, help="records/s offered by each client")
    ap.add_argument("--json", help="write every run's numbers here")
    a = ap.parse_args()
    runs = []
    for item in a.outages.split(","):
        secs, _, kind = item.partition(":")
        kind = kind or "short"
        if kind not in TIMEOUTS or not secs.isdigit() or int(secs) <= 0 or int(secs) > 600:
            ap.error("bad outage %r (SECONDS:short|default, 1-600 s)" % item)
        runs.append((int(secs), kind))

    print("proxy: %s (mtime %s)\ncluster: %s" % (a.proxy, os.path.getmtime(a.proxy), a.cluster), file=sys.stderr)
    results = []
    for secs, kind in runs:
        res = s.cluster_outage(a.proxy, a.cluster, secs, TIMEOUTS[kind], a.rate, tag="b%d%s" % (secs, kind[0]))
        label = "%d s outage, %s timeouts, %d records/s per client" % (secs, kind, a.rate)
        print(s.describe(res, label) + "\n", file=sys.stderr)
        results.append((secs, kind, res))

    head = ["client"] + ["%d s (%s timeouts)" % (secs, kind) for secs, kind, _ in results]
    lines = ["Duplicates per 100,000 records sent (%d records/s per client; test cluster, 3 brokers all down):" % a.rate,
             "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in LABELS:
        cells = []
        for _, _, res in results:
            r = next((r for r in res["rows"] if r["client"] == name), None)
            cells.append("-" if r is None else "{:,.0f}".format(r["per_100k"]))
        lines.append("| %s | %s |" % (LABELS[name], " | ".join(cells)))
    cells = []
    for _, _, res in results:
        m = res["metrics"]
        cells.append("%s / %s" % ("{:,.0f}".format(m[(s.DEADLINE_METRIC, "withdrawn")])
                                  if (s.DEADLINE_METRIC, "withdrawn") in m else "-",
                                  "{:,.0f}".format(m[(s.DEADLINE_METRIC, "in_flight")])
                                  if (s.DEADLINE_METRIC, "in_flight") in m else "-"))
    lines.append("| records answered at their deadline, withdrawn / in flight | %s |" % " | ".join(cells))
    lost = sum(r["lost_acked"] for _, _, res in results for r in res["rows"])
    lines += ["", "Acknowledged records lost: %d." % lost]
    print("\n".join(lines))
    if a.json:
        with open(a.json, "w") as f:
            json.dump([{"outage_s": secs, "timeouts": kind, "rate": a.rate, "rows": res["rows"],
                        "metrics": {"%s{outcome=%s}" % k: v for k, v in res["metrics"].items()},
                        "seconds": res["seconds"]} for secs, kind, res in results], f, indent=1)


if __name__ == "__main__":
    main()
