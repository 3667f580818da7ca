#!/usr/bin/env python3
"""Client TLS on the listener, measured (docs/BENCHMARKS.md, "Client TLS").

In one run, on one box, against the test cluster (tests/broker):

  1. Throughput of 1 KiB records from the librdkafka load client
     (bench_rdkafka_producer, legacy mode: Produce v1, as the proxy's clients
     speak) through a proxy whose listener is TLS with required client
     certificates, against the same through a plaintext proxy. The two run in
     turns, `--reps` times each, `--seconds` each, the order rotated from one
     repetition to the next; the ratio is TLS over plaintext records/s,
     paired by repetition. CPU seconds per GB delivered are read for the
     proxy and the test cluster from /proc, and for the load client from its
     own report, so what TLS costs each process on the shared box shows.
  2. Handshakes per second against the TLS listener with `openssl s_time`:
     full handshakes (-new) and resumed sessions (-reuse), TLS 1.3 and 1.2.

`--proxy` may be given several times as LABEL=PATH (two builds, e.g. before
and after a change): each repetition then runs every build's pair, builds in
rotated order, against the same cluster, and every build gets its own ratios.
`--perf-dir DIR` records `perf record -g` of the proxy (and, with
`--perf-client`, of the load client) for each run into DIR.

Bounded: every run has its deadline and every process is stopped at the end.
Prints one JSON line per measurement and a summary line per build last; exits
1 when the last build's median ratio misses the goal.

    tests/bench/client_tls_bench.py --proxy build/release/daemon/produce-proxy \\
        --cluster build/release/tests/broker/test-cluster \\
        --load build/release/tests/bench/bench_rdkafka_producer
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "daemon"))
sys.path.insert(0, os.path.join(HERE, "..", "kafka"))
import daemon_support as ds  # noqa: E402
from test_pki import TestPki  # noqa: E402

TOPIC = "bench-tls"
PARTITIONS = 8
GOAL = 0.8
CASES = ("plaintext", "tls")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def per_gb(seconds, nbytes):
    return seconds / (nbytes / 1e9) if nbytes and seconds is not None else None


def start_proxy(binary, cluster, tls_section):
    port, metrics_port = ds.free_port(), ds.free_port()
    proxy = ds.Proxy(binary, f"""
[listener]
address = "127.0.0.1:{port}"
[upstream]
bootstrap_servers = ["{cluster.bootstrap}"]
[metrics]
address = "127.0.0.1:{metrics_port}"
{tls_section}
""")
    if not proxy.wait_ready():
        raise RuntimeError(proxy.text())
    return proxy, port


PERF_CALL_GRAPH = ["-g"]  # --perf-call-graph dwarf: through libraries built without frame pointers


def perf_start(out, pid=None, command=None):
    """perf record, of a running pid or wrapping a command; None: no perf."""
    if out is None:
        return None, command
    args = ["/usr/bin/perf", "record", "-q", *PERF_CALL_GRAPH, "-o", out]
    if pid is not None:
        return subprocess.Popen([*args, "-p", str(pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), command
    return None, [*args, "--", *command]


def perf_stop(proc):
    if proc is None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def load_run(load, port, seconds, rdkafka_extra, perf_client_out):
    args = [load, "--bootstrap", f"127.0.0.1:{port}", "--topic", TOPIC, "--record-bytes", "1024",
            "--duration-s", str(seconds), "--count", "100000000", "--legacy", "1", "--idempotence", "0",
            "--acks", "all"]
    if rdkafka_extra:
        args += ["--rdkafka", rdkafka_extra]
    _, args = perf_start(perf_client_out, command=args)
    out = subprocess.run(["timeout", str(seconds + 90), *args], capture_output=True, text=True)
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    if not lines:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(lines[-1])


def s_time(port, pki, client, mode, version, seconds):
    # -www makes s_time send a request and read to the close, so a TLS 1.3
    # client has read the session tickets before it reconnects with them; the
    # proxy closes at the request, which is no Kafka frame.
    args = ["openssl", "s_time", "-connect", f"127.0.0.1:{port}", "-www", "/", mode, "-time", str(seconds),
            "-CAfile", pki.ca_file, "-cert", client.cert, "-key", client.key, version]
    out = subprocess.run(["timeout", str(seconds + 30), *args], capture_output=True, text=True)
    m = re.findall(r"(\d+) connections in (\d+) real seconds", out.stdout)
    if not m:
        raise RuntimeError(out.stdout[-2000:] + out.stderr[-2000:])
    connections, real = map(int, m[-1])
    return connections / max(real, 1)


def parse_proxies(values):
    builds = []
    for v in values:
        label, sep, path = v.partition("=")
        builds.append((label, path) if sep else (os.path.basename(os.path.dirname(os.path.dirname(v))) or "proxy", v))
    if len({label for label, _ in builds}) != len(builds):
        raise SystemExit("--proxy labels must differ: give LABEL=PATH")
    return builds


def one_run(args, build, case, proxy, port, extra, cluster, rep):
    perf_dir = args.perf_dir
    stem = os.path.join(perf_dir, f"{build}-{case}-{rep}") if perf_dir else None
    cpu0, cluster0 = cpu_seconds(proxy.proc.pid), cpu_seconds(cluster.proc.pid)
    perf, _ = perf_start(stem + ".proxy.data" if stem else None, pid=proxy.proc.pid)
    try:
        r = load_run(args.load, port, args.seconds, extra,
                     stem + ".client.data" if stem and args.perf_client else None)
    finally:
        perf_stop(perf)
    r["proxy_cpu_s"] = cpu_seconds(proxy.proc.pid) - cpu0
    r["cluster_cpu_s"] = cpu_seconds(cluster.proc.pid) - cluster0
    for who in ("proxy_cpu_s", "cluster_cpu_s", "cpu_s"):  # cpu_s: the load client's own
        r[f"{who}_per_gb"] = per_gb(r.get(who), r["bytes"])
    r.update(build=build, case=case, rep=rep)
    print(json.dumps(r), flush=True)
    if r["failed"] or r["unsent"]:
        raise RuntimeError(f"{build} {case}: records failed: {r}")
    return r


def summarize(build, runs, handshakes):
    plain = {r["rep"]: r for r in runs if r["case"] == "plaintext"}
    tls = {r["rep"]: r for r in runs if r["case"] == "tls"}
    reps = sorted(set(plain) & set(tls))
    ratios = [tls[k]["records_per_s"] / plain[k]["records_per_s"] for k in reps]

    def med(case_runs, key):
        vals = [r[key] for r in case_runs.values() if r.get(key) is not None]
        return statistics.median(vals) if vals else None

    out = {"summary": True, "build": build,
           "plaintext_records_per_s": med(plain, "records_per_s"), "tls_records_per_s": med(tls, "records_per_s"),
           "ratio_median": statistics.median(ratios) if ratios else None, "ratios": ratios,
           "handshakes_per_s": handshakes}
    for key, name in (("proxy_cpu_s_per_gb", "proxy"), ("cluster_cpu_s_per_gb", "cluster"),
                      ("cpu_s_per_gb", "client")):
        out[f"plaintext_{name}_cpu_s_per_gb"] = med(plain, key)
        out[f"tls_{name}_cpu_s_per_gb"] = med(tls, key)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy", required=True, action="append", help="PATH or LABEL=PATH; repeatable")
    parser.add_argument("--cluster", required=True)
    parser.add_argument("--load", required=True)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--handshake-seconds", type=int, default=5)
    parser.add_argument("--no-handshakes", action="store_true")
    parser.add_argument("--perf-dir", help="perf record -g of the proxy for every run, into this directory")
    parser.add_argument("--perf-client", action="store_true", help="with --perf-dir: the load client too")
    parser.add_argument("--perf-call-graph", choices=("fp", "dwarf"), default="fp")
    parser.add_argument("--only", choices=CASES, help="run this case alone (profiling)")
    args = parser.parse_args()
    if args.perf_call_graph == "dwarf":
        PERF_CALL_GRAPH[:] = ["--call-graph", "dwarf,16384"]
    builds = parse_proxies(args.proxy)
    if args.perf_dir:
        os.makedirs(args.perf_dir, exist_ok=True)

    work = tempfile.mkdtemp(prefix="pp-tls-bench-")
    pki = TestPki(os.path.join(work, "pki"))
    listener = pki.leaf("listener", cn="localhost", san="DNS:localhost,IP:127.0.0.1")
    client = pki.leaf("bench-client", cn="bench-client", san="DNS:bench-client")
    cluster = ds.TestCluster(args.cluster, "--brokers", "1", "--topic", f"{TOPIC}:{PARTITIONS}",
                             "--retain-log-bytes", "1048576")
    tls = (f'[listener.tls]\nenabled = true\ncert_file = "{listener.cert}"\nkey_file = "{listener.key}"\n'
           f'ca_file = "{pki.ca_file}"\nclient_auth = "required"\n')
    client_tls = (f"security.protocol=ssl,ssl.ca.location={pki.ca_file},ssl.certificate.location={client.cert},"
                  f"ssl.key.location={client.key}")
    proxies = {}
    runs = {label: [] for label, _ in builds}
    handshakes = {label: {} for label, _ in builds}
    try:
        for label, path in builds:
            proxies[(label, "plaintext")] = start_proxy(path, cluster, "")
            proxies[(label, "tls")] = start_proxy(path, cluster, tls)
        for rep in range(args.reps):
            order = builds[rep % len(builds):] + builds[:rep % len(builds)]
            for label, _ in order:
                cases = CASES if rep % 2 == 0 else tuple(reversed(CASES))
                cases = (args.only,) if args.only else cases
                for case in cases:
                    proxy, port = proxies[(label, case)]
                    runs[label].append(one_run(args, label, case, proxy, port, client_tls if case == "tls" else "",
                                               cluster, rep))
        for label, _ in ([] if args.no_handshakes else builds):
            _, port = proxies[(label, "tls")]
            for version in ("-tls1_3", "-tls1_2"):
                for mode in ("-new", "-reuse"):
                    rate = s_time(port, pki, client, mode, version, args.handshake_seconds)
                    handshakes[label][f"{version[1:]}{mode}"] = rate
                    print(json.dumps({"case": "handshakes", "build": label, "version": version[1:],
                                      "mode": mode[1:], "per_s": rate}), flush=True)
    finally:
        for p, _ in proxies.values():
            p.stop()
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)

    summaries = [summarize(label, runs[label], handshakes[label]) for label, _ in builds]
    for s in summaries:
        print(json.dumps(s), flush=True)
    last = summaries[-1]["ratio_median"]
    return 0 if last is not None and last >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
