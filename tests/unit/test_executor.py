"""The streaming tool executor: ordering, exclusivity of writers, sibling abort, user abort."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, ClassVar

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeloop.events import ToolFinished, ToolStarted
from codeloop.tools.base import Tool, ToolContext, ToolResult, Workspace
from codeloop.tools.executor import ToolExecutor
from codeloop.tools.input import ToolInput
from codeloop.tools.permission import PermissionDecision
from codeloop.types import ToolUseBlock


class WorkInput(ToolInput):
    ms: int = 0
    after: str = ""  # the call whose end this one waits for (proof that they run together)
    fail: bool = False
    safe: bool = True


class Journal:
    """Records start/end of every call, in the order they happened."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, str]] = []
        self.running: set[str] = set()
        self.overlaps: list[tuple[str, frozenset[str]]] = []
        self.ends: dict[str, asyncio.Event] = {}

    def ended(self, tool_use_id: str) -> asyncio.Event:
        return self.ends.setdefault(tool_use_id, asyncio.Event())


class WorkTool(Tool[WorkInput]):
    name: ClassVar[str] = "Work"
    description: ClassVar[str] = "test tool"
    input_model = WorkInput

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def is_read_only(self, args: WorkInput) -> bool:
        return args.safe

    async def call(self, args: WorkInput, ctx: ToolContext) -> ToolResult:
        j = self.journal
        j.entries.append(("start", ctx.tool_use_id))
        if j.running:
            j.overlaps.append((ctx.tool_use_id, frozenset(j.running)))
        j.running.add(ctx.tool_use_id)
        try:
            if args.after:
                await asyncio.wait_for(j.ended(args.after).wait(), timeout=30)
            if args.ms:
                abort_wait = asyncio.ensure_future(ctx.abort.wait())
                await asyncio.wait({abort_wait}, timeout=args.ms / 1000)
                abort_wait.cancel()
                if ctx.abort.is_set():
                    return ToolResult.error("stopped")
            if args.fail:
                return ToolResult.error(f"{ctx.tool_use_id} failed")
            return ToolResult(f"{ctx.tool_use_id} ok")
        finally:
            j.running.discard(ctx.tool_use_id)
            j.entries.append(("end", ctx.tool_use_id))
            j.ended(ctx.tool_use_id).set()


class BashLike(WorkTool):
    name: ClassVar[str] = "Bash"


async def allow_all(tool: Any, args: Any, ctx: ToolContext) -> PermissionDecision:
    return PermissionDecision(True)


def make_executor(journal: Journal, tmp: Path, **kw: Any) -> ToolExecutor:
    tools = {"Work": WorkTool(journal), "Bash": BashLike(journal)}
    return ToolExecutor(tools, Workspace(cwd=tmp), allow_all, **kw)


def use(i: int, name: str = "Work", **inp: Any) -> ToolUseBlock:
    return ToolUseBlock(f"t{i}", name, inp)


async def drain(executor: ToolExecutor) -> list[ToolFinished]:
    return [e async for e in executor.remaining() if isinstance(e, ToolFinished)]


async def test_results_come_in_call_order_not_finish_order(tmp_path: Path) -> None:
    journal = Journal()
    ex = make_executor(journal, tmp_path)
    ex.add(use(0, after="t1"))  # t0 can only end once t1 has: they must run together
    ex.add(use(1))
    ex.add(use(2, after="t1"))
    results = await drain(ex)
    assert [r.tool_use.id for r in results] == ["t0", "t1", "t2"]
    # t1 ended before t0 did, and the results still came in call order
    assert journal.entries.index(("end", "t1")) < journal.entries.index(("end", "t0"))


async def test_writer_runs_alone_and_keeps_its_place(tmp_path: Path) -> None:
    journal = Journal()
    ex = make_executor(journal, tmp_path)
    ex.add(use(0, ms=5))
    ex.add(use(1, ms=5, safe=False))
    ex.add(use(2, ms=1))
    await drain(ex)
    assert journal.entries == [
        ("start", "t0"),
        ("end", "t0"),
        ("start", "t1"),
        ("end", "t1"),
        ("start", "t2"),
        ("end", "t2"),
    ]


async def test_failing_bash_cancels_running_siblings(tmp_path: Path) -> None:
    journal = Journal()
    ex = make_executor(journal, tmp_path)
    ex.add(use(0, ms=5000))
    ex.add(use(1, "Bash", fail=True))
    ex.add(use(2, ms=1))
    results = await drain(ex)
    by_id = {r.tool_use.id: r.result for r in results}
    assert by_id["t1"].is_error and "t1 failed" in by_id["t1"].text
    assert by_id["t0"].is_error and "parallel Bash call failed" in by_id["t0"].text
    assert by_id["t2"].is_error and "parallel Bash call failed" in by_id["t2"].text


async def test_failing_other_tool_does_not_cancel_siblings(tmp_path: Path) -> None:
    ex = make_executor(Journal(), tmp_path)
    ex.add(use(0, ms=20))
    ex.add(use(1, fail=True))
    results = await drain(ex)
    assert not results[0].result.is_error
    assert results[1].result.is_error


async def test_unknown_tool_and_bad_input_get_error_results(tmp_path: Path) -> None:
    ex = make_executor(Journal(), tmp_path)
    ex.add(ToolUseBlock("a", "Nope", {}))
    ex.add(ToolUseBlock("b", "Work", {"ms": "soon"}))
    ex.add(ToolUseBlock("c", "Work", {}, input_error="tool input is not valid JSON"))
    results = await drain(ex)
    assert [r.result.is_error for r in results] == [True, True, True]
    assert "No such tool: Nope" in results[0].result.text
    assert "InputValidationError" in results[1].result.text
    assert "InputValidationError" in results[2].result.text


async def test_tool_that_raises_becomes_error_result(tmp_path: Path) -> None:
    class Boom(WorkTool):
        name: ClassVar[str] = "Boom"

        async def call(self, args: WorkInput, ctx: ToolContext) -> ToolResult:
            raise RuntimeError("kaput")

    ex = ToolExecutor({"Boom": Boom(Journal())}, Workspace(cwd=tmp_path), allow_all)
    ex.add(ToolUseBlock("x", "Boom", {}))
    (result,) = await drain(ex)
    assert result.result.is_error and "RuntimeError: kaput" in result.result.text


async def test_permission_denial_is_an_error_result(tmp_path: Path) -> None:
    async def deny(tool: Any, args: Any, ctx: ToolContext) -> PermissionDecision:
        return PermissionDecision(False, "not today")

    ex = ToolExecutor({"Work": WorkTool(Journal())}, Workspace(cwd=tmp_path), deny)
    ex.add(use(0))
    (result,) = await drain(ex)
    assert result.result.is_error and result.result.text == "not today"


async def test_abort_gives_every_call_one_result(tmp_path: Path) -> None:
    journal = Journal()
    ex = make_executor(journal, tmp_path)
    ex.add(use(0, ms=5000))
    ex.add(use(1, ms=5000))
    ex.add(use(2, ms=5000, safe=False))  # still queued behind the readers
    started = [e async for e in _until_started(ex, 2)]
    assert len(started) == 2
    await ex.abort()
    results = [e for e in ex.ready() if isinstance(e, ToolFinished)]
    assert [r.tool_use.id for r in results] == ["t0", "t1", "t2"]
    assert all(r.result.is_error for r in results)
    assert ("start", "t2") not in journal.entries


async def _until_started(ex: ToolExecutor, n: int) -> Any:
    seen = 0
    for event in ex.ready():
        if isinstance(event, ToolStarted):
            seen += 1
            yield event
    assert seen == n


async def test_concurrency_cap(tmp_path: Path) -> None:
    journal = Journal()
    ex = make_executor(journal, tmp_path, max_concurrency=2)
    for i in range(5):
        ex.add(use(i, ms=2))
    await drain(ex)
    assert all(len(running) < 2 for _, running in journal.overlaps)


call_specs = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=4),  # duration ms
        st.booleans(),  # safe
        st.booleans(),  # fail
        st.sampled_from(["Work", "Bash"]),
    ),
    min_size=1,
    max_size=8,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(specs=call_specs, add_gaps=st.lists(st.booleans(), min_size=8, max_size=8))
def test_property_order_exclusivity_pairing(
    specs: list[Any], add_gaps: list[bool], tmp_path: Path
) -> None:
    async def scenario() -> tuple[Journal, list[ToolFinished]]:
        journal = Journal()
        ex = make_executor(journal, tmp_path)
        for i, (ms, safe, fail, name) in enumerate(specs):
            ex.add(use(i, name, ms=ms, safe=safe, fail=fail))
            if add_gaps[i]:
                await asyncio.sleep(0)  # calls may arrive while others run, as when streaming
        return journal, await drain(ex)

    journal, results = asyncio.run(scenario())
    ids = [f"t{i}" for i in range(len(specs))]
    # every call has exactly one result, in call order
    assert [r.tool_use.id for r in results] == ids
    # each tool ran at most once
    starts = [tid for kind, tid in journal.entries if kind == "start"]
    assert len(starts) == len(set(starts))
    # an unsafe call never overlapped anything
    unsafe = {f"t{i}" for i, (_, safe, _, _) in enumerate(specs) if not safe}
    for tid, running in journal.overlaps:
        assert tid not in unsafe and not (running & unsafe)
    # a call that never started got a synthetic error (only after a Bash failure)
    for r in results:
        if r.tool_use.id not in starts:
            assert r.result.is_error
    # start order: no call starts before every earlier writer has finished, and a writer
    # starts only once every earlier call has finished
    at = {entry: n for n, entry in enumerate(journal.entries)}
    for k, tid in enumerate(ids):
        for earlier in ids[:k]:
            writer_involved = earlier in unsafe or tid in unsafe
            if writer_involved and ("start", tid) in at and ("start", earlier) in at:
                assert at[("end", earlier)] < at[("start", tid)], (earlier, tid)


async def test_a_denied_bash_call_does_not_cancel_its_siblings(tmp_path: Path) -> None:
    async def deny_bash(tool: Any, args: Any, ctx: ToolContext) -> PermissionDecision:
        return PermissionDecision(tool.name != "Bash", "no Bash today")

    journal = Journal()
    tools = {"Work": WorkTool(journal), "Bash": BashLike(journal)}
    ex = ToolExecutor(tools, Workspace(cwd=tmp_path), deny_bash)
    ex.add(use(0, ms=20))
    ex.add(use(1, "Bash"))
    results = await drain(ex)
    assert results[0].result.text == "t0 ok"
    assert results[1].result.text == "no Bash today"


def test_concurrency_cap_comes_from_the_environment(monkeypatch: Any) -> None:
    from codeloop.tools.executor import max_concurrency_from_env

    monkeypatch.delenv("CODELOOP_MAX_TOOL_CONCURRENCY", raising=False)
    assert max_concurrency_from_env() == 10
    monkeypatch.setenv("CODELOOP_MAX_TOOL_CONCURRENCY", "3")
    assert max_concurrency_from_env() == 3
    monkeypatch.setenv("CODELOOP_MAX_TOOL_CONCURRENCY", "lots")
    assert max_concurrency_from_env() == 10
