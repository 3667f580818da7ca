"""The comments of a C++ source, for the ops tests that read production
comments (comment_history_test.py, doc_citations_test.py).

comments(text) yields (offset, body) for every // and /* */ comment, in
order; string, character and raw-string literals are skipped (so a "//" or
an "issue 17" inside a string is not a comment), and numbers are read whole
(a digit separator, 1'000, is not a character literal)."""
import re

IDENT_START = re.compile(r"[A-Za-z_]")
IDENT = re.compile(r"[A-Za-z_0-9]*")
PP_NUMBER = re.compile(r"\.?[0-9](?:[eEpP][+-]|[A-Za-z0-9_.'])*")
STRING_PREFIXES = {"R", "L", "u", "U", "u8", "LR", "uR", "UR", "u8R"}


def comments(text):
    """Yields (offset, comment text) for every comment of a C++ source."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            yield i + 2, text[i + 2:end]
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end
            yield i + 2, text[i + 2:end]
            i = end + 2
        elif c in "\"'":
            i = skip_quoted(text, i, c)
        elif IDENT_START.match(c):
            m = IDENT.match(text, i + 1)
            word, j = text[i:m.end()], m.end()
            if word in STRING_PREFIXES and j < n and text[j] in "\"'":
                i = skip_raw(text, j) if word.endswith("R") and text[j] == '"' else skip_quoted(text, j, text[j])
            else:
                i = j
        elif c.isdigit():
            i = PP_NUMBER.match(text, i).end()
        else:
            i += 1


def skip_quoted(text, i, quote):
    i += 1
    while i < len(text) and text[i] != quote and text[i] != "\n":
        i += 2 if text[i] == "\\" else 1
    return i + 1


def skip_raw(text, i):
    open_paren = text.find("(", i)
    if open_paren < 0:
        return len(text)
    delim = text[i + 1:open_paren]
    end = text.find(")" + delim + '"', open_paren)
    return len(text) if end < 0 else end + len(delim) + 2
