"""The command line holds the garbage collector off while it starts, and every run gets it
back once its session is built; a library user's collector is left as it was set."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeloop.system.collector import hold, resume
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, turn


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


def test_a_headless_run_collects_again_once_its_session_is_built(tmp_path: Path) -> None:
    with FakeModelServer(Scenario(turns=(turn("hello"),))) as server:
        env = {
            "ANTHROPIC_BASE_URL": server.anthropic_base_url,
            "ANTHROPIC_API_KEY": "k",
            "CODELOOP_HOME": str(tmp_path / "home"),
        }
        code = (
            "import contextlib, gc, io, os\n"
            f"os.environ.update({env!r})\n"
            "from codeloop.__main__ import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    main(['-p', 'hi', '--model', 'anthropic:claude-sonnet-4-5'])\n"
            "print(gc.isenabled(), gc.get_freeze_count() > 0)\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
        )
        assert len(server.requests) == 1
    assert out.stdout.split() == ["True", "True"]
