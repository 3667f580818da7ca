#!/usr/bin/env python3
"""Titles that production comments cite must exist in the document they name.

Comments cite a design rule by its title, not by a number that can shift:
"(PIPELINE.md, the first-ack rule)", "Delivery timeout and unresolved
sequences (PIPELINE.md)", "(ARCHITECTURE.md, Bounded everything)". This check
reads the comments (// and /* */; string literals are skipped) of every
.cc/.h file under proxy/, metrics/, config/ and daemon/, finds each citation
of a document below, and fails when the cited title is not a title of that
document, listing FILE:LINE.

Documents (a path before the name is optional: "docs/design/PIPELINE.md"):
  PIPELINE.md, ARCHITECTURE.md, CLIENT_DEDUP.md, INTERFACES.md, SPOOL.md (docs/design/),
  BENCHMARKS.md, BENCHMARKS_RECORDS.md, TESTING.md (docs/).

A document's titles are its markdown headings (any level) and its bold
phrases (**...**).

Citation forms (consecutive comment lines are read as one text, so a
citation may wrap; quotes may be "straight" or “curly”):
  1. Quoted titles right after the name, separated by commas, colons or
     "and":      PIPELINE.md, "Answer by the client's deadline"
                 ARCHITECTURE.md, "Bounded everything", "Overdraft"
  2. A quoted title right before the name, joined by a comma, "(", "in",
     "of" or "see":   "Bounded everything" (ARCHITECTURE.md)
                      ("Possible duplicates", PIPELINE.md)
                      "Epoch bump" in PIPELINE.md
  3. Inside parentheses that hold the name, in the same ";"-separated part:
     every quoted string is a title; when there is none, the unquoted
     ","-separated parts without digits and of at most eight words are
     alternatives, of which at least one must be a title (the others may be
     prose: "(the lazy reset of a stale partition, PIPELINE.md, draining
     rules)"); an unquoted title ends at ":" ("decisions: one run per
     partition" cites "decisions"):
                 (PIPELINE.md, the first-ack rule)
                 (idle retirement, PIPELINE.md)
                 (ARCHITECTURE.md rule 5, "Fair share")
     A quoted string before "(" is a citation only when the parentheses
     hold nothing but the name: in '"maybe appended" (PIPELINE.md,
     "Response handling")' only "Response handling" is cited.
  4. "section X" right after the name, X a letter: a heading that starts
     with "X." must exist (PIPELINE.md section B).
Not citations: a bare name ("see docs/design/PIPELINE.md."), unquoted text
outside the parentheses ("The daemon's wiring on one libuv loop
(ARCHITECTURE.md)" points at the document; to cite a title that way, quote
it: "Delivery timeout and unresolved sequences" (PIPELINE.md)), and
numbered references ("rule 5", "C.4"), which comment_history_test.py
refuses on its own.

Matching ignores case, quotes, backticks and runs of spaces. A cited title
matches a document title when, after dropping a leading "the"/"a"/"an"
from both, it occurs in that title as whole words (so "the first-ack rule"
matches "**The first-ack rule**" and "Learning the window" matches
"### C.5 Learning the window"). A trailing " rule"/" rules" of the cited
title may be left off for the match ("the draining rule" finds "Draining
rules" by "draining").

Usage: doc_citations_test.py [ROOT] [--self-test] [--list]
  ROOT defaults to the repository of this file. --self-test runs the parser
  on a bogus citation and checks it is reported (and a good one is not).
  --list prints every citation found, as FILE:LINE: DOCUMENT KIND TITLE.
"""
import pathlib
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cpp_comments import comments  # noqa: E402

SOURCE_DIRS = ("proxy", "metrics", "config", "daemon")
DOCS = {
    "PIPELINE.md": "docs/design/PIPELINE.md",
    "ARCHITECTURE.md": "docs/design/ARCHITECTURE.md",
    "CLIENT_DEDUP.md": "docs/design/CLIENT_DEDUP.md",
    "INTERFACES.md": "docs/design/INTERFACES.md",
    "SPOOL.md": "docs/design/SPOOL.md",
    "BENCHMARKS.md": "docs/BENCHMARKS.md",
    "BENCHMARKS_RECORDS.md": "docs/BENCHMARKS_RECORDS.md",
    "TESTING.md": "docs/TESTING.md",
}

# Citations known not to resolve, each a (document, cited title) with the
# reason; listed here so the check passes while the fix waits for the owner
# of the document or the comment. Keep it short: every entry is a finding.
KNOWN_UNRESOLVED = {
    # CLIENT_DEDUP.md's rules are the rows of a table, without titles; the
    # same-epoch rule is row 4. Fix: give the rows bold names there.
    ("CLIENT_DEDUP.md", "the same-epoch rule"),
}

DOC_NAME = re.compile(r"(?:[\w./-]*/)?\b(" + "|".join(re.escape(n) for n in DOCS) + r")(?!\w)")
QUOTES = "\"“”"
QUOTED = r"[\"“”]([^\"“”]{1,200})[\"“”]"
AFTER = re.compile(r"\A(?:[\s,:]*(?:and\s+)?" + QUOTED + r")+")
AFTER_ONE = re.compile(r"[\s,:]*(?:and\s+)?" + QUOTED)
BEFORE = re.compile(QUOTED + r"[\s,]*(?:\(\s*)?(?:(?:in|of|see)\s+)?(?:[\w./-]*/)?\Z", re.IGNORECASE)
SECTION = re.compile(r"\A,?\s*sections?\s+([A-Z])\b")

def comment_blocks(text):
    """Joins comments on consecutive lines into blocks. Yields (block text,
    [(block offset, line number)]): the line of any offset in the block is
    that of the last entry at or before it."""
    block, lines, last_line = "", [], None
    for offset, body in comments(text):
        first_line = text.count("\n", 0, offset) + 1
        if last_line is not None and first_line > last_line + 1:
            yield block, lines
            block, lines = "", []
        for k, part in enumerate(body.split("\n")):
            part = re.sub(r"^\s*\*(?!/)", " ", part) if k else part
            lines.append((len(block), first_line + k))
            block += part.strip() + " "
        last_line = first_line + body.count("\n")
    if lines:
        yield block, lines


def line_of(lines, offset):
    line = lines[0][1]
    for start, number in lines:
        if start > offset:
            break
        line = number
    return line


# --------------------------------------------------------------- citations

def enclosing_parens(block, start, end):
    """The innermost (...) of the block around [start, end), or None."""
    depth, open_at = 0, None
    for i in range(start - 1, -1, -1):
        if block[i] == ")":
            depth += 1
        elif block[i] == "(":
            if depth == 0:
                open_at = i
                break
            depth -= 1
    if open_at is None:
        return None
    depth = 0
    for j in range(end, len(block)):
        if block[j] == "(":
            depth += 1
        elif block[j] == ")":
            if depth == 0:
                return open_at, j
            depth -= 1
    return None


def citations(block):
    """Yields (offset, document, kind, cited) for each citation in a block."""
    for m in DOC_NAME.finditer(block):
        doc, start, end = m.group(1), m.start(), m.end()
        found = []
        after = AFTER.match(block, end)
        if after:
            for q in AFTER_ONE.finditer(block, end, after.end()):
                found.append((q.start(1), "title", q.group(1)))
        before = BEFORE.search(block, max(0, start - 220), start)
        if before and "(" in block[before.end(1):start] and not re.match(r"\s*\)", block[end:]):
            before = None  # '"x" (DOC.md, ...)': the parentheses cite, "x" is prose
        if before:
            found.append((before.start(1), "title", before.group(1)))
        section = SECTION.match(block[end:])
        if section:
            found.append((end, "section", section.group(1)))
        parens = enclosing_parens(block, start, end)
        if parens:
            found.extend(in_parens(block, parens, start, end))
        seen = set()
        for offset, kind, cited in found:
            key = (kind, normalise(cited))
            if key not in seen:
                seen.add(key)
                yield offset, doc, kind, cited.strip()


def in_parens(block, parens, start, end):
    """Titles cited inside the parentheses holding a document name, in its
    ';'-separated part: every quoted string; or, when there is none, the short
    unquoted ','-separated parts as one citation of alternatives."""
    lo, hi = parens[0] + 1, parens[1]
    part_lo = max(block.rfind(";", lo, start) + 1, lo)
    part_hi = block.find(";", end, hi)
    part_hi = hi if part_hi < 0 else part_hi
    part = block[part_lo:part_hi]
    quoted = list(re.finditer(QUOTED, part))
    for q in quoted:
        yield part_lo + q.start(1), "title", q.group(1)
    if quoted:
        return
    candidates, offset, first = [], part_lo, None
    for piece in part.split(","):
        text = piece.split(":")[0].strip()
        here = offset
        offset += len(piece) + 1
        if not text or DOC_NAME.search(text) or re.search(r"[0-9]", text):
            continue
        if len(text.split()) > 8 or not re.search(r"[A-Za-z]", text):
            continue
        candidates.append(text)
        first = here if first is None else first
    if candidates:
        yield first, "any", " / ".join(candidates)


# ------------------------------------------------------------------ titles

ARTICLE = re.compile(r"^(the|a|an)\s+")


def normalise(text):
    text = text.lower()
    text = re.sub(r"[`*_" + QUOTES + r"’']", lambda m: "'" if m.group(0) in "’'" else "", text)
    text = re.sub(r"\s+", " ", text).strip(" .,;:")
    return ARTICLE.sub("", text)


def doc_titles(path):
    text = path.read_text(encoding="utf-8")
    titles = []
    in_code = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        m = re.match(r"^#{1,6}\s+(.*)$", line)
        if m:
            titles.append(m.group(1))
    titles += re.findall(r"\*\*([^*]+?)\*\*", re.sub(r"```.*?```", "", text, flags=re.DOTALL))
    headings = [t for t in titles if t]
    return [normalise(t) for t in headings], [h for h in headings]


def matches(cited, titles):
    wanted = {normalise(cited)}
    wanted.add(re.sub(r"\s+rules?$", "", next(iter(wanted))))
    for w in wanted:
        if not w:
            continue
        pattern = re.compile(r"(?<![\w-])" + re.escape(w) + r"(?![\w-])")
        if any(pattern.search(t) for t in titles):
            return True
    return False


def section_exists(letter, raw_headings):
    return any(re.match(r"^" + letter + r"\.(\s|\d|$)", h) for h in raw_headings)


# -------------------------------------------------------------------- check

def known_unresolved(doc, cited):
    return (doc, normalise(cited)) in {(d, normalise(t)) for d, t in KNOWN_UNRESOLVED}


def check_text(name, text, titles_by_doc, listing=None):
    """Findings for one source: (line, message)."""
    findings = []
    for block, lines in comment_blocks(text):
        for offset, doc, kind, cited in citations(block):
            if listing is not None:
                listing.append("%s:%d: %s %s %s" % (name, line_of(lines, offset), doc, kind, cited))
            if doc not in titles_by_doc:
                continue
            normalised, raw = titles_by_doc[doc]
            if kind == "section":
                ok = section_exists(cited, raw)
                what = "section " + cited
            elif kind == "any":
                ok = any(matches(c, normalised) or known_unresolved(doc, c) for c in cited.split(" / "))
                what = "none of: " + ", ".join('"%s"' % c for c in cited.split(" / "))
            else:
                ok = matches(cited, normalised) or known_unresolved(doc, cited)
                what = '"' + cited + '"'
            if not ok:
                findings.append((line_of(lines, offset), "%s cites %s, which %s does not have as a heading "
                                 "or bold title" % (doc, what, DOCS[doc])))
    return findings


def load_titles(root):
    titles = {}
    for name, rel in DOCS.items():
        path = root / rel
        if path.exists():
            titles[name] = doc_titles(path)
    return titles


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    root = pathlib.Path(args[0]) if args else pathlib.Path(__file__).resolve().parents[2]
    titles = load_titles(root)
    if "--self-test" in argv:
        return self_test(titles)
    findings, files, cited = [], 0, 0
    listing = [] if "--list" in argv else None
    for top in SOURCE_DIRS:
        for path in sorted((root / top).rglob("*")):
            if path.suffix not in (".cc", ".h") or not path.is_file():
                continue
            files += 1
            text = path.read_text(encoding="utf-8", errors="replace")
            cited += sum(1 for block, _ in comment_blocks(text) for _ in citations(block))
            for line, message in check_text(path.relative_to(root), text, titles, listing):
                findings.append("%s:%d: %s" % (path.relative_to(root), line, message))
    for entry in listing or []:
        print(entry)
    for f in findings:
        print(f)
    print("%d citation(s) of %d document title(s) in %d file(s): %d unresolved"
          % (cited, sum(len(t[0]) for t in titles.values()), files, len(findings)))
    return 1 if findings else 0


def self_test(titles):
    """The check must catch a bogus title in each citation form and pass a
    real one. Run with --self-test; ctest runs it beside the real check."""
    bogus = '''
// A made-up rule (docs/design/PIPELINE.md, "The no-such-rule rule").
int a;
// Wrapped over lines: "Bounded
// nothing at all" (ARCHITECTURE.md).
int b;
// (PIPELINE.md, the imaginary rule)
int c;
/* Layout in PIPELINE.md section Q. */
// (a description only, PIPELINE.md, nor a title)
'''
    good = '''
// (docs/design/PIPELINE.md, "Answer by the client's deadline")
// Bounded everything (ARCHITECTURE.md); "Fair share" of ARCHITECTURE.md.
// (PIPELINE.md, the first-ack rule) and (idle retirement, PIPELINE.md).
// Both mean "maybe appended" (docs/design/PIPELINE.md, "Response handling").
// (the lazy reset of a stale partition, PIPELINE.md, draining rules)
// (start-up only, "Peer-caused errors are values", ARCHITECTURE.md)
const char* s = "(PIPELINE.md, \\"not a comment\\")";
'''
    found = check_text("bogus.cc", bogus, titles)
    lines = sorted(line for line, _ in found)
    clean = check_text("good.cc", good, titles)
    for line, message in found:
        print("bogus.cc:%d: %s" % (line, message))
    for line, message in clean:
        print("good.cc:%d: (should pass) %s" % (line, message))
    ok = lines == [2, 4, 7, 9, 10] and not clean
    print("self-test: %s (bogus findings at lines %s, expected [2, 4, 7, 9, 10]; %d false finding(s))"
          % ("ok" if ok else "FAILED", lines, len(clean)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
