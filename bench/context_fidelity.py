"""Issue 16 from outside: what a session that Reads a different file every turn shows the model,
and what a long one costs in memory, through the real CLI against the fake server (which
refuses, as a provider would, any request over the window: JSON body / 4 tokens).

    python bench/context_fidelity.py fidelity [--turns 120]
        windows 60K (30 KB files), 32K (18 KB), 16K (7 KB): the share of requests in which the
        Read just made is whole (every line of the file), refused requests, summary calls
    python bench/context_fidelity.py memory [--turns 1000] [--window 200000]
        30 KB files: peak RSS, RSS growth from turn 200 to the last, tokens sent per turn,
        summary calls
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil  # type: ignore[import-untyped]

from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.long_session import summary_turns
from codeloop.testing.reading import last_read, reading_turns, write_file
from codeloop.testing.scenario import Scenario

MODEL = "anthropic:claude-sonnet-4-5"
FIDELITY_CASES = ((60_000, 30_000), (32_000, 18_000), (16_000, 7_000))


@dataclass
class Watched:
    """What the watcher saw of each request (bodies are dropped once looked at)."""

    tokens: list[float] = field(default_factory=list)  # main requests
    whole: list[bool] = field(default_factory=list)  # main requests bringing a Read
    summaries: int = 0
    refused: int = 0
    rss_mb: dict[int, float] = field(default_factory=dict)  # at main request n


def run(
    window: int, file_bytes: int, turns: int, samples: tuple[int, ...]
) -> tuple[Watched, float, int]:
    """One session; (what was seen, peak RSS in MB, exit code)."""
    seen = Watched()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        rng = random.Random(window)
        (root / "data").mkdir()
        files = []
        for i in range(turns):
            write_file(root / "data" / f"f{i:03d}.py", i, file_bytes, rng)
            files.append((root / "data" / f"f{i:03d}.py").read_text().splitlines())
        scenario = Scenario(turns=tuple(reading_turns(turns, rng)))
        with FakeModelServer(
            scenario, max_prompt_tokens=window, summaries=summary_turns(turns)
        ) as server:
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": str(root),
                "ANTHROPIC_BASE_URL": server.anthropic_base_url,
                "ANTHROPIC_API_KEY": "bench",
                "CODELOOP_CONTEXT_WINDOW": str(window),
            }
            argv = [sys.executable, "-m", "codeloop", "--model", MODEL]
            argv += ["-p", "Read every file in data/, one a turn."]
            proc = subprocess.Popen(
                argv,
                cwd=root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            ended = threading.Event()
            watcher = threading.Thread(
                target=_watch, args=(server, proc.pid, ended, files, samples, seen), daemon=True
            )
            watcher.start()
            # wait4 gives this one child's peak RSS (ru_maxrss, in KiB on Linux).
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            ended.set()
            watcher.join()
    return seen, usage.ru_maxrss / 1024, proc.returncode


def _watch(
    server: FakeModelServer,
    pid: int,
    ended: threading.Event,
    files: list[list[str]],
    samples: tuple[int, ...],
    seen: Watched,
) -> None:
    n = 0
    while True:
        try:
            request = server.wait_for_requests(n + 1, finished=True, timeout=0.5)[n]
        except TimeoutError:
            if ended.is_set() and len(server.requests) <= n:
                return
            continue
        n += 1
        _look(request, files, samples, seen, pid)


def _look(
    request: RecordedRequest,
    files: list[list[str]],
    samples: tuple[int, ...],
    seen: Watched,
    pid: int,
) -> None:
    body, request.body = request.body, None
    if request.status != 200:
        seen.refused += 1
    if request.conversation == "summaries":
        seen.summaries += 1
        return
    seen.tokens.append(len(json.dumps(body, separators=(",", ":"))) / 4)
    if len(seen.tokens) in samples:
        with contextlib.suppress(psutil.NoSuchProcess):
            seen.rss_mb[len(seen.tokens)] = psutil.Process(pid).memory_info().rss / 2**20
    found = last_read("anthropic", body)
    index = len(seen.tokens) - 2  # request k brings the Read of file k - 2
    if found is not None and 0 <= index < len(files):
        result = found[1]
        lines = files[index]
        if len(files) > 200:  # long runs: the first, middle and last lines
            lines = [lines[0], lines[len(lines) // 2], lines[-1]]
        seen.whole.append(all(line in result for line in lines))


def fidelity(turns: int) -> None:
    print(f"{turns} turns, each Reading a different file; 'whole': every line of it")
    print(
        f"{'window':>8}{'file':>8}{'exit':>6}{'whole':>10}{'refused':>9}{'max req':>10}"
        f"{'summaries':>11}"
    )
    for window, size in FIDELITY_CASES:
        seen, _, code = run(window, size, turns, ())
        share = sum(seen.whole) / len(seen.whole) if seen.whole else float("nan")
        print(
            f"{window:>8,}{size // 1000:>6} KB{code:>6}{share:>10.1%}{seen.refused:>9}"
            f"{max(seen.tokens):>10,.0f}{seen.summaries:>11}"
        )


def memory(turns: int, window: int) -> None:
    start = min(200, turns)
    seen, peak, code = run(window, 30_000, turns, (start, turns))
    growth = seen.rss_mb.get(turns, float("nan")) - seen.rss_mb.get(start, float("nan"))
    share = sum(seen.whole) / len(seen.whole) if seen.whole else float("nan")
    print(f"{turns} turns of 30 KB Reads on a {window:,} window (exit {code})")
    print(f"  peak RSS                      {peak:8.1f} MB")
    print(f"  RSS at turn {start:<5}             {seen.rss_mb.get(start, float('nan')):8.1f} MB")
    print(f"  RSS at turn {turns:<5}             {seen.rss_mb.get(turns, float('nan')):8.1f} MB")
    print(f"  growth {start} → {turns}            {growth:8.1f} MB   goal < 10 MB")
    print(
        f"  tokens sent per turn          {statistics.median(seen.tokens):8,.0f} median, "
        f"{statistics.mean(seen.tokens):,.0f} mean, {max(seen.tokens):,.0f} max"
    )
    print(f"  summary calls                 {seen.summaries:8}")
    print(f"  refused requests              {seen.refused:8}")
    print(f"  last Read shown (first/middle/last lines)  {share:.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("fidelity", "memory"))
    parser.add_argument("--turns", type=int)
    parser.add_argument("--window", type=int, default=200_000)
    args = parser.parse_args()
    started = time.monotonic()
    if args.what == "fidelity":
        fidelity(args.turns or 120)
    else:
        memory(args.turns or 1000, args.window)
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
