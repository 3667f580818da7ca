#!/usr/bin/python3
"""ack = "spool" against ack = "upstream" in one run, same box, same test
cluster (docs/BENCHMARKS.md, "Spool"): throughput and acknowledgement
latency of 1 KiB records, fsync = "group" against fsync = "always".

  /usr/bin/python3 tests/bench/spool_bench.py [--build DIR] [--secs 8] [--reps 3]
      [--rate 2000] [--spool-root DIR] [--json FILE] [--cases upstream,spool_group]
      [--baseline PROXY_BINARY]

Cases, each its own produce-proxy in front of one test cluster (3 brokers, a
topic of 16 partitions), measured one at a time, order rotated per repetition:

  upstream      ack = "upstream", no spool
  spool_group   ack = "spool", fsync = "group" (fsync_interval_ms 2)
  spool_always  ack = "spool", fsync = "always"

`--baseline` adds, for each spool case, the same case run by another
produce-proxy binary (`<case>_base`: the build before a change), in the
same repetitions, so before and after are measured against the same
upstream runs on the same box.

Per case and repetition: bench_rdkafka_producer closed loop (records/s
acknowledged, p50/p99 of produce-to-acknowledgement), then bench_open_loop
at a fixed `--rate` (p50/p99 counted from each record's due time). In spool
mode a record is acknowledged from the spool and delivered afterwards, so
the spool is waited empty before the next run, and "delivered/s" is the
records over the time until it was. Prints a Markdown table (medians over
repetitions, ratios against upstream in the same repetition) for
docs/BENCHMARKS.md. Never fails on a number; every process it starts is
stopped; everything listens on 127.0.0.1. Spool segments go to
`--spool-root` (default: a directory under /tmp, this box's root disk).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))
import spool_support as s  # noqa: E402

CASES = {
    "upstream": None,
    "spool_group": {"fsync": "group", "fsync_interval_ms": 2},
    "spool_always": {"fsync": "always"},
}


def run_tool(cmd, timeout):
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    if out.returncode != 0 or not lines:
        return {"error": (out.stderr or out.stdout)[-500:]}
    return json.loads(lines[-1])


def drain(proxy, timeout=300):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        v = proxy.scrape("produce_proxy_spool_records")
        if v in (0, None):
            return time.monotonic() - t0
        time.sleep(0.05)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build", "release"))
    ap.add_argument("--secs", type=float, default=8)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rate", type=int, default=2000, help="open-loop records/s")
    ap.add_argument("--count", type=int, default=400000)
    ap.add_argument("--spool-root", default=None)
    ap.add_argument("--json")
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated, of: " + ", ".join(CASES))
    ap.add_argument("--baseline", help="a produce-proxy binary to run the spool cases with too, as <case>_base")
    a = ap.parse_args()
    b = a.build
    cases = {}
    for name in a.cases.split(","):
        if name not in CASES:
            raise SystemExit("unknown case %s" % name)
        cases[name] = CASES[name]
    if "upstream" not in cases:
        cases = {"upstream": None, **cases}
    binaries = {name: None for name in cases}
    if a.baseline:
        for name in list(cases):
            if cases[name] is not None:
                cases[name + "_base"] = cases[name]
                binaries[name + "_base"] = a.baseline
    proxy_bin, cluster_bin = b + "/daemon/produce-proxy", b + "/tests/broker/test-cluster"
    rdk, open_loop = b + "/tests/bench/bench_rdkafka_producer", b + "/tests/bench/bench_open_loop"
    work = tempfile.mkdtemp(prefix="pp-spool-bench-", dir=a.spool_root)
    cluster = s.TestCluster(cluster_bin, "--brokers", "3", "--topic", "sb:16", "--seed", "1",
                            "--retain-log-bytes", str(64 << 20))
    proxies = {}
    results = []
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load0 = os.getloadavg()
    try:
        for name, conf in cases.items():
            spool = None
            if conf is not None:
                spool = {"dir": os.path.join(work, name), "ack": "spool", **conf}
            p = s.SpoolProxy(binaries[name] or proxy_bin, cluster.bootstrap, work, spool=spool, name=name,
                             extra="[shutdown]\ndrain_timeout_ms = 3000\n")
            p.start()
            if not p.wait_log("ready: clients connect", 60):
                raise SystemExit("%s not ready:\n%s" % (name, p.log_text()[-2000:]))
            proxies[name] = p
        names = list(cases)
        # Warm-up, not recorded: the cluster's and proxies' first seconds.
        for name in names:
            run_tool([rdk, "--bootstrap", proxies[name].bootstrap, "--topic", "sb", "--acks", "all",
                      "--count", "50000", "--duration-s", "2"], 120)
            drain(proxies[name])
        for rep in range(a.reps):
            order = names[rep % len(names):] + names[:rep % len(names)]
            for name in order:
                p = proxies[name]
                t0 = time.monotonic()
                closed = run_tool([rdk, "--bootstrap", p.bootstrap, "--topic", "sb", "--acks", "all",
                                   "--record-bytes", "1024", "--count", str(a.count), "--duration-s",
                                   str(a.secs)], a.secs + 120)
                acked_s = time.monotonic() - t0
                left_s = drain(p)
                delivered_s = None if left_s is None else acked_s + left_s
                opened = run_tool([open_loop, "--bootstrap", p.bootstrap, "--topic", "sb", "--acks", "all",
                                   "--rate", str(a.rate), "--duration-s", str(a.secs), "--record-bytes", "1024",
                                   "--linger-ms", "1", "--rdkafka", "socket.nagle.disable=true"], a.secs + 120)
                drain(p)
                row = {"case": name, "rep": rep, "closed": closed, "open": opened, "delivered_s": delivered_s,
                       "closed_wall_s": acked_s}
                s.say("%s rep %d: %.0f records/s, p50 %.2f p99 %.2f ms; open loop at %d/s p50 %.2f p99 %.2f ms",
                      name, rep, closed.get("records_per_s", 0), closed.get("p50_ms", 0), closed.get("p99_ms", 0),
                      a.rate, opened.get("p50_ms", 0), opened.get("p99_ms", 0))
                results.append(row)
    finally:
        for p in proxies.values():
            p.terminate(timeout=30)
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)

    def med(case, f):
        vals = [f(r) for r in results if r["case"] == case and f(r) is not None]
        return statistics.median(vals) if vals else None

    def ratio(case, f):
        vals = []
        for rep in range(a.reps):
            x = [f(r) for r in results if r["case"] == case and r["rep"] == rep]
            u = [f(r) for r in results if r["case"] == "upstream" and r["rep"] == rep]
            if x and u and x[0] is not None and u[0]:
                vals.append(x[0] / u[0])
        return statistics.median(vals) if vals else None

    def fmt(v, spec="{:,.0f}"):
        return "-" if v is None else spec.format(v)

    rps = lambda r: r["closed"].get("records_per_s")  # noqa: E731
    dps = lambda r: (r["closed"].get("records", 0) / r["delivered_s"]) if r["delivered_s"] else None  # noqa: E731
    lines = ["Run of %s, %d repetitions of %g s, 1 KiB records, 16 partitions, acks=all, load average %.1f at the "
             "start, %.1f at the end; medians, ratios against upstream in the same repetition." % (
                 started, a.reps, a.secs, load0[0], os.getloadavg()[0]), "",
             "| case | records/s acknowledged | ratio | delivered/s | closed-loop p50 / p99 | open loop at %s/s: "
             "p50 / p99 | p50 ratio | p99 ratio |" % "{:,}".format(a.rate), "|---|---:|---:|---:|---|---|---:|---:|"]
    for name in cases:
        lines.append("| %s | %s | %s | %s | %s / %s ms | %s / %s ms | %s | %s |" % (
            name, fmt(med(name, rps)), fmt(ratio(name, rps), "{:.2f}"), fmt(med(name, dps)),
            fmt(med(name, lambda r: r["closed"].get("p50_ms")), "{:.2f}"),
            fmt(med(name, lambda r: r["closed"].get("p99_ms")), "{:.2f}"),
            fmt(med(name, lambda r: r["open"].get("p50_ms")), "{:.2f}"),
            fmt(med(name, lambda r: r["open"].get("p99_ms")), "{:.2f}"),
            fmt(ratio(name, lambda r: r["open"].get("p50_ms")), "{:.2f}"),
            fmt(ratio(name, lambda r: r["open"].get("p99_ms")), "{:.2f}")))
    print("\n".join(lines))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
