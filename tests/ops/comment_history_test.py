#!/usr/bin/env python3
"""Production comments state contracts, not history.

A comment says what the code is for, its invariants, who owns what, which
loop or thread may call it and what happens on error. Issue numbers, measured
figures and the numbers of our design docs' sections go stale (figures
belong in docs/BENCHMARKS.md, history in git, and a doc section is cited by
its title: "the first-ack rule (PIPELINE.md)"). This check scans the comments
(// and /* */; string and character literals are skipped) of every .cc/.h
file under proxy/, metrics/, config/ and daemon/ and fails on:

  issue     "issue 17", "issues 14 and 16" (citations of other trackers are
            fine: "KAFKA-12345", "KIP-951", "librdkafka #4438", "apache/kafka
            PR #23853", "librdkafka issue #4438");
  percent   a number followed by "%" ("10 %", "2.7%"; printf formats live in
            string literals, which are not scanned); a ratio that is a
            contract, not a measurement, is written as one ("0.85 to 0.95 of
            the session lifetime", "nine tenths of the limit");
  doc-ref   a numbered section of docs/design/*.md: "C.4", "D.3",
            "decision 8", "pitfall E.5", "habit 7", "ARCHITECTURE.md rule 5",
            "rule of the house 5", "CLIENT_DEDUP.md rule 4".

The findings are listed as FILE:LINE: KIND 'MATCH': LINE TEXT, then a count.

Usage: comment_history_test.py [ROOT] (default: the repository of this file).
"""
import pathlib
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cpp_comments import comments  # noqa: E402

SOURCE_DIRS = ("proxy", "metrics", "config", "daemon")

# A tracker whose numbers may be cited: "<name> #N" or "<name> issue N".
OTHER_TRACKER = re.compile(r"(librdkafka|kcat|sarama|franz-go|confluent-kafka[\w-]*|[\w.-]+/[\w.-]+)"
                           r"(\s+(issues?|PRs?|pull))?\s*$", re.IGNORECASE)

RULES = (
    ("issue", re.compile(r"\bissues?\s+#?[0-9]+(\s*(,|and|or)\s*#?[0-9]+)*", re.IGNORECASE)),
    ("percent", re.compile(r"(?<![\w.])[0-9]+(?:[.,][0-9]+)?\s?%")),
    ("doc-ref", re.compile(
        r"(?<![\w.])(?-i:[A-E]\.[0-9]+[a-z]?)\b"
        r"|\b(PIPELINE|ARCHITECTURE|CLIENT_DEDUP|INTERFACES)(\.md)?('s)?,?\s+"
        r"(rules?|decisions?|pitfalls?|habits?|sections?|steps?)\s+[A-Z]?\.?[0-9]+"
        r"|\brules? of the house,?\s+(rule\s+)?[0-9]+"
        r"|\bdecisions?\s+[0-9]+"
        r"|\bpitfalls?\s+[A-Z]?\.?[0-9]+"
        r"|\bhabits?\s+[0-9]+", re.IGNORECASE)),
)

def blocks(text):
    """Comments joined into blocks: a run of // lines reads as one sentence, so
    "issue" at the end of one line and "17" on the next are still found.
    Yields (joined text, [(offset in joined text, offset in file)])."""
    joined, marks, last_end = "", [], None
    for offset, body in comments(text):
        between = text[last_end:offset - 2] if last_end is not None else None
        if between is None or between.strip() != "":
            if joined:
                yield joined, marks
            joined, marks = "", []
        elif joined:
            joined += " "
        marks.append((len(joined), offset))
        joined += body.replace("\n", " ")
        last_end = offset + len(body)
    if joined:
        yield joined, marks


def file_offset(marks, pos):
    for start, offset in reversed(marks):
        if pos >= start:
            return offset + (pos - start)
    return marks[0][1]


def allowed(kind, joined, match):
    if kind == "issue":
        return bool(OTHER_TRACKER.search(joined[max(0, match.start() - 60):match.start()]))
    return False


def findings(path, text):
    line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    lines = text.split("\n")
    found = []
    for joined, marks in blocks(text):
        for kind, pattern in RULES:
            for match in pattern.finditer(joined):
                if allowed(kind, joined, match):
                    continue
                offset = file_offset(marks, match.start())
                line = next(k for k in range(len(line_starts) - 1, -1, -1) if line_starts[k] <= offset)
                found.append((kind, line + 1, match.group(0), lines[line].strip()))
    return found


def main(argv):
    root = pathlib.Path(argv[1]).resolve() if len(argv) > 1 else pathlib.Path(__file__).resolve().parents[2]
    sources = sorted(p for d in SOURCE_DIRS for p in (root / d).rglob("*") if p.suffix in (".cc", ".h"))
    if len(sources) < 50:
        print(f"only {len(sources)} sources found under {root}: wrong root?")
        return 1
    counts, files = {kind: 0 for kind, _ in RULES}, {kind: set() for kind, _ in RULES}
    for path in sources:
        rel = path.relative_to(root)
        for kind, line, what, text in findings(rel, path.read_text(errors="replace")):
            counts[kind] += 1
            files[kind].add(rel)
            print(f"{rel}:{line}: {kind} '{what}': {text[:120]}")
    total = sum(counts.values())
    summary = ", ".join(f"{kind} {counts[kind]} in {len(files[kind])} files" for kind, _ in RULES)
    print(f"{len(sources)} production sources checked: {total} findings ({summary})")
    if total:
        print("cite a doc section by its title, move figures to docs/BENCHMARKS.md and history to git")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
