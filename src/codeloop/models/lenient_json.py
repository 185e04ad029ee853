"""Tool arguments as weak models write them: JSON with the slips they commonly make.

Every provider's tool input reaches the loop through here (the assembler, and the `local:`
envelope), so a call is refused only when its arguments cannot be read at all. Strict JSON is
tried first; then, outside strings, a code fence around the object is dropped, single-quoted
strings and bare keys are quoted, trailing commas removed, and Python's True/False/None read
as JSON's. Raw control characters inside strings pass (llama.cpp's grammars let a newline
through). A leaf: it imports only the standard library and the system helpers; its patterns
compile with the first slip to repair, not with the first tool call (~0.5 ms of its gap).
"""

from __future__ import annotations

import json
import re
from typing import Any

from codeloop.system.lazy_pattern import LazyPattern

_FENCE = LazyPattern(r"^\s*```[\w-]*[ \t]*\n?(.*?)\n?[ \t]*```\s*$", re.DOTALL)
_BARE_WORD = LazyPattern(r"[A-Za-z_$][\w$-]*")  # a key when a colon follows
_COLON_AHEAD = LazyPattern(r"\s*:")
_CLOSING_AHEAD = LazyPattern(r"\s*(?:[}\]]|$)")
# `\'`, which JSON does not know, in a double-quoted string.
_QUOTE_ESCAPE = LazyPattern(r"(?<!\\)\\'")
_PYTHON_WORDS = {"True": "true", "False": "false", "None": "null"}


def loads_lenient(raw: str) -> Any:
    """`raw` as JSON, read leniently; raises ValueError (json.JSONDecodeError) when even the
    repaired text is not JSON, with the strict parser's message for the original text."""
    try:
        return json.loads(raw, strict=False)
    except json.JSONDecodeError as strict_error:
        fenced = _FENCE.match(raw)
        repaired = _repaired(fenced[1] if fenced else raw)
        try:
            return json.loads(repaired, strict=False)
        except json.JSONDecodeError:
            raise strict_error from None


def _repaired(text: str) -> str:
    """One pass over `text`, copying strings (re-quoted as JSON's when single-quoted) and
    mending what lies between them."""
    out: list[str] = []
    i, size = 0, len(text)
    while i < size:
        char = text[i]
        if char in "\"'":
            end = _string_end(text, i)
            body = text[i + 1 : end]
            out.append(_quoted(body, char))
            i = end + 1
        elif char == ",":
            if not _CLOSING_AHEAD.match(text, i + 1):
                out.append(char)  # a comma before a closing bracket (or the end) is dropped
            i += 1
        elif word := _BARE_WORD.match(text, i):
            is_key = _COLON_AHEAD.match(text, word.end()) is not None
            out.append(f'"{word[0]}"' if is_key else _PYTHON_WORDS.get(word[0], word[0]))
            i = word.end()
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _string_end(text: str, start: int) -> int:
    """The index of the quote closing the string opened at `start` (the end when unclosed)."""
    quote, i = text[start], start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i
        i += 1
    return len(text)


def _quoted(body: str, quote: str) -> str:
    """A string's body as a JSON string: `\\'` unescaped, and when it was single-quoted, its
    double quotes escaped."""
    body = _QUOTE_ESCAPE.sub("'", body)
    if quote == "'":
        body = re.sub(r'(?<!\\)"', r"\"", body)
    return f'"{body}"'
