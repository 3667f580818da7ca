#!/usr/bin/env python3
"""Instructions and allocations per request of the chatty workload (issue 17,
workload 3: 64 connections, one record per Produce v2 request), where the
proxy's one event loop is the limit.

The release proxy runs under callgrind in front of the test cluster twice,
with N and 2N requests from `bench_chatty_client`, and the difference per
request is printed, so start-up and shutdown cancel: all instructions, those
spent in the allocator (jemalloc, or glibc's malloc.c with operator new and
delete for an older binary), and the allocations (calls into the allocator
from outside it). Callgrind counts instructions, not time, so a busy machine
does not move it; the proxy runs slowly under it, so more requests share a
loop turn than at full speed and per-turn costs read lower than they are.

    tests/bench/callgrind_chatty.py [--proxy BIN] [--requests N] [--keep DIR]

The same plumbing as instructions_per_record.py (daemon_support's cluster and
proxy, its callgrind total); needs valgrind and a release build.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import instructions_per_record as ipr
from instructions_per_record import daemon_support

BUILD = os.path.join(ipr.ROOT, "build", "release")
CONNECTIONS = 64

# The allocator: glibc's (whatever it compiled from malloc.c, and operator new
# and delete around it) or jemalloc, which the release daemon links (all of
# its shared object, operator new and delete included).
ALLOCATOR_FILE = re.compile(r"/malloc\.c$")
ALLOCATOR_FN = re.compile(r"^operator (new|delete)")
ALLOCATOR_OBJECT = re.compile(r"/libjemalloc\.so")
ALLOCATION_ENTRY = re.compile(r"^(malloc|calloc|realloc|aligned_alloc|posix_memalign|operator new)\b")
NAMESPACE = {"ob": "object", "cob": "object", "fl": "file", "fi": "file", "fe": "file", "cfi": "file",
             "cfl": "file", "fn": "fn", "cfn": "fn"}


def allocator_cost(path):
    """(instructions spent in the allocator, allocations) of one callgrind file.

    Self costs only: a cost line right after `calls=` is the call's inclusive
    cost, already counted in the callee. An allocation is a call into the
    allocator (malloc, operator new, ...) from outside it."""
    names = {"object": {}, "file": {}, "fn": {}}
    obj = function_file = file = fn = ""
    callee = None
    allocator = allocations = 0

    def in_allocator():
        return bool(ALLOCATOR_FILE.search(file) or ALLOCATOR_FN.search(fn) or ALLOCATOR_OBJECT.search(obj))

    for line in open(path, errors="replace"):
        m = re.match(r"(ob|cob|fl|fi|fe|cfi|cfl|fn|cfn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if m:
            kind, key, name = m.groups()
            table = names[NAMESPACE[kind]]
            if name:
                table[key] = name
            if kind == "cfn":
                callee = table.get(key, "")
            elif kind == "ob":
                obj = table.get(key, "")
            elif kind == "fn":
                fn, callee, file = table.get(key, ""), None, function_file
            elif kind == "fl":
                function_file = file = table.get(key, "")
            elif kind in ("fi", "fe"):  # inlined code from another file, until the next fn
                file = table.get(key, "")
            continue
        if line.startswith("calls="):
            if callee is not None and ALLOCATION_ENTRY.search(callee) and not in_allocator():
                allocations += int(line.split("=")[1].split()[0])
            continue
        fields = line.split()
        if len(fields) >= 2 and fields[1].isdigit() and (line[:1].isdigit() or line[:1] in "+-*"):
            if callee is not None:
                callee = None
                continue
            if in_allocator():
                allocator += int(fields[1])
    return allocator, allocations


def measure_one(proxy_bin, requests, out, timeout_s):
    """(instructions, allocator instructions, allocations) of one proxy life serving `requests`."""
    cluster = daemon_support.TestCluster(os.path.join(BUILD, "tests", "broker", "test-cluster"),
                                         "--brokers", "3", "--seed", "1", "--topic", "w3:16")
    try:
        servers = "[" + ",".join(f'"{s}"' for s in cluster.bootstrap.split(",")) + "]"
        port, metrics_port = daemon_support.free_port(), daemon_support.free_port()
        proxy = daemon_support.Proxy(
            proxy_bin, config_path=os.path.join(ipr.ROOT, "config", "produce-proxy.example.toml"),
            sets=(f"upstream.bootstrap_servers={servers}", f"listener.address=127.0.0.1:{port}",
                  f"metrics.address=127.0.0.1:{metrics_port}", "shutdown.drain_timeout_ms=5000"),
            wrapper=("valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"))
        deadline = time.time() + timeout_s
        try:
            if not proxy.wait_ready(timeout=timeout_s):
                raise RuntimeError(f"proxy under callgrind not ready: {proxy.text()[-600:]}")
            client = subprocess.run(
                [os.path.join(BUILD, "tests", "bench", "bench_chatty_client"), "--bootstrap", f"127.0.0.1:{port}",
                 "--version", "2", "--topic", "w3", "--connections", str(CONNECTIONS), "--acks", "1",
                 "--count", str(requests), "--duration-s", str(int(timeout_s))],
                capture_output=True, text=True, timeout=timeout_s + 30)
            lines = client.stdout.strip().splitlines()
            answered = json.loads(lines[-1]).get("records") if lines else None
            if client.returncode != 0 or answered != requests:
                raise RuntimeError(f"chatty client: {client.stdout.strip()} {client.stderr.strip()[-400:]}")
        finally:
            code = proxy.stop(timeout=max(10.0, deadline - time.time()))
        if code != 0:
            raise RuntimeError(f"proxy exited with {code}: {proxy.text()[-600:]}")
    finally:
        cluster.stop()
    return (ipr.callgrind_total(out), *allocator_cost(out))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--proxy", help="release produce-proxy (default: $PP_RELEASE_PROXY, build/release)")
    p.add_argument("--requests", type=int, default=10000, help="requests of the smaller run")
    p.add_argument("--timeout-s", type=float, default=300, help="bound on each proxy's run")
    p.add_argument("--keep", metavar="DIR", help="copy the callgrind output files here")
    args = p.parse_args()
    proxy_bin = ipr.find_proxy(args.proxy)
    if not proxy_bin or not shutil.which("valgrind"):
        print("needs a release produce-proxy and valgrind")
        return 77
    with tempfile.TemporaryDirectory() as work:
        small = measure_one(proxy_bin, args.requests, os.path.join(work, "small.out"), args.timeout_s)
        large = measure_one(proxy_bin, 2 * args.requests, os.path.join(work, "large.out"), args.timeout_s)
        if args.keep:
            shutil.copytree(work, args.keep, dirs_exist_ok=True)
    total, allocator, allocations = [(b - a) / args.requests for a, b in zip(small, large)]
    print(f"per chatty request: {total:,.0f} instructions, {allocator:,.0f} in the allocator "
          f"({100 * allocator / total:.1f} %), {allocations:.1f} allocations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
