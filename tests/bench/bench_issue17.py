#!/usr/bin/python3
"""Workloads 10 and 11 of scripts/bench.sh (issue 17's measurement goals).

  rate FILE K=V ...   median records/s of the results rows with those tags
                      (workload 10's direct capacity); exits 1 when none
  merge FILE ...      several bench_rdkafka_producer JSON lines run at once
                      -> one line: records, bytes and CPU summed, the
                      longest run's seconds (workload 11's clients)

The tables (workload10, workload11, headlines) are used by bench_tables.py.
Reports only: the verdicts say whether a stated goal was met, nothing fails.
"""
import json
import statistics
import sys


def _med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _pick(rows, workload, **tags):
    return [r for r in rows if r.get("workload") == workload and all(r.get(k) == v for k, v in tags.items())]


def _f(v, digits=2):
    if v is None:
        return "n/a"
    if isinstance(v, int) or abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def _spread(values, lo=0.1, hi=0.9):
    """10th and 90th percentile (nearest rank) of the per-round values."""
    s = sorted(values)
    return s[int(lo * (len(s) - 1))], s[int(hi * (len(s) - 1))]


def _mean_ms(r, key):
    return r[key + "_s_sum"] * 1000 / r[key + "_count"] if r.get(key + "_count") else None


def batching_delay_ms(r):
    """What the proxy added to a request besides the upstream round trip,
    from its own histograms over the run: mean time inside the proxy (request
    received to response written) minus the mean Produce round trip. It is
    the batching delay actually applied plus the proxy's own queueing and
    work, so "beyond it" is conservative for the goal."""
    inside, upstream = _mean_ms(r, "in_proxy"), _mean_ms(r, "upstream_rtt")
    return inside - upstream if inside is not None and upstream is not None else None


# ---- workload 10 -------------------------------------------------------------

W10_TARGETS = (("test_cluster", "test cluster (3 brokers)"), ("kafka", "Apache Kafka 4.4.0 (1 broker)"))
# before_*: the --baseline binary in the same rounds (scripts/bench.sh), when given.
W10_CASES = ("proxy_linger5", "proxy_linger0", "before_linger5", "before_linger0")
W10_KEYS = ("p50_ms", "p99_ms", "p999_ms")


def w10_rounds(rows, target, pct, case):
    """[(proxy row, direct row)] of the rounds where both ran and delivered."""
    direct = {r.get("pair"): r for r in _pick(rows, 10, target=target, case="direct", load_pct=pct) if r.get("samples")}
    return [(r, direct[r.get("pair")]) for r in _pick(rows, 10, target=target, case=case, load_pct=pct)
            if r.get("samples") and r.get("pair") in direct]


def w10_summary(rows, target, pct, case):
    rounds = w10_rounds(rows, target, pct, case)
    if not rounds:
        return None
    out = {"rounds": len(rounds), "rate": rounds[0][0].get("target_rate"),
           "delay": _med([batching_delay_ms(p) for p, _ in rounds]),
           "linger": rounds[0][0].get("proxy_linger_ms"),
           "lag": _med([max(p.get("max_send_behind_ms", 0), d.get("max_send_behind_ms", 0)) for p, d in rounds])}
    for k in W10_KEYS:
        diffs = [p[k] - d[k] for p, d in rounds]
        out[k] = (_med(diffs),) + _spread(diffs)
        out["direct_" + k] = _med([d[k] for _, d in rounds])
    return out


def _added(cell):
    m, lo, hi = cell
    return f"{m:.2f} ({lo:.2f} to {hi:.2f})"


def workload10(rows):
    body = []
    for target, what in W10_TARGETS:
        cap = _pick(rows, 10, target=target, case="capacity")
        if cap:
            body.append(f"{what}: the direct producer's capacity (closed loop, idempotent, the open-loop client's "
                        f"settings) {_f(cap[-1].get('records_per_s'))} records/s; loads are shares of it.")
    body += ["", "| target | load | case | rounds | records/s | direct p50 / p99 / p99.9 ms | p50 added ms, median "
             "(10th to 90th pct of rounds) | p99 added | p99.9 added | batching delay applied ms | p99 added beyond "
             "it | sender lag ms |", "|---|---:|---|---:|---:|---|---|---|---|---:|---:|---:|"]
    notes = []
    for target, _ in W10_TARGETS:
        for pct in (10, 50):
            for case in W10_CASES:
                s = w10_summary(rows, target, pct, case)
                if not s:
                    continue
                beyond = s["p99_ms"][0] - s["delay"] if s["delay"] is not None else None
                body.append(f"| {target} | {pct} % | `{case}` | {s['rounds']} | {_f(s['rate'])} "
                            f"| {_f(s['direct_p50_ms'])} / {_f(s['direct_p99_ms'])} / {_f(s['direct_p999_ms'])} "
                            f"| {_added(s['p50_ms'])} | {_added(s['p99_ms'])} | {_added(s['p999_ms'])} "
                            f"| {_f(s['delay'])} | {_f(beyond)} | {_f(s['lag'])} |")
                if beyond is None:
                    continue
                hi_beyond = s["p99_ms"][2] - s["delay"]
                verdict = "**met**" if beyond <= 1.0 else "**missed**"
                notes.append(f"{target}, {pct} % load, `{case}` (`linger_ms` {s['linger']}): p99 added "
                             f"{s['p99_ms'][0]:.2f} ms, batching delay applied {s['delay']:.2f} ms, beyond it "
                             f"{beyond:.2f} ms (90th pct of rounds {hi_beyond:.2f}; beyond the `linger_ms` bound "
                             f"{s['p99_ms'][0] - (s['linger'] or 0):.2f}); goal <= 1 ms: {verdict}.")
    return body + ([""] + notes if notes else [])


# ---- workload 11 -------------------------------------------------------------

W11_CASES = (("pinned", "proxy on core 0 alone (taskset), clients and cluster on core 1"),
             ("shared", "through the proxy, the scheduler places everything"),
             ("before", "through the `--baseline` binary, shared as above"),
             ("direct", "the same clients straight to the cluster"))


def _per_gb(cpu, nbytes):
    return cpu / (nbytes / 1e9) if cpu is not None and nbytes else None


def w11_per_cpu_s(r):
    """Records the proxy delivered per CPU-second it used."""
    return r["proxy_delivered"] / r["proxy_cpu_s"] if r.get("proxy_cpu_s") and r.get("proxy_delivered") else None


def workload11(rows):
    body = ["| case | runs | clients | records/s (median) | proxy CPU-s per wall-s | records per proxy CPU-second "
            "| proxy CPU s/GB | clients' CPU s/GB | records per upstream batch |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for case, what in W11_CASES:
        rs = [r for r in _pick(rows, 11, case=case) if r.get("records")]
        if not rs:
            continue
        busy = _med([r["proxy_cpu_s"] / r["seconds"] for r in rs if r.get("proxy_cpu_s") and r.get("seconds")])
        per_batch = _med([r["batch_records_sum"] / r["batch_records_count"] for r in rs
                          if r.get("batch_records_count")])
        body.append(f"| `{case}`: {what} | {len(rs)} | {rs[0].get('clients')} | {_f(_med([r['records_per_s'] for r in rs]))} "
                    f"| {_f(busy)} | {_f(_med([w11_per_cpu_s(r) for r in rs]))} "
                    f"| {_f(_med([_per_gb(r.get('proxy_cpu_s'), r.get('bytes')) for r in rs]))} "
                    f"| {_f(_med([_per_gb(r.get('cpu_s'), r.get('bytes')) for r in rs]))} | {_f(per_batch, 0)} |")
    best = [_med([w11_per_cpu_s(r) for r in _pick(rows, 11, case=c) if r.get("records")]) for c in ("pinned", "shared")]
    best = [b for b in best if b is not None]
    if best:
        top = max(best)
        body.append(f"\nRecords per proxy CPU-second, 100 B records, lz4 off (best layout, median of runs): "
                    f"**{_f(top)}**; goal >= 1,000,000: {'**met**' if top >= 1e6 else '**missed**'}.")
    return body


def headlines(rows):
    out = []
    for body in (workload10(rows), workload11(rows)):
        out += [line.strip() for line in body if "goal" in line]
    return out


# ---- command line ------------------------------------------------------------

def _load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def _number(v):
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return v


def cmd_rate(path, tags):
    want = dict((k, _number(v)) for k, _, v in (t.partition("=") for t in tags))
    rates = [r["records_per_s"] for r in _load(path)
             if all(r.get(k) == v for k, v in want.items()) and r.get("records_per_s", 0) > 0]
    if not rates:
        return 1
    print(int(statistics.median(rates)))
    return 0


def cmd_merge(paths):
    lines = []
    for p in paths:
        with open(p) as f:
            found = [json.loads(x) for x in f.read().splitlines() if x.strip().startswith("{")]
        lines += found[-1:]
    if not lines:
        print(json.dumps({"error": "no client output"}))
        return 0
    out = {k: sum(x.get(k, 0) for x in lines) for k in ("sent", "records", "failed", "unsent", "bytes", "cpu_s")}
    out["seconds"] = max(x.get("seconds", 0) for x in lines)
    out["records_per_s"] = out["records"] / out["seconds"] if out["seconds"] else 0
    out["mb_per_s"] = out["bytes"] / 1e6 / out["seconds"] if out["seconds"] else 0
    out["p99_ms"] = max(x.get("p99_ms", 0) for x in lines)
    out["tool"], out["clients_reported"] = "rdkafka_producer_merged", len(lines)
    errors = [x["first_error"] for x in lines if x.get("first_error")]
    if errors:
        out["first_error"] = errors[0]
    print(json.dumps(out, sort_keys=True))
    return 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "rate":
        return cmd_rate(argv[1], argv[2:])
    if len(argv) >= 2 and argv[0] == "merge":
        return cmd_merge(argv[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
