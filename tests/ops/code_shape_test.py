#!/usr/bin/env python3
"""The house rules of docs/design/ARCHITECTURE.md that a machine can check
(issue 13): no production source file over 400 lines, no function over 60.

Production sources are the .cc/.h files under proxy/, daemon/, metrics/ and
config/. Functions are found by brace matching after a line that ends a
signature (`) {`, `) const {`, ...); a rule table (a function that is one
long switch or type dispatch) may be listed in ALLOWED with the reason.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60
ALLOWED = {
    # name: why
}
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
    for p in problems:
        print(p)
    print(f"{len(sources)} production sources checked: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
