#!/usr/bin/python3
"""The pictures of docs/operations.md, rendered from a real run: the release
produce-proxy in front of the test cluster, scraped every second by Debian's
Prometheus, queried back over its HTTP API and plotted with matplotlib.

    tests/bench/operations_pictures.py [--out docs/img]

Writes leader-change.png (a partition's leader moves to a broker without
KIP-1269 and back: its window drops to 5 and is learned again) and
stalled-upstream.png (every broker goes down under load with a 16 MiB
budget: the budget fills, reads pause, requests wait and are answered by
their deadline; then the brokers come back).

Needs: Debian's prometheus and python3-matplotlib (apt-get install -y
prometheus python3-matplotlib; run with /usr/bin/python3, which sees
Debian's packages), kcat, and the release build (build/release/daemon/
produce-proxy, build/release/tests/broker/test-cluster). Everything listens on
127.0.0.1; every loop is bounded; every process started here is stopped by
its pid on exit; Prometheus's data goes to a temporary directory, removed
at the end.
"""
import argparse
import json
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROXY = ROOT / "build/release/daemon/produce-proxy"
CLUSTER = ROOT / "build/release/tests/broker/test-cluster"
CONFIG = ROOT / "config/produce-proxy.example.toml"
MIB = 1024 * 1024
LC_RATE, LC_BATCH = 6000, 65536  # leader change: enough load to fill a window of 20 at 200 ms RTT
started = []
LEGEND = {"loc": "upper left", "bbox_to_anchor": (1.01, 1), "fontsize": 8, "frameon": False}


def log(msg):
    print(f"pictures: {msg}", file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc, timeout=10):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


class Cluster:
    def __init__(self, work, args):
        self.proc = subprocess.Popen([str(CLUSTER), "--seed", "1", "--retain-log-bytes", str(64 * MIB), *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=open(work / "cluster.err", "w"), text=True)
        started.append(self.proc)
        line = self.proc.stdout.readline()
        if not line.startswith("bootstrap="):
            raise SystemExit(f"test cluster did not start: {line!r}")
        self.bootstrap = line.strip().split("=", 1)[1]

    def command(self, cmd):
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        log(f"cluster: {cmd} -> {answer}")
        return answer


class Proxy:
    def __init__(self, work, bootstrap, metrics_port, sets):
        servers = ",".join(f'"{s}"' for s in bootstrap.split(","))
        self.log_path = work / f"proxy.{metrics_port}.log"
        args = [str(PROXY), "--config", str(CONFIG), "--set", f"upstream.bootstrap_servers=[{servers}]",
                "--set", "listener.address=127.0.0.1:0", "--set", f"metrics.address=127.0.0.1:{metrics_port}",
                "--set", "shutdown.drain_timeout_ms=2000"]
        for s in sets:
            args += ["--set", s]
        self.proc = subprocess.Popen(args, stdout=open(self.log_path, "w"), stderr=subprocess.STDOUT)
        started.append(self.proc)
        for _ in range(150):
            m = re.search(r"ready: clients connect to (\S+),", self.log_path.read_text())
            if m:
                self.addr = m.group(1)
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise SystemExit(f"proxy did not become ready: {self.log_path.read_text()[-500:]}")


class PacedKcat:
    """kcat -P fed `rate` records/s of 1 KiB from a thread, until stopped or
    `max_s` seconds have passed."""

    def __init__(self, addr, topic, rate, max_s, legacy=False):
        args = ["kcat", "-P", "-b", addr, "-t", topic, "-X", "linger.ms=5", "-X", "acks=all"]
        if legacy:
            args += ["-X", "api.version.request=false", "-X", "broker.version.fallback=0.9.0.1"]
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)
        started.append(self.proc)
        self.done = threading.Event()
        per_tick = max(1, rate // 40)
        chunk = (b"r" * 1023 + b"\n") * per_tick

        def feed():
            t0 = time.monotonic()
            for tick in range(int(max_s * 40)):
                if self.done.is_set():
                    break
                try:
                    self.proc.stdin.write(chunk)
                    self.proc.stdin.flush()
                except (BrokenPipeError, ValueError):
                    break
                delay = t0 + (tick + 1) / 40 - time.monotonic()
                if delay > 0:
                    self.done.wait(delay)

        self.thread = threading.Thread(target=feed)
        self.thread.start()

    def stop(self):
        self.done.set()
        self.thread.join()
        self.proc.kill()  # what kcat still queues does not matter here
        self.proc.wait()


class Prometheus:
    def __init__(self, work, targets):
        self.port = free_port()
        self.dir = work / "prometheus"
        self.dir.mkdir()
        config = self.dir / "prometheus.yml"
        config.write_text("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
                          "  - job_name: produce-proxy\n    static_configs:\n"
                          f"      - targets: {json.dumps(targets)}\n")
        self.proc = subprocess.Popen(
            ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={self.dir / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--storage.tsdb.retention.time=1d"],
            stdout=open(work / "prometheus.log", "w"), stderr=subprocess.STDOUT)
        started.append(self.proc)
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=1)
                return
            except OSError:
                time.sleep(0.2)
        raise SystemExit("prometheus did not become ready")

    def wait_scraped(self, target, timeout_s=20):
        for _ in range(int(timeout_s * 5)):
            if self.range(f'up{{instance="{target}"}} == 1', time.time() - 5, time.time()):
                return
            time.sleep(0.2)
        raise SystemExit(f"prometheus does not scrape {target}")

    def range(self, query, start, end):
        """[(label dict, [(t, value)])] of a range query, 1 s steps."""
        q = urllib.parse.urlencode({"query": query, "start": start, "end": end, "step": "1s"})
        body = json.load(urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/v1/query_range?{q}", timeout=10))
        if body["status"] != "success":
            raise SystemExit(f"query {query}: {body}")
        return [(r["metric"], [(float(t), float(v)) for t, v in r["values"]]) for r in body["data"]["result"]]


def series(prom, query, t0, t1, label=None):
    """One line per result: (legend, xs relative to t0, ys)."""
    out = []
    for metric, values in prom.range(query, t0, t1):
        name = metric.get(label, "") if label else ""
        out.append((name, [t - t0 for t, _ in values], [v for _, v in values]))
    return out


def mark(axes, events, t0, on=0, y=1.0):
    """Dotted lines at the events, labelled on axes[on] at height y (axes fraction)."""
    for ax in axes:
        for t, _ in events:
            ax.axvline(t - t0, color="grey", linestyle=":", linewidth=1)
    for t, text in events:
        axes[on].annotate(text, xy=(t - t0, y), xycoords=("data", "axes fraction"), xytext=(3, -3),
                         textcoords="offset points", fontsize=8, va="top", rotation=0, color="dimgrey")


def leader_change(work, prom_targets):
    """Topic lc, RETAIN 20, 4 partitions, 200 ms RTT; broker 3 is legacy
    (no KIP-1269, window 5). Partition 0 moves 1 -> 3 (legacy) -> 1, then
    2 (a move between KIP-1269 brokers)."""
    cluster = Cluster(work, ["--brokers", "3", "--legacy-brokers", "1", "--topic", "lc:4:20", "--rtt-ms", "200"])
    port = prom_targets["leader"]
    proxy = Proxy(work, cluster.bootstrap, port, ["producer.max_in_flight_per_connection=256",
                                                  f"producer.batch_bytes={LC_BATCH}"])
    return cluster, proxy


def run_leader_change(work, prom, port, out):
    cluster, proxy = leader_change(work, {"leader": port})
    try:
        prom.wait_scraped(f"127.0.0.1:{port}")
        load = PacedKcat(proxy.addr, "lc", LC_RATE, 120)
        t0 = time.time()
        events = []
        time.sleep(15)
        for cmd, label, pause in (("leader lc 0 3", "leader to broker 3\n(no KIP-1269)", 15),
                                  ("leader lc 0 1", "leader back\nto broker 1", 15),
                                  ("leader lc 0 2", "leader to\nbroker 2", 15)):
            events.append((time.time(), label))
            cluster.command(cmd)
            time.sleep(pause)
        load.stop()
        t1 = time.time()
        time.sleep(2)  # the last scrape
        if proxy.proc.poll() is not None:
            raise SystemExit(f"the proxy exited ({proxy.proc.returncode}) during the run; its log: {proxy.log_path}")
    finally:
        stop(proxy.proc)
        stop(cluster.proc)
    sel = f'instance="127.0.0.1:{port}",topic="lc",partition="0"'
    fig, axes = plt.subplots(3, 1, figsize=(12, 7.5), sharex=True)
    for name, xs, ys in series(prom, f"produce_proxy_partition_window{{{sel}}}", t0, t1):
        axes[0].plot(xs, ys, label="partition_window", color="tab:blue", linewidth=2)
    for name, xs, ys in series(prom, f"produce_proxy_inflight_batches{{{sel}}}", t0, t1):
        axes[0].plot(xs, ys, label="inflight_batches", color="tab:orange", linewidth=1)
    axes[0].set_ylabel("batches")
    axes[0].set_ylim(0, 24)
    axes[0].set_title("lc-0: dedup window and batches in flight (RETAIN 20, 200 ms RTT)", fontsize=10)
    axes[0].legend(**LEGEND)
    inst = f'instance="127.0.0.1:{port}"'
    for name, xs, ys in series(prom, f'sum(produce_proxy_window_resets_total{{{inst},topic="lc"}})', t0, t1):
        axes[1].step(xs, ys, where="post", label="window_resets_total{topic=lc}", color="tab:red")
    for name, xs, ys in series(prom, f"produce_proxy_leader_changes_total{{{inst}}}", t0, t1):
        axes[1].step(xs, ys, where="post", label="leader_changes_total", color="tab:purple", linestyle="--")
    axes[1].set_ylabel("count")
    axes[1].legend(**LEGEND)
    for name, xs, ys in series(prom, f"sum by (error) (rate(produce_proxy_retries_total{{{inst}}}[5s]))", t0, t1,
                               "error"):
        axes[2].plot(xs, ys, label=f"retries/s {name}")
    for name, xs, ys in series(prom, f"rate(produce_proxy_records_delivered_total{{{inst}}}[5s]) / 1000", t0, t1):
        axes[2].plot(xs, ys, label="records delivered/s (thousands)", color="tab:green")
    axes[2].set_ylabel("per second")
    axes[2].set_xlabel(f"seconds since the load started ({LC_RATE:,} records/s of 1 KiB, kcat; batch_bytes {LC_BATCH})")
    axes[2].legend(**LEGEND)
    mark(axes, events, t0)
    fig.suptitle("A leader change: the window falls back to 5, then is learned again", fontsize=12)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    log(f"wrote {out}")


def run_stalled(work, prom, port, out):
    budget = 16 * MIB
    cluster = Cluster(work, ["--brokers", "3", "--topic", "st:4:20"])
    proxy = Proxy(work, cluster.bootstrap, port,
                  [f"producer.buffer_memory_bytes={budget}", "listener.max_request_bytes=1048576"])
    try:
        prom.wait_scraped(f"127.0.0.1:{port}")
        load = PacedKcat(proxy.addr, "st", 3000, 150, legacy=True)
        t0 = time.time()
        events = []
        time.sleep(10)
        events.append((time.time(), "brokers 1-3 down"))
        for b in (1, 2, 3):
            cluster.command(f"down {b}")
        time.sleep(45)
        events.append((time.time(), "brokers up"))
        for b in (1, 2, 3):
            cluster.command(f"up {b}")
        time.sleep(25)
        load.stop()
        t1 = time.time()
        time.sleep(2)
        if proxy.proc.poll() is not None:
            raise SystemExit(f"the proxy exited ({proxy.proc.returncode}) during the run; its log: {proxy.log_path}")
    finally:
        stop(proxy.proc)
        stop(cluster.proc)
    inst = f'instance="127.0.0.1:{port}"'
    fig, axes = plt.subplots(4, 1, figsize=(12, 9.5), sharex=True)
    for name, xs, ys in series(prom, f"produce_proxy_memory_used_bytes{{{inst}}} / 1048576", t0, t1, "use"):
        if max(ys, default=0) > 0.05:
            axes[0].plot(xs, ys, label=f"memory_used_bytes{{use={name}}}", linewidth=1)
    for name, xs, ys in series(prom, f"produce_proxy_buffered_bytes{{{inst}}} / 1048576", t0, t1):
        axes[0].plot(xs, ys, label="buffered_bytes", color="black", linewidth=2)
    axes[0].axhline(budget / MIB, color="tab:red", linestyle="--", linewidth=1, label="buffer_memory_bytes (16 MiB)")
    axes[0].set_ylabel("MiB")
    axes[0].legend(**LEGEND)
    for name, xs, ys in series(prom, f"produce_proxy_backpressure_active{{{inst}}}", t0, t1):
        axes[1].step(xs, ys, where="post", label="backpressure_active (reads paused)", color="tab:red")
    for name, xs, ys in series(prom, f"sum(produce_proxy_upstream_connected{{{inst}}}) / 3", t0, t1):
        axes[1].step(xs, ys, where="post", label="upstream_connected (share of 3 brokers)", color="tab:blue",
                     linestyle="--")
    axes[1].set_ylim(-0.05, 1.15)
    axes[1].legend(**LEGEND)
    for name, xs, ys in series(prom, f"increase(produce_proxy_requests_parked_total{{{inst}}}[5s])", t0, t1):
        axes[2].plot(xs, ys, label="requests_parked (per 5 s)", color="tab:orange")
    for name, xs, ys in series(prom, f"increase(produce_proxy_client_share_pauses_total{{{inst}}}[5s])", t0, t1):
        axes[2].plot(xs, ys, label="client_share_pauses (per 5 s)", color="tab:brown", linestyle="--")
    for name, xs, ys in series(prom, f"increase(produce_proxy_client_deadline_answers_total{{{inst}}}[5s])", t0, t1,
                               "outcome"):
        axes[2].plot(xs, ys, label=f"client_deadline_answers {name} (per 5 s)",
                     color={"withdrawn": "tab:purple", "in_flight": "tab:red"}.get(name, "tab:grey"))
    axes[2].legend(**LEGEND)
    for name, xs, ys in series(prom, f"rate(produce_proxy_records_received_total{{{inst}}}[5s])", t0, t1):
        axes[3].plot(xs, ys, label="records received/s", color="tab:blue")
    for name, xs, ys in series(prom, f"rate(produce_proxy_records_delivered_total{{{inst}}}[5s])", t0, t1):
        axes[3].plot(xs, ys, label="records delivered/s", color="tab:green")
    axes[3].set_ylabel("records/s")
    axes[3].set_xlabel("seconds since the load started (3,000 records/s of 1 KiB, kcat legacy mode)")
    axes[3].legend(**LEGEND)
    mark(axes, events, t0, on=1, y=0.6)
    fig.suptitle("A stalled upstream: the budget fills, the proxy stops taking records, requests are answered by their deadline", fontsize=11)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    log(f"wrote {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=pathlib.Path, default=ROOT / "docs/img")
    ap.add_argument("--only", choices=("leader", "stalled"))
    ap.add_argument("--keep", action="store_true", help="keep the logs and Prometheus data (their path is printed)")
    args = ap.parse_args()
    for tool in ("prometheus", "kcat"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is missing: apt-get install -y {tool}")
    args.out.mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix="pp-pictures."))
    ports = {"leader": free_port(), "stalled": free_port()}
    try:
        prom = Prometheus(work, [f"127.0.0.1:{p}" for p in ports.values()])
        if args.only in (None, "leader"):
            run_leader_change(work, prom, ports["leader"], args.out / "leader-change.png")
        if args.only in (None, "stalled"):
            run_stalled(work, prom, ports["stalled"], args.out / "stalled-upstream.png")
    finally:
        for p in reversed(started):
            if p.poll() is None:
                p.kill()
                p.wait()
        if args.keep:
            log(f"logs kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
