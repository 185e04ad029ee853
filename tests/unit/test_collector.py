"""Holding the garbage collector off and resuming it; a library user's collector is left as
it was set. That a command-line run gets it back: test_startup_imports.py."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from codeloop.system.collector import hold, resume


@pytest.fixture
def collector_restored() -> Iterator[None]:
    was = gc.isenabled()
    yield
    gc.unfreeze()
    (gc.enable if was else gc.disable)()


@pytest.mark.usefixtures("collector_restored")
def test_hold_stops_collecting_until_resume_which_freezes_what_exists() -> None:
    gc.enable()
    hold()
    assert not gc.isenabled()
    resume()
    assert gc.isenabled() and gc.get_freeze_count() > 0
    resume()  # once only: a second resume changes nothing
    gc.unfreeze()
    resume()
    assert gc.get_freeze_count() == 0


@pytest.mark.usefixtures("collector_restored")
def test_a_collector_turned_off_by_its_program_stays_off() -> None:
    gc.disable()
    hold()
    resume()
    assert not gc.isenabled() and gc.get_freeze_count() == 0
