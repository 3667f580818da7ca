#!/usr/bin/env python3
"""The built binary's --print-config, as an operator runs it.

- It loads like --check-config (the file, then --set) and prints the
  effective configuration as TOML: every key of docs/design/INTERFACES.md's
  configuration block, in that block's order, defaults filled in, the file's
  and --set's values where given; exit 0.
- What it prints is itself a valid config (--check-config passes on it) and
  prints the same again.
- Secrets stay out: a password file's and a password variable's contents are
  never printed (their path and name are); the header says nothing is redacted.
- An invalid config exits 2 with the problem on stderr and nothing on stdout;
  --print-config with --check-config is a usage error (2).
- --help and INTERFACES.md's "Command line" section both document it.
"""
import os
import re
import subprocess
import sys
import tempfile
import tomllib
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_support import run_tests  # noqa: E402

ARGS = None
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def proxy(*args, env=None):
    return subprocess.run([ARGS.proxy, *args], capture_output=True, text=True, timeout=30,
                          env={**os.environ, **(env or {})})


def interfaces_md():
    with open(os.path.join(REPO, "docs", "design", "INTERFACES.md")) as f:
        return f.read()


def documented_keys():
    """(section, key) in the order of INTERFACES.md's ```toml block."""
    block = interfaces_md().split("## Configuration", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
    keys, section = [], None
    for line in block.splitlines():
        header = re.match(r"^\[([a-z_.]+)\]", line)
        key = re.match(r"^([a-z_]+) = ", line)
        if header:
            section = header.group(1)
        elif key:
            keys.append((section, key.group(1)))
    return keys


def printed_keys(text):
    keys, section = [], None
    for line in text.splitlines():
        header = re.match(r"^\[([a-z_.]+)\]$", line)
        key = re.match(r"^([a-z_]+) = ", line)
        if header:
            section = header.group(1)
        elif key:
            keys.append((section, key.group(1)))
    return keys


def lookup(config, section, key):
    for part in section.split("."):
        config = config[part]
    return config[key]


class PrintConfig(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_every_key_in_documented_order_with_effective_values(self):
        config = self.write("pp.toml", '[upstream]\nbootstrap_servers = ["kafka-1:9092"]\n'
                                       '[producer]\nlinger_ms = 20\n')
        run = proxy("--print-config", "--config", config, "--set", "producer.linger_ms=25",
                    "--set", "log.format=json")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(printed_keys(run.stdout), documented_keys(), run.stdout)
        printed = tomllib.loads(run.stdout)
        self.assertEqual(printed["producer"]["linger_ms"], 25, "--set beats the file")
        self.assertEqual(printed["log"]["format"], "json")
        self.assertEqual(printed["upstream"]["bootstrap_servers"], ["kafka-1:9092"])
        # Defaults filled in: those of INTERFACES.md's block, which documents them.
        block = interfaces_md().split("## Configuration", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
        documented = tomllib.loads(block)
        for section, key in documented_keys():
            if (section, key) in (("producer", "linger_ms"), ("log", "format"), ("upstream", "bootstrap_servers")):
                continue
            self.assertEqual(lookup(printed, section, key), lookup(documented, section, key), f"{section}.{key}")
        self.assertRegex(run.stdout, r"(?m)^max_connections = 1024  # default$")
        self.assertRegex(run.stdout, r"(?m)^linger_ms = 25$")

    def test_output_is_a_config_that_prints_the_same(self):
        example = os.path.join(REPO, "config", "produce-proxy.example.toml")
        first = proxy("--print-config", "--config", example, "--set", "producer.compression=lz4")
        self.assertEqual(first.returncode, 0, first.stderr)
        printed = self.write("printed.toml", first.stdout)
        check = proxy("--check-config", "--config", printed)
        self.assertEqual(check.returncode, 0, check.stderr + first.stdout)
        second = proxy("--print-config", "--config", printed)
        self.assertEqual(second.returncode, 0, second.stderr)
        body = lambda text: text.split("\n", 1)[1]  # the first line names the file
        self.assertEqual(body(second.stdout), body(first.stdout))

    def test_secrets_are_not_printed(self):
        secret = "pp-test-secret-7f3a"
        password = self.write("password", secret + "\n")
        config = self.write("pp.toml", '[upstream]\nbootstrap_servers = ["kafka-1:9092"]\n'
                                       '[upstream.sasl]\nmechanism = "SCRAM-SHA-512"\nusername = "proxy"\n'
                                       f'password_file = "{password}"\n')
        run = proxy("--print-config", "--config", config)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn(f'password_file = "{password}"', run.stdout)
        self.assertNotIn(secret, run.stdout + run.stderr)
        self.assertIn("# Redacted: none.", run.stdout)
        run = proxy("--print-config", "--config", config, "--set", "upstream.sasl.password_file=\"\"",
                    "--set", "upstream.sasl.password_env=PP_TEST_PASSWORD", env={"PP_TEST_PASSWORD": secret})
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn('password_env = "PP_TEST_PASSWORD"', run.stdout)
        self.assertNotIn(secret, run.stdout + run.stderr)

    def test_invalid_config_exits_2(self):
        config = self.write("bad.toml", '[upstream]\nbootstrap_servers = ["kafka-1:9092"]\n[producer]\nlinger_ms = -1\n')
        run = proxy("--print-config", "--config", config)
        self.assertEqual(run.returncode, 2, run.stdout)
        self.assertIn("linger_ms", run.stderr)
        self.assertEqual(run.stdout, "")
        run = proxy("--print-config", "--check-config", "--config", config)
        self.assertEqual(run.returncode, 2, run.stdout)

    def test_documented(self):
        help_text = proxy("--help").stdout
        self.assertIn("--print-config", help_text)
        cli_section = interfaces_md().split("## Command line", 1)[1].split("\n## ", 1)[0]
        self.assertIn("--print-config", cli_section)


if __name__ == "__main__":
    run_tests(sys.modules[__name__])
