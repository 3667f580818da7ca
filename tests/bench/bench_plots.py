"""One PNG per workload for docs/BENCHMARKS.md, drawn by gnuplot (issue 8).

Data files and gnuplot scripts go to a temporary folder; only the PNGs are
kept (the numbers themselves are in docs/bench/results.json).
"""
import os
import shutil
import subprocess
import tempfile

import bench_tables as t

HEADER = """set terminal pngcairo size 1000,480 font 'sans,10' noenhanced
set output '{png}'
set title '{title}'
set ylabel '{ylabel}'
set grid ytics
set key top left
set style fill solid 0.8 border -1
set yrange [0:*]
"""


def _write(tmp, name, lines):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def _title(text):
    return text.replace("'", "")


def _q(label):
    return '"' + str(label).replace('"', "'") + '"'


def histogram(tmp, name, png, title, ylabel, columns, rows):
    """Clustered bars: one cluster per row, one bar per column."""
    dat = _write(tmp, name + ".dat", [" ".join([_q(label)] + [f"{v:.6g}" if v is not None else "0" for v in vals])
                                      for label, vals in rows])
    plots = [f"'{dat}' using {i + 2}{':xtic(1)' if i == 0 else ''} title {_q(c)}" for i, c in enumerate(columns)]
    return HEADER.format(png=png, title=_title(title), ylabel=ylabel) + """set style data histograms
set style histogram clustered gap 1
set boxwidth 0.9
set xtics nomirror
plot """ + ", \\\n     ".join(plots) + "\n"


def plot_w1(rows, tmp, png):
    lines = []
    for case, _ in t.W1_CASES:
        v = [r["mb_per_s"] for r in t.pick(rows, 1, case)]
        if v:
            lines.append(f"{_q(case)} {t.med(v):.3f} {min(v):.3f} {max(v):.3f}")
    if not lines:
        return None
    dat = _write(tmp, "w1.dat", lines)
    return HEADER.format(png=png, title="Workload 1: throughput, 1 KiB records, acks=all (median, min-max of reps)",
                         ylabel="MB/s (record values)") + f"""set boxwidth 0.6
set xrange [-0.6:{len(lines) - 0.4}]
plot '{dat}' using 0:2:xtic(1) with boxes title 'median', '' using 0:2:3:4 with yerrorbars lc black title 'min-max'
"""


def plot_w2(rows, tmp, png):
    data = []
    for case in t.W2_CASES:
        for r in t.pick(rows, 2, case):
            parts = r.get("partitions") or 8
            bound = r["window"] * r["batch_bytes"] / (r["rtt_ms"] / 1000) / 1e6
            wire = r["batch_bytes_sum"] / r["seconds"] / parts / 1e6 if r.get("batch_bytes_sum") else None
            data.append((f"{case} (window {r['window']})", [r["mb_per_s"] / parts, wire, bound]))
    if not data:
        return None
    return histogram(tmp, "w2", png, "Workload 2: per-partition throughput, 50 ms RTT, batch_bytes 16 KiB",
                     "MB/s per partition",
                     ["record values", "upstream batches (wire)", "bound: window x batch_bytes / RTT"], data)


def plot_w3(rows, tmp, png):
    # One bar per case: its first repetition (the table has the medians).
    rs = list({r["case"]: r for r in reversed([r for r in rows if r.get("workload") == 3])}.values())[::-1]
    if not rs:
        return None
    a = histogram(tmp, "w3a", png, "throughput", "records/s", ["records/s"],
                  [(r["case"], [r["records_per_s"]]) for r in rs]).replace("set key top left", "set key top right")
    b = histogram(tmp, "w3b", png, "latency per request", "ms", ["p50", "p99"],
                  [(r["case"], [r["p50_ms"], r["p99_ms"]]) for r in rs])

    def strip(g):
        return "\n".join(x for x in g.splitlines() if not x.startswith(("set terminal", "set output")))

    return (f"set terminal pngcairo size 1000,450 font 'sans,10' noenhanced\nset output '{png}'\n"
            "set multiplot layout 1,2 title 'Workload 3: 64 chatty connections, one 1 KiB record per request, acks=1'\n"
            + strip(a) + "\n" + strip(b) + "\nunset multiplot\n")


def plot_w4(rows, tmp, png):
    data, columns = [], []
    for pct in sorted({r.get("load_pct") for r in t.pick(rows, 4) if r.get("load_pct")}, reverse=True):
        got, _ = t.w4_summary(rows, pct)
        columns = list(got)
        data += [(f"{name} at {pct} %", [got[c][k] for c in columns])
                 for name, k in (("p50", "p50_ms"), ("p99", "p99_ms"), ("p99.9", "p999_ms"))]
    if not data:
        return None
    return histogram(tmp, "w4", png, "Workload 4: open-loop acknowledgement latency (median of reps), "
                     "at 50 % and 10 % of the proxy maximum", "ms (log scale)", columns, data).replace(
        "set yrange [0:*]", "set logscale y\nset yrange [0.1:*]")


def plot_w5(rows, tmp, png):
    plots = []
    for r in t.pick(rows, 5, "stalled"):
        tl = r.get("timeline") or []
        dat = _write(tmp, f"w5_{r['buffer_mb']}.dat", [f"{x[0]} {x[1] / 1024:.2f} {x[2] / 2**20:.2f}" for x in tl])
        bound = r["idle_rss_kb"] / 1024 + r["buffer_mb"]
        plots.append(f"'{dat}' using 1:2 with lines lw 2 title 'RSS, buffer_memory_bytes = {r['buffer_mb']} MiB'")
        plots.append(f"'{dat}' using 1:3 with lines dt 3 title 'buffered_bytes ({r['buffer_mb']} MiB)'")
        plots.append(f"{bound:.2f} with lines dt 2 title 'idle RSS + {r['buffer_mb']} MiB'")
    if not plots:
        return None
    return (HEADER.format(png=png, title="Workload 5: proxy memory while the upstream is stalled and a client pushes",
                          ylabel="MiB") + "set key right center\nset xlabel 'seconds since the stall'\nplot " + ", \\\n     ".join(plots) + "\n")


def plot_w6(rows, tmp, png):
    data = []
    for codec in ("none", "lz4", "zstd"):
        d, p = t.pick(rows, 6, "direct", codec=codec), t.pick(rows, 6, "proxy", codec=codec)
        if d and p:
            d, p = d[-1], p[-1]
            data.append((codec, [t.per_gb(d["cpu_s"], d["bytes"]), t.per_gb(p["proxy_cpu_s"], p["bytes"]),
                                 t.per_gb(p["cpu_s"], p["bytes"])]))
    if not data:
        return None
    return histogram(tmp, "w6", png, "Workload 6: CPU seconds per GB of record values", "CPU s / GB",
                     ["direct producer", "produce-proxy", "app behind the proxy"], data)


def plot_w7(rows, tmp, png):
    lines = []
    ok = t.w7_rows(rows)
    for case, _ in t.W7_CASES:
        v = [r["mb_per_s"] for r in t.pick(ok, 7, case)]
        if v:
            lines.append(f"{_q(case)} {t.med(v):.3f} {min(v):.3f} {max(v):.3f}")
    if not lines:
        return None
    dat = _write(tmp, "w7.dat", lines)
    return HEADER.format(png=png, title="Workload 7: throughput against Apache Kafka 4.4.0 (1 broker), 1 KiB records, "
                         "acks=all (median, min-max of reps)", ylabel="MB/s (record values)") + f"""set boxwidth 0.6
set xrange [-0.6:{len(lines) - 0.4}]
plot '{dat}' using 0:2:xtic(1) with boxes title 'median', '' using 0:2:3:4 with yerrorbars lc black title 'min-max'
"""


PLOTTERS = {1: plot_w1, 2: plot_w2, 3: plot_w3, 4: plot_w4, 5: plot_w5, 6: plot_w6, 7: plot_w7}


def render_all(rows, out_dir):
    """Returns {workload: png file name} for the plots drawn."""
    if not shutil.which("gnuplot"):
        print("bench: gnuplot not found (scripts/setup.sh --bench-tools); no plots")
        return {}
    drawn = {}
    present = {r.get("workload") for r in rows}
    with tempfile.TemporaryDirectory() as tmp:
        for n, plotter in PLOTTERS.items():
            if n not in present:
                continue
            name = f"workload{n}.png"
            script = plotter(rows, tmp, os.path.join(out_dir, name))
            if not script:
                continue
            gp = _write(tmp, f"w{n}.gp", [script])
            res = subprocess.run(["gnuplot", gp], capture_output=True, text=True)
            if res.returncode == 0:
                drawn[n] = name
            else:
                print(f"bench: gnuplot failed for workload {n}: {res.stderr.strip()[:300]}")
    return drawn
