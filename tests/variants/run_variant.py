#!/usr/bin/env python3
"""Runs one suite of the variant matrix (tests/variants/CMakeLists.txt): a
suite that already runs in CI, again under another broker generation, set
through the environment ctest gives it (PP_TEST_FIRST_SEQUENCE_RULE,
PP_TEST_RETAIN_PLACEMENT; tests/broker/README.md).

  run_variant.py [--short ARG]... -- COMMAND [ARG...]

With PP_TEST_VARIANTS=full in the environment, COMMAND runs whole. Otherwise
(CI's form) it runs with the --short arguments appended (a gtest filter or
unittest -k patterns: a representative case or two), or, without any, is
skipped with exit code 77 (ctest's SKIP_RETURN_CODE for these tests). The
first line printed names the variant and the form, so a log says what ran.
"""
import os
import sys

SKIP = 77


def main(argv):
    if "--" not in argv:
        sys.exit("usage: run_variant.py [--short ARG]... -- COMMAND [ARG...]")
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1:]
    short = []
    while options:
        if options[0] != "--short" or len(options) < 2:
            sys.exit("run_variant.py: unknown option %r" % options[0])
        short.append(options[1])
        options = options[2:]
    variant = " ".join("%s=%s" % (k, os.environ[k]) for k in ("PP_TEST_FIRST_SEQUENCE_RULE",
                                                               "PP_TEST_RETAIN_PLACEMENT") if os.environ.get(k))
    full = os.environ.get("PP_TEST_VARIANTS", "") == "full"
    if not full and not short:
        print("variant [%s]: SKIP in the short form; PP_TEST_VARIANTS=full runs it" % variant, flush=True)
        return SKIP
    if not full:
        command = command + short
    print("variant [%s], %s form: %s" % (variant, "full" if full else "short", " ".join(command)), flush=True)
    os.execv(command[0], command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
