"""Overhead that does not grow: codeloop's own cost per turn over a long session, the first
tool call's extra, start-up and memory, each next to Claude Code's where it can be measured.

  long session   1,000 turns, each a Read of a ~30 KB file, on a 200K window: the gap from
                 the end of one response to the next request, as the median of each tenth of
                 the session, and the last tenth over the first (goal <= 1.5, last < 10 ms);
                 the RSS as it goes (flat), the request body's size
  first tool     a 6-turn `echo` session: the first gap minus the median of the later ones
                 (goal <= 10 ms); with the model answering at once, and streaming at a model's
                 pace (~50 tokens/s: the tools load while it writes the first call); and at
                 once with `grep -n` calls (a program whose options the checker reads)
  start-up       process start -> first model request in a small git repository with a
                 CLAUDE.md, next to the floor: a minimal program on the same interpreter that
                 imports asyncio and httpx (without httpx's command-line client, as codeloop
                 does) and sends one streaming Messages request. Start minus the floor is
                 codeloop's own start-up (goal <= 100 ms), and codeloop's start over Claude
                 Code's (goal <= 0.5). Also the import floor alone
                 (`python -c "import asyncio, httpx, json, ssl"`); peak RSS and CPU time of a
                 one-turn run (goal <= 30 MB), next to the floor's

The machine is shared and loaded: the agents run interleaved, many times, and the table
gives medians and minimums (CPU time is what load hides least). Claude Code is run when it is
installed (`npm install @anthropic-ai/claude-code`; `--claude PATH`), against the same fake
server on 127.0.0.1 with a dummy key and its non-essential traffic off; it is not run over
the long session, whose summary requests the scripted server could not tell from turns.

`--baseline DIR` runs another checkout's codeloop (DIR/src, e.g. a worktree of main before a
change) interleaved with this one, in every row and over the long session: before and after
side by side, under the same load.

    python -m bench.session_overhead [--runs 10] [--turns 1000] [--long-runs 2]
                                     [--claude PATH] [--baseline DIR ...]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.common import CliMeasurement, Launched, median, run_cli
from codeloop.testing.scenario import Scenario, text, tool_use, turn

CLAUDE_ENV = {
    "ANTHROPIC_API_KEY": "dummy",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
}
FLOOR = "import asyncio, httpx, json, ssl"
# httpx imports its command-line client (click, rich, pygments) whenever they are installed,
# and rich is, for the terminal UI; codeloop blocks that import (models/transport.py), so its
# own floor is this one.
FLOOR_LIBRARY = f"import sys; sys.modules['httpx._main'] = None; {FLOOR}"
# The request floor: what any Python client of the Messages API pays to reach the server.
FLOOR_PROGRAM = """
import sys
sys.modules["httpx._main"] = None
import asyncio, json, os, httpx

async def main() -> None:
    body = {"model": "claude-sonnet-4-5", "max_tokens": 64, "stream": True,
            "messages": [{"role": "user", "content": "go"}]}
    headers = {"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01"}
    url = os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages"
    async with httpx.AsyncClient() as client, client.stream(
        "POST", url, content=json.dumps(body), headers=headers
    ) as response:
        async for _ in response.aiter_bytes():
            pass

asyncio.run(main())
"""
# The first-tool extra again with calls whose program has options to read (the checker loads
# grep's option table with the first one): `echo` needs none.
GREP_CALL = "grep -n -e 'return' mod_{n}.py"
RESULT_BYTES = 26_000  # a file this big reads back as ~30 KB with Read's line numbers
FILES = 40
WORDS = ("alpha", "beta", "gamma", "delta", "token", "value", "index", "buffer", "parse", "emit")

Agent = Callable[[Scenario, Sequence[str], Path], CliMeasurement]
CHECKOUT = Path(__file__).resolve().parents[1]


def codeloop(source: Path = CHECKOUT) -> Agent:
    """The codeloop of a checkout (its src/ first on the path): this one, or a baseline."""
    env = {"PYTHONPATH": str(source / "src")}

    def run(scenario: Scenario, args: Sequence[str], cwd: Path) -> CliMeasurement:
        return run_cli(scenario, ["-p", "go", *args], cwd=cwd, env=env)

    return run


def claude_code(binary: str) -> Agent:
    def run(scenario: Scenario, args: Sequence[str], cwd: Path) -> CliMeasurement:
        program = [binary, "--model", "claude-sonnet-4-5"]
        return run_cli(scenario, ["-p", "go", *args], cwd=cwd, env=CLAUDE_ENV, program=program)

    return run


def echo_session(turns: int, *, paced: bool = False, command: str = "echo {n}") -> Scenario:
    """`echo N` calls (or `command`, N put in), then an answer; `paced`: streamed as a model
    writes, ~50 tokens a second (a 4-character chunk every 20 ms), a sentence first and then
    the call."""
    steps = [
        turn(
            text("I will run it."),
            tool_use("Bash", {"command": command.format(n=n)}),
            chunk_chars=4,
            delay=0.02,
        )
        if paced
        else turn(tool_use("Bash", {"command": command.format(n=n)}))
        for n in range(turns - 1)
    ]
    return Scenario(turns=(*steps, turn("done")))


def git_project(root: Path) -> Path:
    """A small repository as a user has one: a few files, a commit, a CLAUDE.md."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "CLAUDE.md").write_text("# Project\nRun the tests with `pytest`.\n")
    for i in range(5):
        (root / f"mod_{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=root, check=True)
    (root / "mod_0.py").write_text("def f0():\n    return 'changed'\n")
    return root


def result_files(root: Path) -> list[Path]:
    rng = random.Random(0)
    paths = []
    for i in range(FILES):
        lines, used = [], 0
        while used < RESULT_BYTES:
            lines.append(" ".join(rng.choice(WORDS) for _ in range(9)))
            used += len(lines[-1]) + 1
        path = root / f"data_{i:02d}.txt"
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    return paths


def first_tool_extra(m: CliMeasurement) -> float:
    gaps = m.gaps()
    return gaps[0] - statistics.median(gaps[1:])


def floor_start(code: str) -> tuple[float, float]:
    """The interpreter's floor: seconds to run `code` and its peak RSS in MB."""
    with Launched([sys.executable, "-c", code]) as launched:
        returncode, peak_kb, _ = launched.wait()
        ended = time.monotonic()
    if returncode != 0:
        sys.exit(f"the floor's command failed: {code}")
    return ended - launched.started, peak_kb / 1024


def checked(name: str, m: CliMeasurement, requests: int) -> CliMeasurement:
    if m.returncode != 0 or len(m.requests) != requests:
        sys.exit(
            f"{name}: exit {m.returncode}, {len(m.requests)} of {requests} requests: {m.stderr}"
        )
    return m


def stat(values: Sequence[float], unit: str = "ms", scale: float = 1000) -> str:
    if not values:
        return f"{'-':>19}"
    return f"{median(values) * scale:7.1f} / {min(values) * scale:6.1f} {unit}"


def side_by_side(runs: int, agents: dict[str, Agent]) -> None:
    rows: dict[str, dict[str, list[float]]] = {}

    def note(row: str, agent: str, value: float) -> None:
        rows.setdefault(row, {}).setdefault(agent, []).append(value)

    with tempfile.TemporaryDirectory() as tmp:
        project = git_project(Path(tmp) / "project")
        for _ in range(runs):
            first = next(iter(agents))
            for row, code in (("floor", FLOOR), ("floor library", FLOOR_LIBRARY)):
                seconds, rss = floor_start(code)
                note(row, first, seconds)
                note(f"{row} rss", first, rss)
            floor = checked(
                "the request floor",
                run_cli(
                    echo_session(1), [], project, program=[sys.executable, "-c", FLOOR_PROGRAM]
                ),
                1,
            )
            note("floor request", first, floor.to_first_request)
            for name, agent in agents.items():
                one = checked(name, agent(echo_session(1), ["--output-format", "json"], project), 1)
                note("start", name, one.to_first_request)
                note("rss", name, one.peak_rss_mb)
                note("cpu", name, one.cpu_s)
                args = ["--allowedTools", "Bash", "--output-format", "json"]
                for paced in (False, True):
                    six = checked(name, agent(echo_session(6, paced=paced), args, project), 6)
                    note(f"first tool {paced}", name, first_tool_extra(six))
                    note(f"gap {paced}", name, median(six.gaps()))
                grep = echo_session(6, command=GREP_CALL)
                six = checked(name, agent(grep, args, project), 6)
                note("first tool grep", name, first_tool_extra(six))
                note("gap grep", name, median(six.gaps()))
    names = list(agents)
    load = os.getloadavg()[0]
    print(f"Side by side, {runs} interleaved runs each, median / minimum (load average {load:.1f})")
    print(f"  {'':38}" + "".join(f"{n:>22}" for n in names) + "    goal")
    table = (
        ("start → first model request", "start", "ms", 1000, ""),
        ("  floor: asyncio + httpx, one request", "floor request", "ms", 1000, ""),
        (f"  floor: python -c '{FLOOR}'", "floor", "ms", 1000, ""),
        ("  floor, httpx without its CLI", "floor library", "ms", 1000, ""),
        ("one-turn run: peak RSS", "rss", "MB", 1, "<= 30 MB"),
        ("  floor's peak RSS", "floor rss", "MB", 1, ""),
        ("  floor's, httpx without its CLI", "floor library rss", "MB", 1, ""),
        ("one-turn run: CPU time", "cpu", "ms", 1000, ""),
        ("first-tool extra, model at once", "first tool False", "ms", 1000, "<= 10 ms"),
        ("  gap between turns (median)", "gap False", "ms", 1000, ""),
        ("first-tool extra, 50 tokens/s model", "first tool True", "ms", 1000, "<= 10 ms"),
        ("  gap between turns (median)", "gap True", "ms", 1000, ""),
        ("first-tool extra, at once, `grep -n`", "first tool grep", "ms", 1000, ""),
        ("  gap between turns (median)", "gap grep", "ms", 1000, ""),
    )
    for label, row, unit, scale, goal in table:
        cells = "".join(f"{stat(rows[row].get(n, []), unit, scale):>22}" for n in names)
        print(f"  {label:38}{cells}    {goal}")
    floor_start_s = median(rows["floor request"][names[0]])
    own = "".join(f"{(median(rows['start'][n]) - floor_start_s) * 1000:19.1f} ms" for n in names)
    print(f"  {'own start-up: start minus the floor':38}{own}    <= 100 ms")
    if "Claude Code" in rows["start"]:
        theirs = median(rows["start"]["Claude Code"])
        ratios = "".join(f"{median(rows['start'][n]) / theirs:20.2f} ×" for n in names)
        label = "start over Claude Code's"
        print(f"  {label:38}{ratios}    <= 0.5")


def long_session(turns: int, runs: int, sources: dict[str, Path]) -> None:
    """Each codeloop `runs` times over the same session, interleaved; per tenth of the session
    the median gap of each run, then the median over runs."""
    per: dict[str, list[list[float]]] = {name: [] for name in sources}
    cpu: dict[str, list[list[float]]] = {name: [] for name in sources}
    last: dict[str, CliMeasurement] = {}
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = result_files(root)
        steps = [
            turn(tool_use("Read", {"file_path": str(files[i % FILES])})) for i in range(turns - 1)
        ]
        scenario = Scenario(turns=(*steps, turn("done")))
        for _ in range(runs):
            for name, source in sources.items():
                env = {"CODELOOP_CONTEXT_WINDOW": "200000", "PYTHONPATH": str(source / "src")}
                m = run_cli(
                    scenario,
                    ["-p", "go", "--output-format", "json"],
                    cwd=root,
                    env=env,
                    keep_bodies=False,
                    rss_every=0.05,
                )
                checked(name, m, turns)
                per[name].append(deciles(m.gaps()))
                cpu[name].append(cpu_deciles(m, turns))
                last[name] = m
                loads.append(os.getloadavg()[0])
    print(
        f"\nLong session: -p, {turns} turns of ~30 KB Read results, 200K window, {runs} runs "
        f"each interleaved (load average {min(loads):.1f}-{max(loads):.1f})"
    )
    print(f"  {'':38}" + "".join(f"{n:>22}" for n in sources) + "    goal")
    for what, table, goal in (
        ("gap", per, "<= 1.5, last < 10 ms"),
        ("CPU per turn", cpu, "(what load hides least)"),
    ):
        medians = {n: [median(col) for col in zip(*rows, strict=True)] for n, rows in table.items()}
        for i in range(10):
            cells = "".join(f"{medians[n][i] * 1000:19.1f} ms" for n in sources)
            print(f"  {f'{what}, tenth {i + 1} (median)':38}{cells}")
        ratios = "".join(f"{medians[n][-1] / medians[n][0]:22.2f}" for n in sources)
        print(f"  {f'{what}: last tenth / first':38}{ratios}    {goal}")
    for label, value in (
        ("request body, last (KB)", lambda m: m.requests[-1].size / 1000),
        ("RSS at turn 100 (MB)", lambda m: rss_at(m, turns // 10)),
        ("RSS at the end (MB)", lambda m: rss_at(m, turns)),
        ("whole run, CPU (s)", lambda m: m.cpu_s),
    ):
        print(f"  {label:38}" + "".join(f"{value(last[n]):22.1f}" for n in sources))


def deciles(gaps: Sequence[float]) -> list[float]:
    tenth = len(gaps) / 10
    return [median(gaps[round(i * tenth) : round((i + 1) * tenth)]) for i in range(10)]


def cpu_deciles(m: CliMeasurement, turns: int) -> list[float]:
    """CPU seconds per turn over each tenth of the session, from the samples around it."""
    samples = m.cpu_samples
    out = []
    for i in range(10):
        first, last = turns * i // 10, turns * (i + 1) // 10
        start = next(((n, c) for n, c in reversed(samples) if n <= first), (0, 0.0))
        end = next(((n, c) for n, c in samples if n >= last), samples[-1] if samples else (0, 0))
        out.append((end[1] - start[1]) / max(end[0] - start[0], 1))
    return out


def rss_at(m: CliMeasurement, requests: int) -> float:
    """The RSS sampled once the server had seen `requests` requests (the last sample else)."""
    if not m.rss_samples:
        return m.peak_rss_mb
    return next((mb for n, mb in m.rss_samples if n >= requests), m.rss_samples[-1][1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="interleaved runs (0: no table)")
    parser.add_argument("--turns", type=int, default=1000, help="turns of the long session")
    parser.add_argument("--long-runs", type=int, default=2, help="runs of the long session")
    parser.add_argument("--claude", default=shutil.which("claude"), help="Claude Code's binary")
    parser.add_argument(
        "--baseline", type=Path, action="append", default=[], help="another checkout (repeatable)"
    )
    parser.add_argument("--skip-long", action="store_true", help="only the side-by-side table")
    args = parser.parse_args()
    sources = {"codeloop": CHECKOUT}
    for baseline in args.baseline:
        sources[baseline.name] = baseline.resolve()
    agents = {name: codeloop(source) for name, source in sources.items()}
    if args.claude:
        agents["Claude Code"] = claude_code(args.claude)
    if args.runs:
        side_by_side(args.runs, agents)
    if not args.claude:
        print("  (Claude Code not found: install it with npm, or pass --claude PATH)")
    if not args.skip_long:
        long_session(args.turns, args.long_runs, sources)


if __name__ == "__main__":
    main()
