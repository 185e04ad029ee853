"""`LazyPattern`: a regular expression compiled the first time it is used, not at import.

Compiling a pattern costs ~0.2 ms; a module of tables declares dozens, and the Bash checker's
modules load with the first Bash call, whose cost the user waits for. A `LazyPattern` is
declared where `re.compile` was and answers the same methods, so each pattern is paid for by
the first line that needs it, once per process.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import AnyStr, Generic


class LazyPattern(Generic[AnyStr]):
    """`re.compile(pattern, flags)`, deferred to the first match."""

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: AnyStr, flags: int = 0) -> None:
        self._pattern: AnyStr = pattern
        self._flags = flags
        self._compiled: re.Pattern[AnyStr] | None = None

    @property
    def compiled(self) -> re.Pattern[AnyStr]:
        if self._compiled is None:  # two threads may both compile it: the same pattern
            self._compiled = re.compile(self._pattern, self._flags)
        return self._compiled

    def match(self, string: AnyStr, pos: int = 0) -> re.Match[AnyStr] | None:
        return self.compiled.match(string, pos)

    def fullmatch(self, string: AnyStr) -> re.Match[AnyStr] | None:
        return self.compiled.fullmatch(string)

    def search(self, string: AnyStr, pos: int = 0) -> re.Match[AnyStr] | None:
        return self.compiled.search(string, pos)

    def finditer(self, string: AnyStr) -> Iterator[re.Match[AnyStr]]:
        return self.compiled.finditer(string)

    def sub(
        self, repl: AnyStr | Callable[[re.Match[AnyStr]], AnyStr], string: AnyStr, count: int = 0
    ) -> AnyStr:
        return self.compiled.sub(repl, string, count)
