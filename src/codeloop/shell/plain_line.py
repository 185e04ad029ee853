"""The words of a plain command line, read without the grammar.

Most lines a model runs are one command of plain words: `ls -la`, `git status`, `pytest -q`,
`grep -rn "def main" src`. Bash reads such a line by splitting it at blanks and taking quotes
off; nothing in it expands or runs anything else. Reading it here spares the first Bash call
loading tree-sitter's grammar (~1.3 ms: two extensions, page faults in 3.5 MB of tables) and
every call its parse. Anything else (an operator, a redirection, `$`, a backslash, a glob, a
tilde, a comment, an assignment, a reserved word, a blank other than a space, a character
outside printable ASCII) is left to the grammar: this reader only ever says "plain" or "ask the
grammar", and tests hold its words equal to those bash makes, and its parse to the grammar's
walk wherever the grammar reads the line right.
"""

from __future__ import annotations

__all__ = ["Word", "plain_words"]

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
# Characters bash gives no meaning to outside quotes.
_PLAIN = frozenset(f"{_LETTERS}0123456789_./:@%+,=-")
# What a double-quoted string may hold and still mean only itself.
_NOT_LITERAL_IN_DOUBLE_QUOTES = frozenset('$`\\"')
# What a command's name may hold and begin with: the grammar fails on some names bash runs (`a@`,
# `a%`, a leading digit read as a descriptor: `9x`), and this reader only stands in for it
# where it reads a line right; those go to the grammar, which asks.
_NAME = _PLAIN - {"@", "%", "="}
_NAME_START = frozenset(f"{_LETTERS}_./")
# First words after which bash reads syntax, not plain words: its reserved words, and the
# builtins that declare (`export a=b` assigns; the grammar gives them rules of their own).
_SYNTAX_HEADS = frozenset(
    {"if", "then", "elif", "else", "fi", "time", "for", "in", "until", "while", "do", "done"}
    | {"case", "esac", "coproc", "select", "function"}
    | {"export", "declare", "typeset", "local", "readonly", "unset"}
)

Word = tuple[int, int, str]  # start and end offsets in the line, text as bash passes it


def plain_words(line: str) -> list[Word] | None:
    """The words of `line` when it is one command of plain words, else None.

    A word is made of plain characters and quoted parts ('...' of anything printable, "..."
    without `$`, a backquote or a backslash); the first word is plain characters alone and
    begins with a letter, `_`, `.` or `/`, and is neither an assignment nor a word after which
    bash reads syntax."""
    if not (line.isascii() and line.isprintable()):  # no tab, newline or control character
        return None
    words: list[Word] = []
    i, size = 0, len(line)
    while i < size:
        if line[i] == " ":
            i += 1
            continue
        start, parts = i, []
        while i < size and line[i] != " ":
            char = line[i]
            if char in _PLAIN:
                end = i + 1
                while end < size and line[end] in _PLAIN:
                    end += 1
                parts.append(line[i:end])
            elif char in "'\"":
                end = line.find(char, i + 1)
                if end < 0:
                    return None
                body = line[i + 1 : end]
                if char == '"' and not _NOT_LITERAL_IN_DOUBLE_QUOTES.isdisjoint(body):
                    return None
                parts.append(body)
                end += 1
            else:
                return None
            i = end
        words.append((start, i, "".join(parts)))
    if not words:
        return None
    first_start, first_end, first = words[0]
    if first_end - first_start != len(first) or first[0] not in _NAME_START:
        return None  # quoted, or not a name the grammar reads as one
    if not _NAME.issuperset(first) or first in _SYNTAX_HEADS:
        return None  # an assignment, syntax, or a name the grammar misreads
    return words
