"""Time to a first answer, and memory, of three ways a Python program runs an agent turn:
codeloop's in-process API (codeloop.query), the Claude Agent SDK driving codeloop
(cli_path), and the same SDK driving Claude Code (the binary its wheel bundles).

Each run is a fresh Python process (the driver) asking one prompt of the fake model server,
which runs here, outside the measured processes. Printed: medians of the driver's start →
its imports done → the first AssistantMessage → the ResultMessage, the driver's peak RSS,
and the agent process's (the SDK's CLI child; none in-process).

    python bench/sdk_drivers.py [--runs 5]

Needs the sdk extra (pip install -e '.[dev,sdk]'); Claude Code's row is left out when the
SDK's wheel carries no binary. Claude Code runs with its non-essential traffic off, so it
talks to nothing but the fake server.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.common import median, ms
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, turn

MODES = ("in-process", "sdk → codeloop", "sdk → claude code")
# Claude Code may ask for more than the one answer (a title, a quota probe): spare turns.
SCENARIO = Scenario(turns=tuple(turn("Hello there.") for _ in range(8)))

# The driver, run as `python -c`: one query, its timings and memory as one JSON line.
DRIVER = """
import time
started = time.monotonic()
import asyncio, json, os, resource, sys
mode, cli = sys.argv[1], sys.argv[2]

async def run():
    if mode == "in-process":
        import codeloop
        from codeloop import AssistantMessage, ResultMessage
        from pathlib import Path
        stream = codeloop.query("Say hello.", codeloop.Options(cwd=Path.cwd()))
    else:
        from claude_agent_sdk import AssistantMessage, ClaudeAgentOptions, ResultMessage, query
        options = ClaudeAgentOptions(cli_path=cli or None, cwd=os.getcwd())
        stream = query(prompt="Say hello.", options=options)
    imported = time.monotonic()
    first = None
    async for message in stream:
        if isinstance(message, AssistantMessage) and first is None:
            first = time.monotonic()
        if isinstance(message, ResultMessage):
            done = time.monotonic()
            ok = not message.is_error
    return imported, first, done, ok

imported, first, done, ok = asyncio.run(run())
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"imported": imported - started, "first": first - started,
                  "done": done - started, "ok": ok, "rss": own, "child_rss": child}))
"""


def claude_code() -> str | None:
    """The Claude Code binary the SDK's wheel bundles, if this install has one."""
    try:
        import claude_agent_sdk
    except ImportError:
        sys.exit("needs the sdk extra: pip install -e '.[dev,sdk]'")
    found = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    return str(found) if found.is_file() else None


def run_once(mode: str, cli: str, server: FakeModelServer) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as home:
        work = Path(home) / "work"
        work.mkdir()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
            "ANTHROPIC_BASE_URL": server.anthropic_base_url,
            "ANTHROPIC_API_KEY": "bench",
            "CODELOOP_MODEL": "anthropic:claude-sonnet-4-5",
            "ANTHROPIC_MODEL": "claude-sonnet-4-5",
            "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1",
            # Claude Code: nothing but the model server (no telemetry, updates, reports).
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_AUTOUPDATER": "1",
            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
        }
        done = subprocess.run(
            [sys.executable, "-c", DRIVER, mode, cli],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    if done.returncode != 0:
        sys.exit(f"{mode}: the driver failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    measured: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if not measured["ok"]:
        sys.exit(f"{mode}: the answer was an error result")
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    codeloop_cli = str(Path(sys.executable).parent / "codeloop")
    clis = {"in-process": "", "sdk → codeloop": codeloop_cli, "sdk → claude code": claude_code()}
    rows = []
    for mode in MODES:
        cli = clis[mode]
        if cli is None:
            print(f"{mode}: skipped (the SDK's wheel has no Claude Code binary)")
            continue
        results = []
        for _ in range(runs):
            with FakeModelServer(SCENARIO) as server:
                results.append(run_once(mode, cli, server))
        rows.append((mode, results))
    print(f"one prompt, one answer from the fake model server, {runs} runs (medians)")
    print(f"  {'':20} {'imports':>11} {'1st answer':>11} {'result':>11} {'driver':>9} {'agent':>9}")
    for mode, results in rows:

        def mid(key: str, results: list[dict[str, Any]] = results) -> float:
            return median([r[key] for r in results])

        agent = f"{mid('child_rss'):6.1f} MB" if mode != "in-process" else "      —  "
        print(
            f"  {mode:20} {ms(mid('imported'))} {ms(mid('first'))} {ms(mid('done'))}"
            f" {mid('rss'):6.1f} MB {agent}"
        )
    print("  (times from the driver's start; driver = the Python program's peak RSS, agent =")
    print("   its CLI child's; in-process the agent is the driver)")


if __name__ == "__main__":
    main()
