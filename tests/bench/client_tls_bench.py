#!/usr/bin/env python3
"""Client TLS on the listener, measured (docs/BENCHMARKS.md, "Client TLS").

In one run, on one box, against the test cluster (tests/broker):

  1. Throughput of 1 KiB records from the librdkafka load client
     (bench_rdkafka_producer, legacy mode: Produce v1, as the proxy's clients
     speak) through a proxy whose listener is TLS with required client
     certificates, against the same through a plaintext proxy. The two run in
     turns, `--reps` times each, `--seconds` each; the ratio is TLS over
     plaintext records/s, paired by repetition, and the proxy's CPU seconds
     per GB delivered is read from /proc for each.
  2. Handshakes per second against the TLS listener with `openssl s_time`:
     full handshakes (-new) and resumed sessions (-reuse), TLS 1.3 and 1.2.

Bounded: every run has its deadline and every process is stopped at the end.
Prints one JSON line per measurement and a summary line last.

    tests/bench/client_tls_bench.py --proxy build/release/daemon/produce-proxy \\
        --cluster build/release/tests/broker/test-cluster \\
        --load build/release/tests/bench/bench_rdkafka_producer
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "daemon"))
sys.path.insert(0, os.path.join(HERE, "..", "kafka"))
import daemon_support as ds  # noqa: E402
from test_pki import TestPki  # noqa: E402

TOPIC = "bench-tls"
PARTITIONS = 8


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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


def load_run(load, port, seconds, rdkafka_extra):
    args = [load, "--bootstrap", f"127.0.0.1:{port}", "--topic", TOPIC, "--record-bytes", "1024",
            "--duration-s", str(seconds), "--count", "100000000", "--legacy", "1", "--idempotence", "0",
            "--acks", "all"]
    if rdkafka_extra:
        args += ["--rdkafka", rdkafka_extra]
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy", required=True)
    parser.add_argument("--cluster", required=True)
    parser.add_argument("--load", required=True)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--handshake-seconds", type=int, default=5)
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="pp-tls-bench-")
    pki = TestPki(os.path.join(work, "pki"))
    listener = pki.leaf("listener", cn="localhost", san="DNS:localhost,IP:127.0.0.1")
    client = pki.leaf("bench-client", cn="bench-client", san="DNS:bench-client")
    cluster = ds.TestCluster(args.cluster, "--brokers", "1", "--topic", f"{TOPIC}:{PARTITIONS}",
                             "--retain-log-bytes", "1048576")
    tls = (f'[listener.tls]\nenabled = true\ncert_file = "{listener.cert}"\nkey_file = "{listener.key}"\n'
           f'ca_file = "{pki.ca_file}"\nclient_auth = "required"\n')
    plain_proxy, plain_port = start_proxy(args.proxy, cluster, "")
    tls_proxy, tls_port = start_proxy(args.proxy, cluster, tls)
    client_tls = (f"security.protocol=ssl,ssl.ca.location={pki.ca_file},ssl.certificate.location={client.cert},"
                  f"ssl.key.location={client.key}")
    results = {"plaintext": [], "tls": []}
    try:
        for rep in range(args.reps):
            for name, proxy, port, extra in (("plaintext", plain_proxy, plain_port, ""),
                                             ("tls", tls_proxy, tls_port, client_tls)):
                cpu0 = cpu_seconds(proxy.proc.pid)
                r = load_run(args.load, port, args.seconds, extra)
                r["proxy_cpu_s"] = cpu_seconds(proxy.proc.pid) - cpu0
                r["proxy_cpu_s_per_gb"] = r["proxy_cpu_s"] / (r["bytes"] / 1e9) if r["bytes"] else None
                r.update(case=name, rep=rep)
                print(json.dumps(r), flush=True)
                if r["failed"] or r["unsent"]:
                    raise RuntimeError(f"{name}: records failed: {r}")
                results[name].append(r)
        handshakes = {}
        for version in ("-tls1_3", "-tls1_2"):
            for mode in ("-new", "-reuse"):
                rate = s_time(tls_port, pki, client, mode, version, args.handshake_seconds)
                handshakes[f"{version[1:]}{mode}"] = rate
                print(json.dumps({"case": "handshakes", "version": version[1:], "mode": mode[1:],
                                  "per_s": rate}), flush=True)
    finally:
        for p in (plain_proxy, tls_proxy):
            p.stop()
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)

    ratios = [t["records_per_s"] / p["records_per_s"] for p, t in zip(results["plaintext"], results["tls"])]
    summary = {
        "summary": True,
        "plaintext_records_per_s": statistics.median(r["records_per_s"] for r in results["plaintext"]),
        "tls_records_per_s": statistics.median(r["records_per_s"] for r in results["tls"]),
        "ratio_median": statistics.median(ratios),
        "ratios": ratios,
        "plaintext_proxy_cpu_s_per_gb": statistics.median(r["proxy_cpu_s_per_gb"] for r in results["plaintext"]),
        "tls_proxy_cpu_s_per_gb": statistics.median(r["proxy_cpu_s_per_gb"] for r in results["tls"]),
        "handshakes_per_s": handshakes,
    }
    print(json.dumps(summary), flush=True)
    return 0 if summary["ratio_median"] >= 0.8 else 1


if __name__ == "__main__":
    sys.exit(main())
