"""Language servers: what diagnostics after an edit add to a tool round, and what a configured
server costs at start-up (nothing: servers start with the first file of their language).

1. `codeloop -p` from process start to the first model request, without a plugin and with a
   plugin naming pyright (tests/lsp/node; `npm ci --prefix tests/lsp/node` installs it).
2. Tool rounds (end of a response → the next request) of one scripted session: Read, then
   Edits that break, fix and break a file again, each with and without pyright. The Read
   starts the server in the background; the first Edit waits for it to have analysed the
   workspace; later Edits wait for pyright's answer to one change.
3. pyright's own latency, in-process: from `didChange`+`didSave` to its diagnostics.

    python -m bench.lsp_diagnostics [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from bench.common import median, ms, run_cli
from codeloop.testing.scenario import Scenario, Turn, tool_use, turn

PYRIGHT = Path(__file__).parent.parent / "tests" / "lsp" / "node" / "node_modules" / ".bin"
PYRIGHT = PYRIGHT / "pyright-langserver"
SHAPES = "def area(radius: float) -> float:\n    return 3.14159 * radius * radius\n"
GOOD = "from shapes import area\n\nprint(area(2.0))\n"
BAD = "from shapes import area\n\nprint(area('2.0'))\n"
NO_PLUGIN, EMPTY_PLUGIN, PYRIGHT_PLUGIN = "no plugin", "plugin, no server", "pyright"
ROUNDS = ("Read", "Edit (breaks; cold server)", "Edit (fixes)", "Edit (breaks)")


def project(root: Path) -> Path:
    root.mkdir(exist_ok=True)
    (root / "shapes.py").write_text(SHAPES)
    (root / "main.py").write_text(GOOD)
    return root


def plugin(root: Path, with_lsp: bool) -> Path:
    """A plugin naming pyright, or (to tell a plugin's own cost apart) one without servers."""
    folder = root / "pyright-plugin"
    (folder / ".claude-plugin").mkdir(parents=True)
    server = {"command": str(PYRIGHT), "args": ["--stdio"], "extensionToLanguage": {".py": "py"}}
    manifest: dict[str, object] = {"name": "pyright-lsp"}
    if with_lsp:
        manifest["lspServers"] = {"pyright": server}
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    return folder


def edit(path: Path, old: str, new: str) -> Turn:
    return turn(tool_use("Edit", {"file_path": str(path), "old_string": old, "new_string": new}))


def session(kind: str) -> tuple[float, list[float]]:
    """(start → first request, the tool rounds) of one run: `kind` is no plugin, a plugin
    without servers, or a plugin naming pyright."""
    with_lsp = kind == PYRIGHT_PLUGIN
    with tempfile.TemporaryDirectory() as tmp:
        root = project(Path(tmp) / "work")
        main = root / "main.py"
        good, bad = "print(area(2.0))", "print(area('2.0'))"
        scenario = Scenario(
            turns=(
                turn(tool_use("Read", {"file_path": str(main)})),
                edit(main, good, bad),
                edit(main, bad, good),
                edit(main, good, bad),
                turn("done"),
            )
        )
        flags = [] if kind == NO_PLUGIN else ["--plugin-dir", str(plugin(Path(tmp), with_lsp))]
        m = run_cli(scenario, ["-p", "fix it", "--permission-mode", "acceptEdits", *flags], root)
        if m.returncode != 0 or len(m.requests) != 5:
            sys.exit(f"run failed (exit {m.returncode}): {m.stderr}")
        told = [json.dumps(r.body["messages"][-1]) for r in m.requests[2:]]
        if with_lsp and not ("reportArgumentType" in told[0] and "reportArgumentType" in told[2]):
            sys.exit("pyright's diagnostics did not reach the model")
        return m.to_first_request, m.gaps()


async def server_latency(edits: int) -> list[float]:
    """Seconds from each change sent to pyright's diagnostics for it."""
    from codeloop.lsp.config import ServerConfig
    from codeloop.lsp.servers import LanguageServers

    with tempfile.TemporaryDirectory() as tmp:
        root = project(Path(tmp))
        main = root / "main.py"
        config = ServerConfig("pyright", str(PYRIGHT), ("--stdio",), {".py": "python"})
        servers = LanguageServers([config], root)
        try:
            server = await servers.server_for(main)
            server.open(main, "python")
            await server.published_after(main.as_uri(), 0, 1, 60)
            times = []
            for i in range(edits):
                main.write_text(BAD if i % 2 == 0 else GOOD)
                count = server.published[main.as_uri()].count
                started = time.monotonic()
                server.open(main, "python")
                await server.published_after(main.as_uri(), count, server.version(main), 60)
                times.append(time.monotonic() - started)
            return times
        finally:
            await servers.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    if not PYRIGHT.exists():
        sys.exit("pyright is missing: npm ci --prefix tests/lsp/node")
    kinds = (NO_PLUGIN, EMPTY_PLUGIN, PYRIGHT_PLUGIN)
    measured = {kind: [session(kind) for _ in range(runs)] for kind in kinds}
    print(f"codeloop -p, {runs} runs each (medians)")
    print("                               " + "".join(f"{kind:>20}" for kind in kinds))
    starts = [median([start for start, _ in measured[kind]]) for kind in kinds]
    print(f"  {'start → first request':28} " + "".join(f"{ms(s):>20}" for s in starts))
    for i, name in enumerate(ROUNDS):
        rounds = [median([gaps[i] for _, gaps in measured[kind]]) for kind in kinds]
        added = (rounds[2] - rounds[1]) * 1000
        print(f"  {name:28} " + "".join(f"{ms(r):>20}" for r in rounds) + f"   +{added:.1f} ms")
    latency = asyncio.run(server_latency(6))
    alone = ms(median(latency))
    print(f"pyright alone, change → diagnostics: median {alone} over {len(latency)} changes")


if __name__ == "__main__":
    main()
