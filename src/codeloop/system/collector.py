"""The cyclic garbage collector held off while a command-line run starts, and back once its
session is built.

Start-up makes tens of thousands of objects that live as long as the process (modules,
classes, functions) and almost no garbage in cycles: the ~80 young collections that ran
meanwhile found ~1,300 objects in all, for ~4 % of a one-turn run's instructions. Once the
session is built, what start-up made is frozen (no collection examines it again, a long
session's full ones included) and collection resumes. Only the command line holds it off: a
program using codeloop as a library keeps its collector as it set it.
"""

from __future__ import annotations

import gc

_held = [False]  # whether hold() turned the collector off (and resume() has yet to)


def hold() -> None:
    """Collect nothing until `resume()`; nothing changes if collection is off already."""
    if gc.isenabled():
        gc.disable()
        _held[0] = True


def resume() -> None:
    """Freeze what exists and collect again, if `hold()` stopped collecting; else nothing."""
    if _held[0]:
        _held[0] = False
        gc.freeze()
        gc.enable()
