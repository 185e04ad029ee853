"""`LazyPattern`: a regular expression compiled the first time it is used, not at import.

Compiling a pattern costs ~0.2 ms; a module of tables declares dozens, and the Bash checker's
modules load with the first Bash call, whose cost the user waits for. A `LazyPattern` is
declared where `re.compile` was and answers the same methods, so each pattern is paid for by
the first line that needs it, once per process. A pattern every match of which holds one of a
few characters (`needs`) answers a string without any of them at once: it cannot match, and
the everyday line (`echo 1`, `ls src`) then compiles none of the patterns of its rare shapes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import AnyStr, Generic


class LazyPattern(Generic[AnyStr]):
    """`re.compile(pattern, flags)`, deferred to the first match. `needs`: characters of
    which every match holds at least one (a promise about `pattern`, not checked)."""

    __slots__ = ("_compiled", "_flags", "_needs", "_pattern")

    def __init__(self, pattern: AnyStr, flags: int = 0, *, needs: AnyStr | None = None) -> None:
        self._pattern: AnyStr = pattern
        self._flags = flags
        self._needs: AnyStr | None = needs
        self._compiled: re.Pattern[AnyStr] | None = None

    @property
    def compiled(self) -> re.Pattern[AnyStr]:
        if self._compiled is None:  # two threads may both compile it: the same pattern
            self._compiled = re.compile(self._pattern, self._flags)
        return self._compiled

    def _hopeless(self, string: AnyStr) -> bool:
        """No match can be in `string`: it holds none of the characters every match needs."""
        return self._needs is not None and not any(c in string for c in self._needs)

    def match(self, string: AnyStr, pos: int = 0) -> re.Match[AnyStr] | None:
        return None if self._hopeless(string) else self.compiled.match(string, pos)

    def fullmatch(self, string: AnyStr) -> re.Match[AnyStr] | None:
        return None if self._hopeless(string) else self.compiled.fullmatch(string)

    def search(self, string: AnyStr, pos: int = 0) -> re.Match[AnyStr] | None:
        return None if self._hopeless(string) else self.compiled.search(string, pos)

    def finditer(self, string: AnyStr) -> Iterator[re.Match[AnyStr]]:
        return iter(()) if self._hopeless(string) else self.compiled.finditer(string)

    def sub(
        self, repl: AnyStr | Callable[[re.Match[AnyStr]], AnyStr], string: AnyStr, count: int = 0
    ) -> AnyStr:
        return string if self._hopeless(string) else self.compiled.sub(repl, string, count)
