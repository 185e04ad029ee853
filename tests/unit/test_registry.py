"""The built-in tools load lazily, and the specs the model sees are the ones they declare."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from pathlib import Path

from codeloop.events import ToolStarted
from codeloop.permissions.policy import Policy
from codeloop.session import Session
from codeloop.session_config import SessionConfig
from codeloop.system.lull import lull, lull_steps_done
from codeloop.testing.scenario import tool_use, turn
from codeloop.testing.scripted import ScriptedModel
from codeloop.tools.base import Workspace
from codeloop.tools.bash import BashTool
from codeloop.tools.registry import (
    ON_DEMAND,
    PRELOAD_AFTER_SECONDS,
    LazyTool,
    declared_specs,
    default_tools,
    on_demand_tool,
    preload,
    preload_soon,
    warm_in_lulls,
)


def test_stored_specs_match_what_the_tools_declare() -> None:
    stored = {name: tool.spec() for name, tool in default_tools().items()}
    for name, _ in ON_DEMAND:  # only their specs are looked at
        stored[name] = on_demand_tool(name, lambda: default_tools()["Read"]).spec()
    assert stored == declared_specs(), "run `python -m codeloop.tools.registry` to regenerate"


def test_a_session_starts_without_importing_pydantic_or_the_tools() -> None:
    code = (
        "import asyncio, sys\n"
        "from codeloop.builder import build_session\n"
        "from codeloop.options import Options\n"
        "s = asyncio.run(build_session(Options(model='claude-sonnet-4-5', "
        "env={'ANTHROPIC_API_KEY': 'k', 'CODELOOP_HOME': sys.argv[1]})))\n"
        "specs = [t.spec() for t in s.tools.values()]\n"
        "loaded = sorted(m for m in sys.modules if m == 'pydantic' "
        "or m.startswith('codeloop.tools.') and m.split('.')[-1] in "
        "('bash', 'search', 'files_read', 'files_write'))\n"
        "print(','.join(loaded))\n"
    )
    import tempfile

    with tempfile.TemporaryDirectory() as home:
        out = subprocess.run(
            [sys.executable, "-c", code, home], capture_output=True, text=True, check=True
        )
    assert out.stdout.strip() == ""


def test_the_tools_load_and_check_their_inputs_without_pydantic() -> None:
    """pydantic and its first model cost the first tool call ~130 ms: no built-in tool needs it
    to load, to be described or to check a call's input."""
    code = (
        "import sys\n"
        "from codeloop.tools.registry import BUILTINS, ON_DEMAND, _construct\n"
        "from codeloop.tools.base import ToolInputError\n"
        "for name, target in (*BUILTINS, *ON_DEMAND):\n"
        "    tool = _construct(target)\n"
        "    tool.spec()\n"
        "    try:\n"
        "        tool.parse({'unknown': 1})\n"
        "    except ToolInputError:\n"
        "        pass\n"
        "print('pydantic' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_lazy_tool_loads_and_runs_on_first_use() -> None:
    tools = default_tools()
    read = tools["Read"]
    args = read.parse({"file_path": "x"})
    assert read.is_read_only(args)
    assert type(read).__name__ == "LazyTool"


def test_preload_loads_every_lazy_tool_in_a_thread_of_its_own() -> None:
    tools = default_tools()
    lazy = [tool for tool in tools.values() if isinstance(tool, LazyTool)]
    thread = preload(tools.values())
    assert thread is not None and thread is not threading.current_thread()
    thread.join()
    assert lazy and all(tool.loaded for tool in lazy)
    assert tools["Bash"].parse({"command": "true"}).command == "true"
    assert preload(tools.values()) is None  # nothing left to load: no thread


async def test_preload_soon_loads_a_tool_the_call_has_not_loaded_meanwhile() -> None:
    """A model writing its call: the tool loads a moment after the call began. (One that came
    whole loads its tool itself before then, and `preload` starts no thread for it.)"""
    tool = default_tools()["Bash"]
    assert isinstance(tool, LazyTool) and not tool.loaded
    loop = asyncio.get_running_loop()
    preload_soon([tool])
    passed = asyncio.Event()
    loop.call_later(PRELOAD_AFTER_SECONDS, passed.set)  # due with it or after: runs after it
    await passed.wait()
    for thread in threading.enumerate():
        if thread.name == "codeloop-preload":
            thread.join()
    assert tool.loaded


async def test_the_tools_load_when_the_model_starts_its_first_call(tmp_path: Path) -> None:
    """Bash loads while its call streams; Grep, never called, only with the next request (so
    loading it does not slow the first call down); a text answer (no call) loads nothing."""
    calls = [turn(tool_use("Bash", {"command": "echo hi"})), turn("done")]
    for script, expect_loaded in ((calls, True), ([turn("just text")], False)):
        session = Session(
            ScriptedModel(script),
            default_tools(),
            Workspace(cwd=tmp_path),
            SessionConfig("claude-sonnet-4-5", "test", 1024, policy=Policy("bypassPermissions")),
        )
        bash, grep = session.tools["Bash"], session.tools["Grep"]
        assert isinstance(bash, LazyTool) and isinstance(grep, LazyTool)
        async for event in session.submit("go"):
            if isinstance(event, ToolStarted):  # the call streamed whole: preload is under way
                assert any(t.name == "codeloop-preload" for t in threading.enumerate()) or (
                    bash.loaded
                )
                assert not grep.loaded
        for thread in threading.enumerate():
            if thread.name == "codeloop-preload":
                thread.join()
        assert grep.loaded is expect_loaded
        await session.aclose()


def test_a_warming_tool_is_handed_out_once_its_warm_up_is_done() -> None:
    """A call that comes while the preload thread warms its tool (a model that answered at
    once) waits for the whole warm-up, not module by module; a failed warm-up still hands the
    tool out (its call reports what is wrong)."""
    warming, release = threading.Event(), threading.Event()

    class SlowBash(BashTool):
        def warm(self) -> None:
            warming.set()
            release.wait()
            raise RuntimeError("the grammar is missing")

    tool = LazyTool(default_tools()["Bash"].spec(), SlowBash)
    thread = preload([tool])
    assert thread is not None
    warming.wait()
    assert not tool.loaded  # loaded, not warm: callers wait on it
    release.set()
    thread.join()
    assert isinstance(tool.tool, SlowBash)


async def test_behind_a_transport_marking_its_waits_the_tools_load_one_by_one_in_lulls() -> None:
    """After the first tool round, the other tools load in the next request's waits on the
    network (codeloop's transport marks them), not in a thread competing with the answer."""
    with lull().waiting():  # an earlier wait: the foreground marks its waits
        pass
    tools = default_tools()
    lazy = [tool for tool in tools.values() if isinstance(tool, LazyTool)]
    warm_in_lulls(tools.values())
    for _ in range(5):  # the steps' turns come and go: no lull, nothing loads
        await asyncio.sleep(0)
    assert not any(tool.loaded for tool in lazy)
    assert not any(t.name == "codeloop-preload" for t in threading.enumerate())
    with lull().waiting():
        await asyncio.wait_for(lull_steps_done(), 60)
    assert all(tool.loaded for tool in lazy)
