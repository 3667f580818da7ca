#!/usr/bin/env python3
"""The built binary's --version, --help and exit codes, as an operator sees them.

- --version exits 0 and prints, one per line: "produce-proxy VERSION", the git
  revision the build was configured from ("unknown" outside git), and the
  runtime versions of librdkafka, OpenSSL and libuv; each library's version
  is the one the system's pkg-config (librdkafka, libuv) and `openssl version`
  (its library) report, when those tools are present.
- --help exits 0, lists its options in groups and every exit code that
  docs/design/INTERFACES.md's "Command line" section documents.
- The codes themselves: a usage error and an invalid --check-config exit 2,
  a valid --check-config exits 0.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_support import run_tests  # noqa: E402

ARGS = None
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def proxy(*args):
    return subprocess.run([ARGS.proxy, *args], capture_output=True, text=True, timeout=30)


def tool_output(*cmd):
    """A system tool's stdout, or None when it is missing or fails."""
    if not shutil.which(cmd[0]):
        return None
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    return run.stdout.strip() if run.returncode == 0 else None


def documented_exit_codes():
    """The codes listed after "Exit codes:" in INTERFACES.md's CLI section."""
    with open(os.path.join(REPO, "docs", "design", "INTERFACES.md")) as f:
        text = f.read()
    section = text.split("## Command line", 1)[1].split("\n## ", 1)[0]
    listed = section.split("Exit codes", 1)[1]
    return sorted({int(c) for c in re.findall(r"^\s*[-|]?\s*`?([0-9])`?[:\s]", listed, re.M)})


class Version(unittest.TestCase):
    def test_version_revision_and_libraries(self):
        run = proxy("--version")
        self.assertEqual(run.returncode, 0, run.stderr)
        lines = run.stdout.splitlines()
        self.assertEqual(len(lines), 5, run.stdout)
        self.assertRegex(lines[0], r"^produce-proxy [0-9]+\.[0-9]+\.[0-9]+")
        self.assertRegex(lines[1], r"^revision (unknown|\S+)$")
        self.assertRegex(lines[2], r"^librdkafka [0-9]+\.[0-9]+\.[0-9]+")
        self.assertRegex(lines[3], r"^OpenSSL [0-9]+\.[0-9]+\.[0-9]+")
        self.assertRegex(lines[4], r"^libuv [0-9]+\.[0-9]+\.[0-9]+$")
        rdkafka = tool_output("pkg-config", "--modversion", "rdkafka")
        if rdkafka:
            self.assertEqual(lines[2], f"librdkafka {rdkafka}")
        libuv = tool_output("pkg-config", "--modversion", "libuv")
        if libuv:
            self.assertEqual(lines[4], f"libuv {libuv}")
        openssl = tool_output("openssl", "version")
        if openssl:
            library = re.search(r"\(Library: (.*)\)", openssl)
            self.assertEqual(lines[3], library.group(1) if library else openssl)

    def test_revision_is_this_repository_when_built_from_git(self):
        revision = proxy("--version").stdout.splitlines()[1].split(" ", 1)[1]
        if revision == "unknown":
            self.skipTest("built outside git")
        commit = revision.removesuffix("-dirty").rsplit("-g", 1)[-1]
        known = subprocess.run(["git", "-C", REPO, "cat-file", "-e", commit + "^{commit}"], capture_output=True)
        self.assertEqual(known.returncode, 0, f"{commit} is no commit of {REPO}")


class Help(unittest.TestCase):
    def test_help_groups_and_exit_codes(self):
        run = proxy("--help")
        self.assertEqual(run.returncode, 0, run.stderr)
        for group in ("Configuration:", "Information:", "Exit codes:"):
            self.assertIn(group, run.stdout)
        documented = documented_exit_codes()
        self.assertEqual(documented, [0, 1, 2])
        codes = run.stdout.split("Exit codes:", 1)[1]
        for code in documented:
            self.assertRegex(codes, rf"(?m)^\s+{code}\s+\S", f"exit code {code} is not in --help")

    def test_exit_codes(self):
        self.assertEqual(proxy("--bogus").returncode, 2)
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.toml")
            with open(bad, "w") as f:
                f.write("[producer]\nlinger_ms = -1\n")
            run = proxy("--check-config", "--config", bad)
            self.assertEqual(run.returncode, 2, run.stdout)
            self.assertIn("linger_ms", run.stderr)
            good = os.path.join(d, "good.toml")
            with open(good, "w") as f:
                f.write('[upstream]\nbootstrap_servers = ["127.0.0.1:9092"]\n')
            run = proxy("--check-config", "--config", good)
            self.assertEqual(run.returncode, 0, run.stderr)


if __name__ == "__main__":
    run_tests(sys.modules[__name__])
