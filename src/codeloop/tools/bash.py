"""Bash: run a shell command in the workspace, streaming its output, keeping its cwd.

Each call is a fresh `bash -c` in its own process group, so a timeout or an abort can kill
everything the command started, and the group dies with codeloop however codeloop ends
(system/reaper.py, `kill -9` included). The working directory still persists between calls: an EXIT
trap writes the shell's final directory to a temp file (so it survives `exit` in the command
and never mixes with the output), and the next call starts there. With a sandbox
(shell/sandbox.py) the same shell runs under bubblewrap, the temp file bound into it. A
line whose git commands only read runs them under protective config (shell/git_check.py).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import functools
import importlib
import os
import shlex
import shutil
import signal
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal

from codeloop.system.aio import unless_aborted
from codeloop.system.procs import DRAIN_SECONDS, child_env, kill_group, signal_group
from codeloop.system.reaper import REAPER
from codeloop.tools.base import ProgressFn, Tool, ToolContext, ToolResult
from codeloop.tools.input import Arg, ToolInput

if TYPE_CHECKING:
    from codeloop.shell.sandbox import Sandbox

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000

Stop = Literal["timeout", "abort"]
# The command waits at this gate until its process group is registered with the reaper: a
# kill -9 of codeloop in between would otherwise leave what it started running. The gate's
# end closing unopened (codeloop died first) runs nothing.
_GATE = ("/bin/sh", "-c", 'IFS= read -r _ || exit 1; exec "$@" </dev/null', "gate")


class BashInput(ToolInput):
    command: Annotated[str, Arg("The shell command to run.")]
    timeout: Annotated[
        int | None,
        Arg(
            f"Timeout in ms (default {DEFAULT_TIMEOUT_MS}, max {MAX_TIMEOUT_MS}).",
            exclusive_minimum=0,
            maximum=MAX_TIMEOUT_MS,
        ),
    ] = DEFAULT_TIMEOUT_MS
    description: Annotated[
        str | None, Arg("What the command does, in 5-10 words (shown to the user).")
    ] = None
    run_in_background: Annotated[
        bool,
        Arg(
            "Run the command in the background and return at once; read its output "
            "with TaskOutput, stop it with TaskStop."
        ),
    ] = False


DESCRIPTION = f"""\
Runs a shell command with bash and returns its combined stdout and stderr.

- The working directory persists between calls (`cd` carries over); environment variables \
and shell state do not.
- Prefer the dedicated tools: Grep (not grep/rg), Glob (not find/ls for searching), Read \
(not cat/head/tail), Edit and Write (not sed/echo redirection).
- Quote paths that contain spaces. Chain dependent commands with `&&`; use `;` only when \
later commands must run even if earlier ones fail.
- stdin is /dev/null: interactive commands (editors, prompts, pagers waiting for input) \
will not work; pass flags such as `-y` or `--no-pager`.
- Timeout defaults to {DEFAULT_TIMEOUT_MS // 1000} s, at most {MAX_TIMEOUT_MS // 1000} s; on \
timeout the command and everything it started are killed.
- A non-zero exit code is reported as an error together with the output. Long output keeps \
its beginning and end only.
- For a long-running command (a server, a watcher), set run_in_background: it returns an ID \
at once; TaskOutput reads its new output and TaskStop stops it. Do not add `&`. Background \
commands end with the session."""


class BashTool(Tool[BashInput]):
    """Runs one command; see the module docstring for how the cwd is carried over."""

    name: ClassVar[str] = "Bash"
    description: ClassVar[str] = DESCRIPTION
    input_model = BashInput
    max_result_chars: ClassVar[int] = 30_000

    def __init__(self, sandbox: Sandbox | None = None) -> None:
        self.sandbox = sandbox

    def is_read_only(self, args: BashInput) -> bool:
        """Decided on a real parse: every command read-only, no writes, nothing unparsed."""
        from codeloop.shell.readonly import is_read_only_command

        return is_read_only_command(args.command)

    def warm(self) -> None:
        """Every call is judged on its parse first (the permission check): load the checker
        (permissions.policy imports it with the first Bash call) and the grammar."""
        importlib.import_module("codeloop.permissions.bash_check")
        from codeloop.shell.readonly import is_read_only_command

        is_read_only_command("true")

    async def call(self, args: BashInput, ctx: ToolContext) -> ToolResult:
        if args.run_in_background:
            return await self._background(args, ctx)
        notes: list[str] = []
        start_dir = _existing_dir(ctx.workspace.cwd)
        if start_dir != ctx.workspace.cwd:
            notes.append(
                f"Working directory {ctx.workspace.cwd} no longer exists; ran in {start_dir}."
            )
            ctx.workspace.cwd = start_dir
        timeout_ms = args.timeout or DEFAULT_TIMEOUT_MS

        fd, cwd_file = tempfile.mkstemp(prefix="codeloop-cwd-")
        os.close(fd)
        script = _wrap(args.command, cwd_file, ctx.workspace.env_file)
        base_env = child_env(ctx.workspace.env)
        env = {**base_env, "CODELOOP": "1"}
        argv = [_shell(), "-c", script]
        if self.sandbox is not None:
            sandbox = self.sandbox.widened(ctx.workspace.extra_dirs)  # /add-dir's folders too
            argv = sandbox.argv(_shell(), script, cwd=start_dir, files=[cwd_file])
            env = {**self.sandbox.env(base_env), "CODELOOP": "1"}
        env = _git_protected(args.command, env)
        # An editor's terminal shows the command as it runs; a sandboxed one stays here.
        terminals = ctx.workspace.terminals if self.sandbox is None else None
        run = (
            functools.partial(terminals.run, tool_use_id=ctx.tool_use_id)
            if terminals is not None
            else functools.partial(_run, on_output=ctx.progress)
        )
        try:
            output, exit_code, stopped = await run(
                argv,
                env=env,
                cwd=start_dir,
                time_limit=timeout_ms / 1000,
                abort=ctx.abort,
                limit=self.max_result_chars,
            )
        finally:
            reported = _take_reported_dir(cwd_file)
        notes.extend(_move_cwd(ctx, reported))

        if stopped == "timeout":
            notes.append(
                f"Command timed out after {timeout_ms / 1000:g} s; it and its child processes "
                "were killed."
            )
        elif stopped == "abort":
            notes.append("Command was interrupted; it and its child processes were killed.")
        elif exit_code > 0:
            notes.append(f"Exit code {exit_code}")
        elif exit_code < 0:
            notes.append(f"Killed by signal {-exit_code}")
        text = "\n".join([output or "(no output)", *notes])
        return ToolResult(text, is_error=stopped is not None or exit_code != 0)

    async def _background(self, args: BashInput, ctx: ToolContext) -> ToolResult:
        """Started like a foreground command (sandbox, hooks' exports, git protection), but
        not waited for, and without the cwd trap: it cannot move the session."""
        from codeloop.tools.background_tools import start_in_background

        cwd = _existing_dir(ctx.workspace.cwd)
        script = _exports(ctx.workspace.env_file) + f"{args.command}\n"
        base_env = os.environ if ctx.workspace.env is None else ctx.workspace.env
        env = {**base_env, "CODELOOP": "1"}
        argv = [_shell(), "-c", script]
        if self.sandbox is not None:
            argv = self.sandbox.argv(_shell(), script, cwd=cwd, files=[])
            env = {**self.sandbox.env(base_env), "CODELOOP": "1"}
        env = _git_protected(args.command, env)
        return await start_in_background(
            ctx,
            argv,
            env=env,
            cwd=cwd,
            command=args.command,
            description=args.description or args.command[:60],
        )


def _exports(env_file: Path | None) -> str:
    """Sources the `export`s hooks wrote to CLAUDE_ENV_FILE, quietly."""
    if env_file is None:
        return ""
    quoted = shlex.quote(str(env_file))
    return f"[ -f {quoted} ] && . {quoted} >/dev/null 2>&1 </dev/null\n"


def _wrap(command: str, cwd_file: str, env_file: Path | None = None) -> str:
    """The user's command, preceded by an EXIT trap that records the final directory, and by
    the `export`s hooks wrote to CLAUDE_ENV_FILE (sourced quietly: a broken line there must not
    cost the command).

    The command stays last and on its own lines, so a trailing comment, heredoc or `exit` in it
    behaves as typed. `$PWD` is the fallback when the directory was deleted under the shell.
    """
    target = shlex.quote(cwd_file)
    exports = _exports(env_file)
    return (
        f"__codeloop_exit() {{ __codeloop_rc=$?; "
        f"{{ pwd -P 2>/dev/null || printf '%s\\n' \"$PWD\"; }} >| {target}; "
        f'exit "$__codeloop_rc"; }}\n'
        "trap __codeloop_exit EXIT\n"
        f"{exports}"
        f"{command}\n"
    )


def _git_protected(command: str, env: dict[str, str]) -> dict[str, str]:
    """A line whose git commands only read runs them with configuration that keeps git from
    running programs the repository names (shell/git_check.py)."""
    from codeloop.shell.git_env import protective_env
    from codeloop.shell.readonly import needs_protection

    return protective_env(env) if needs_protection(command) else env


def _shell() -> str:
    if os.path.exists("/bin/bash"):
        return "/bin/bash"
    return shutil.which("bash") or "/bin/sh"


class _Output(asyncio.Protocol):
    """Collects the merged output pipe, keeping only what the result can show.

    Holds the first `head` and the last `tail` characters (the same split as `truncate_middle`)
    so a command printing gigabytes cannot exhaust memory.
    """

    def __init__(self, limit: int, on_output: ProgressFn) -> None:
        self._head_limit = limit * 2 // 3
        self._tail_limit = limit - self._head_limit
        self._on_output = on_output
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head = ""
        self._tail: list[str] = []
        self._tail_len = 0
        self._total = 0
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self._add(self._decoder.decode(data))

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)

    def _add(self, text: str) -> None:
        if not text:
            return
        self._on_output(text)
        self._total += len(text)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += text[:room]
            text = text[room:]
        if text:
            self._tail.append(text)
            self._tail_len += len(text)
            if self._tail_len > 2 * self._tail_limit:
                kept = "".join(self._tail)[-self._tail_limit :]
                self._tail, self._tail_len = [kept], len(kept)

    def text(self) -> str:
        self._add(self._decoder.decode(b"", final=True))
        tail = "".join(self._tail)
        cut = self._total - self._head_limit - self._tail_limit
        if cut <= 0:
            return (self._head + tail).rstrip("\n")
        return (
            f"{self._head}\n\n... [{cut} characters of output truncated] ...\n\n"
            f"{tail[-self._tail_limit :]}"
        ).rstrip("\n")


async def _run(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: Path,
    time_limit: float,
    abort: asyncio.Event,
    on_output: ProgressFn,
    limit: int,
) -> tuple[str, int, Stop | None]:
    """Run `argv`; return its output, exit code and why it was stopped early (if it was)."""
    loop = asyncio.get_running_loop()
    output = _Output(limit, on_output)
    REAPER.ready()
    read_fd, write_fd = os.pipe()
    gate_read, gate_write = os.pipe()
    try:
        transport, _ = await loop.connect_read_pipe(lambda: output, os.fdopen(read_fd, "rb", 0))
        spawning = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *_GATE,
                *argv,
                stdin=gate_read,
                stdout=write_fd,
                stderr=write_fd,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        )
        try:
            # Shielded: cancelled mid-spawn, asyncio would kill the shell alone, and what it
            # had already started in the background would outlive it.
            proc = await asyncio.shield(spawning)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                started = await spawning
                signal_group(started.pid, signal.SIGKILL)
                await started.wait()
            transport.close()
            raise
        except BaseException:
            transport.close()
            raise
    except BaseException:
        os.close(gate_write)  # not spawned (or killed): nothing will pass the gate
        raise
    finally:
        os.close(write_fd)  # the child holds its own copy; EOF comes when every writer is gone
        os.close(gate_read)
    try:
        REAPER.watch(proc.pid)
        os.write(gate_write, b"\n")  # watched: the command may start
    finally:
        os.close(gate_write)
    try:
        stopped = await _wait(proc, time_limit, abort)
        if stopped is not None:
            await kill_group(proc.pid)
            await proc.wait()
        # Output already in the pipe is read at once; a background job holding it open is not
        # waited for.
        await asyncio.wait([output.closed], timeout=DRAIN_SECONDS)
    except asyncio.CancelledError:
        if proc.returncode is None:
            signal_group(proc.pid, signal.SIGKILL)
        raise
    finally:
        transport.close()
        REAPER.forget(proc.pid)
    assert proc.returncode is not None
    return output.text(), proc.returncode, stopped


async def _wait(
    proc: asyncio.subprocess.Process, time_limit: float, abort: asyncio.Event
) -> Stop | None:
    """Wait for the process to exit; say what stopped the wait if it did not."""
    try:
        async with asyncio.timeout(time_limit):
            exited = await unless_aborted(proc.wait(), abort)
    except TimeoutError:
        return "timeout"
    return None if exited else "abort"


def _take_reported_dir(cwd_file: str) -> str:
    """What the EXIT trap wrote (empty if it never ran), deleting the file."""
    try:
        with open(cwd_file, encoding="utf-8", errors="replace") as f:
            return f.read().removesuffix("\n")
    finally:
        with contextlib.suppress(OSError):
            os.unlink(cwd_file)


def _existing_dir(path: Path) -> Path:
    """`path`, or its nearest ancestor that still exists."""
    while not path.is_dir() and path != path.parent:
        path = path.parent
    return path


def _move_cwd(ctx: ToolContext, reported: str) -> list[str]:
    """Adopt the shell's final directory; notes for the model when it had to fall back."""
    if not reported:  # the shell was killed or exec'd before the trap ran: stay put
        return []
    wanted = Path(reported)
    actual = _existing_dir(wanted)
    ctx.workspace.cwd = actual
    if actual != wanted:
        return [f"Working directory {wanted} no longer exists; now in {actual}."]
    return []
