#!/usr/bin/env python3
"""Every warn, error and critical log line of the production code is in
docs/operations.md ("Troubleshooting by symptom"), so a new one cannot land
undocumented.

Production code is the .cc/.h files under proxy/, daemon/, metrics/ and
config/ (tests excluded). A log site is a call of spdlog::warn / error /
critical, of log().warn / error / critical on a layer's logger (upstream::log(),
frontend::log()), or a log(level, ...) call whose level is chosen among warn,
err or critical in the lines just above it. Its format string is the string
literals that start the call (adjacent literals joined, C escapes undone).
The format string, whitespace collapsed and each placeholder written `{}`,
must appear in docs/operations.md (whitespace collapsed, backticks ignored,
a written `\n` read as whitespace): the literal text between the
placeholders, in its order, so a quoted line cannot pass by fragments
scattered over the page.

Also: every `runbook_url: docs/operations.md#ANCHOR` of the alert rules
(helm/produce-proxy/files/prometheus-rules.yaml, when present) names a
heading of docs/operations.md, so a renamed runbook cannot break the links.

    tests/ops/log_lines_doc_test.py [ROOT]          # the test
    tests/ops/log_lines_doc_test.py [ROOT] --list   # every site, for writing the doc
"""
import pathlib
import re
import sys

DIRS = ("proxy", "daemon", "metrics", "config")
DOC = "docs/operations.md"
RULES = "helm/produce-proxy/files/prometheus-rules.yaml"
FIXED = re.compile(r"(?:\bspdlog::|\blog\(\)\s*\.\s*)(warn|error|critical)\s*\(")
DYNAMIC = re.compile(r"(?:\bspdlog::|\blog\(\)\s*\.\s*)log\s*\(\s*[A-Za-z_][\w:]*\s*,")
DYNAMIC_LEVEL = re.compile(r"level::(warn|err|critical)\b")
LITERALS = re.compile(r'\s*((?:"(?:[^"\\\n]|\\.)*"\s*)+)')
PLACEHOLDER = re.compile(r"\{[^{}]*\}")
ESCAPES = {"n": "\n", "t": "\t", '"': '"', "'": "'", "\\": "\\"}


def unescape(literals):
    parts = re.findall(r'"((?:[^"\\\n]|\\.)*)"', literals)
    return re.sub(r"\\(.)", lambda m: ESCAPES.get(m.group(1), m.group(1)), "".join(parts))


def sites(root):
    """(file, line, level, format string or None when not a literal)."""
    found = []
    for d in DIRS:
        for path in sorted((root / d).rglob("*")):
            if path.suffix not in (".cc", ".h") or "test" in path.name:
                continue
            text = path.read_text()
            code = re.sub(r"//[^\n]*", lambda m: " " * len(m.group(0)), text)  # comments out, offsets kept
            for pattern in (FIXED, DYNAMIC):
                for m in pattern.finditer(code):
                    line = code.count("\n", 0, m.start()) + 1
                    if pattern is DYNAMIC:
                        above = "\n".join(code.splitlines()[max(0, line - 9):line])
                        levels = DYNAMIC_LEVEL.findall(above)
                        if not levels:
                            continue
                        level = "/".join(sorted(set(levels)))
                    else:
                        level = m.group(1)
                    lit = LITERALS.match(code, m.end())
                    fmt = unescape(lit.group(1)) if lit else None
                    found.append((path.relative_to(root), line, level, fmt))
    return found


def fragments(fmt):
    return [f for f in (" ".join(p.split()) for p in PLACEHOLDER.split(fmt)) if f]


def normalize(text):
    return PLACEHOLDER.sub("{}", " ".join(text.split()))


def normalize_doc(text):
    return normalize(text.replace("`", "").replace("\\n", " "))


def heading_anchors(text):
    """GitHub's anchors: lower case, punctuation but '-' dropped, spaces to '-'."""
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.*)$", text, re.M)}


def broken_runbook_links(root, doc_text):
    rules = root / RULES
    if not rules.exists():
        return []
    anchors = heading_anchors(doc_text)
    return [f"{RULES}: runbook_url {DOC}#{a}: no such heading in {DOC}"
            for a in re.findall(r"runbook_url:\s*\S*operations\.md#([\w-]+)", rules.read_text()) if a not in anchors]


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    root = pathlib.Path(args[0]) if args else pathlib.Path(__file__).resolve().parents[2]
    found = sites(root)
    if "--list" in argv:
        for path, line, level, fmt in found:
            print(f"{path}:{line}: {level}: {fmt!r}")
        print(f"{len(found)} sites", file=sys.stderr)
        return 0
    if len(found) < 20:
        print(f"only {len(found)} log sites found: has the logging API changed? Update this test.")
        return 1
    doc_path = root / DOC
    doc = normalize_doc(doc_path.read_text()) if doc_path.exists() else ""
    missing = []
    for path, line, level, fmt in found:
        if fmt is None:
            missing.append(f"{path}:{line}: {level} with a format that is not a string literal: "
                           "log a literal format string, so it can be documented and checked")
            continue
        if normalize(fmt) not in doc:
            absent = [f for f in fragments(fmt) if f not in doc]
            missing.append(f"{path}:{line}: {level} {fmt!r}: not quoted in {DOC}"
                           + (f" (absent: {absent})" if absent else " (its parts are there, not as one line)"))
    broken = broken_runbook_links(root, doc_path.read_text() if doc_path.exists() else "")
    for m in missing + broken:
        print(m)
    print(f"{len(found)} warn/error/critical log sites, {len(missing)} undocumented; "
          f"{len(broken)} broken runbook links")
    return 1 if missing or broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
