"""Workload 9's table (issue 15): TLS upstream against real Apache Kafka 4.4.0.

Kept apart from bench_tables.py (which registers it) so that file stays
small; the helpers are bench_tables' own, imported when the table is built.
"""

TITLE = "TLS upstream against real Apache Kafka 4.4.0 (1 broker, 1 KiB records, 16 partitions, acks=all)"
CASES = (("direct_tls", "librdkafka idempotent, straight to Kafka's SSL listener"),
         ("proxy_legacy_tls", "legacy librdkafka (Produce v1) through the proxy, upstream TLS"),
         ("direct_plain", "librdkafka idempotent, straight to the PLAINTEXT listener"))
GOAL = 0.9  # issue 15: legacy through the proxy / librdkafka direct over TLS


def ratio(rows, case, base):
    """(median, [each rep]) of case / base records/s, paired by repetition."""
    import bench_tables as t
    ok = [r for r in t.pick(rows, 9) if r.get("records_per_s")]
    each = t.rep_ratios(ok, 9, case, base)
    return t.med(each), each


def workload9(rows):
    import bench_tables as t
    ok = [r for r in t.pick(rows, 9) if r.get("records_per_s")]
    body = ["| case | records/s | MB/s | / librdkafka direct over TLS (median; each rep) "
            "| client CPU s/GB | proxy CPU s/GB | broker CPU s/GB |",
            "|---|---:|---:|---|---:|---:|---:|"]
    gb = {}
    for case, what in CASES:
        rs = t.pick(ok, 9, case)
        if not rs:
            continue
        m, each = ratio(rows, case, "direct_tls")
        cell = "1" if case == "direct_tls" else (f"{m:.2f} ({', '.join(f'{x:.2f}' for x in each)})" if m else "")
        gb[case] = {k: t.med([t.per_gb(r.get(k), r.get("bytes")) for r in rs])
                    for k in ("cpu_s", "proxy_cpu_s", "broker_cpu_s")}
        body.append(f"| `{case}`: {what} | {t.f(t.med([r['records_per_s'] for r in rs]))} "
                    f"| {t.f(t.med([r['mb_per_s'] for r in rs]), 1)} | {cell} | {t.f(gb[case]['cpu_s'])} "
                    f"| {t.f(gb[case]['proxy_cpu_s'])} | {t.f(gb[case]['broker_cpu_s'])} |")
    for r in t.pick(rows, 9):
        if not r.get("records_per_s"):
            body.append(f"\nRun failed: `{r.get('case')}` rep {r.get('rep')}: {r.get('error') or r.get('first_error')}")
    m, each = ratio(rows, "proxy_legacy_tls", "direct_tls")
    if m is not None:
        body.append(f"\nlegacy client through the proxy (upstream TLS) / librdkafka direct over TLS, records/s: "
                    f"**{m:.2f}** (min {min(each):.2f}, max {max(each):.2f} over {len(each)} repetitions; "
                    f"goal >= {GOAL}: {t.goal(m >= GOAL)})")
    direct, proxy = gb.get("direct_tls", {}), gb.get("proxy_legacy_tls", {})
    if direct.get("cpu_s") and proxy.get("proxy_cpu_s"):
        body.append(f"\nCPU s/GB: the proxy {proxy['proxy_cpu_s']:.2f} against the direct TLS producer's "
                    f"{direct['cpu_s']:.2f} ({proxy['proxy_cpu_s'] / direct['cpu_s']:.2f}x); proxy + its legacy "
                    f"client {proxy['proxy_cpu_s'] + (proxy.get('cpu_s') or 0):.2f}.")
    m, _ = ratio(rows, "direct_tls", "direct_plain")
    if m is not None:
        body.append(f"\nTLS itself: librdkafka direct over TLS / over plaintext, records/s: {m:.2f}.")
    return body
