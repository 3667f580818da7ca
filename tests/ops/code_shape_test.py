#!/usr/bin/env python3
"""The house rules of docs/design/ARCHITECTURE.md that a machine can check:
one type per responsibility, each class's member functions defined in one
.cc; no function over 60 lines; no production source file over 800 lines (a
generous guard: files are split by responsibility, not by size).

Production sources are the .cc/.h files under proxy/, daemon/, metrics/ and
config/.

One .cc per class: a definition is a line at namespace scope (not indented)
naming `[ReturnType] Class::method(` or `Class::Class(` (nested classes as
`Outer::Inner::method(`); each class is mapped to the set of .cc files that
define its members, and a class defined in more than one fails. Classes that
did so before the rule are listed in KNOWN_SPLIT with the files they span:
any other class, or another file for one of them, fails.

Function length: functions are found by brace matching after a line that ends
a signature (`) {`, `) const {`, ...); a rule table (a function that is one
long switch or type dispatch) may be listed in ALLOWED with the reason.
"""
import collections
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 60
ALLOWED = {
    # name: why
}
# Known, being split: classes whose members were spread over several .cc
# files before the one-.cc rule, with the files they may span until each is
# split into types of its own. Remove an entry once its class is in one file.
KNOWN_SPLIT = {
}
# `[ReturnType] Qualified::Class::member(` at the start of a line: a definition
# at namespace scope (statements inside functions are indented). Classes are
# PascalCase, namespaces snake_case; an `=` before it is an initializer.
MEMBER_DEFINITION = re.compile(
    r"^(?![ \t#/])(?:[^;(){}=\n]*?[\s*&])?(?:[a-z_]\w*::)*"
    r"(?P<cls>(?:[A-Z]\w*(?:<[^<>()]*>)?::)+)(?P<member>~?\w+|operator\W+?)\s*\(")
SIGNATURE_END = re.compile(r"\)\s*(const)?\s*(noexcept)?\s*(override)?\s*(->[^{]*)?\s*(:[^{]*)?\{\s*$")
NOT_A_FUNCTION = re.compile(r"^\s*(namespace|class|struct|enum|union|if|for|while|switch|else|do|catch)\b")


def strip(line):
    line = re.sub(r"//.*", "", line)
    line = re.sub(r'"([^"\\]|\\.)*"', '""', line)
    return re.sub(r"'([^'\\]|\\.)*'", "''", line)


def long_functions(path, lines):
    found, depth, start = [], 0, None
    for i, raw in enumerate(lines):
        code = strip(raw)
        # The cheap test first: the pattern's runs of \s* backtrack for seconds
        # on the long blank-padded lines of a macro table (error_code.h).
        if start is None and code.rstrip().endswith("{") and SIGNATURE_END.search(code) \
                and not NOT_A_FUNCTION.match(code):
            start = (i, depth)
        for ch in code:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if start and depth == start[1]:
                    length = i - start[0] + 1
                    name = lines[start[0]].strip()
                    if length > MAX_FUNCTION_LINES and not any(k in name for k in ALLOWED):
                        found.append(f"{path}:{start[0] + 1}: {length} lines: {name[:90]}")
                    start = None
    return found


def member_files(sources):
    """{class: set of .cc files (relative) defining its member functions}."""
    files = collections.defaultdict(set)
    for path in sources:
        if path.suffix != ".cc":
            continue
        for line in path.read_text(errors="replace").split("\n"):
            m = MEMBER_DEFINITION.match(line)
            if m:
                cls = re.sub(r"<[^<>]*>", "", m.group("cls"))[:-2]
                files[cls].add(path.relative_to(ROOT).as_posix())
    return files


def spread_classes(sources):
    problems = []
    for cls, files in sorted(member_files(sources).items()):
        known = KNOWN_SPLIT.get(cls, set())
        if len(files) > 1 and not files <= known:
            problems.append(f"{cls}: members defined in {len(files)} .cc files ({', '.join(sorted(files))}): "
                            f"one type per responsibility, each class in one .cc (split the type, not the file)")
        elif known and len(files) <= 1:
            print(f"note: {cls} is defined in one .cc now: remove it from KNOWN_SPLIT")
    return problems


def main():
    problems = []
    sources = [p for d in ("proxy", "daemon", "metrics", "config") for p in (ROOT / d).rglob("*")
               if p.suffix in (".cc", ".h")]
    if len(sources) < 50:
        problems.append(f"only {len(sources)} sources found under {ROOT}: wrong root?")
    for path in sorted(sources):
        lines = path.read_text(errors="replace").split("\n")
        rel = path.relative_to(ROOT)
        if len(lines) > MAX_FILE_LINES:
            problems.append(f"{rel}: {len(lines)} lines (at most {MAX_FILE_LINES}: usually two ideas; split it)")
        problems += long_functions(rel, lines)
    problems += spread_classes(sorted(sources))
    for p in problems:
        print(p)
    print(f"{len(sources)} production sources checked: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
