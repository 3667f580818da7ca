#!/usr/bin/env python3
"""A generated reference document still says what the code says.

Runs a generator (config-reference or metrics-reference) and compares what it
prints with the committed document. Fails, printing a unified diff and the
command that rewrites the document, when they differ; fails with the
generator's own message when it cannot document something (a config key with
no comment in the example config, a metric family no event feeds).

Usage: doc_drift_test.py --generator PATH --doc docs/configuration.md
"""
import argparse
import difflib
import os
import subprocess
import sys

REGENERATE = "scripts/gen_docs.sh"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--generator", required=True)
    parser.add_argument("--doc", required=True)
    args = parser.parse_args()

    run = subprocess.run([args.generator], capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        print(run.stderr, end="")
        print(f"FAIL: {os.path.basename(args.generator)} could not document everything (exit {run.returncode}); "
              f"fix what it names, then run {REGENERATE}")
        return 1
    try:
        with open(args.doc) as f:
            committed = f.read()
    except FileNotFoundError:
        committed = ""
    if committed == run.stdout:
        print(f"{args.doc}: matches {os.path.basename(args.generator)}")
        return 0
    name = os.path.relpath(args.doc, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
    diff = difflib.unified_diff(committed.splitlines(keepends=True), run.stdout.splitlines(keepends=True),
                                fromfile=f"{name} (committed)", tofile=f"{name} (from the code)")
    sys.stdout.writelines(diff)
    print(f"\nFAIL: {name} differs from what the code says. Regenerate it with:\n    {REGENERATE}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
