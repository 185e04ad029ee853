"""MCP servers: what they cost at start-up, and what 100 tools cost each request.

1. `codeloop -p` from process start to the first model request with 0, 1 and 5 stdio servers
   configured (the npm `server-everything`; `npm ci --prefix tests/npm` installs it): the
   servers start together, so 5 should cost about what 1 does.
2. The first request's size with 100 MCP tools (the SDK-built Python server, `--tools 100`),
   all their schemas sent (ENABLE_TOOL_SEARCH=false) and with tool search (the default).

    python -m bench.mcp_servers [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench.common import median, ms, run_cli
from codeloop.testing.scenario import Scenario, turn

EVERYTHING = Path(__file__).parent.parent / "tests" / "npm" / "node_modules" / ".bin"
PY_SERVER = [sys.executable, "-m", "codeloop.testing.mcp_server"]


def config(servers: dict[str, list[str]]) -> list[str]:
    if not servers:
        return []
    entries = {name: {"command": argv[0], "args": argv[1:]} for name, argv in servers.items()}
    return ["--mcp-config", json.dumps({"mcpServers": entries})]


def start_up(count: int, runs: int) -> tuple[float, float]:
    server = [str(EVERYTHING / "mcp-server-everything")]
    flags = config({f"e{i}": server for i in range(count)})
    starts, rss = [], []
    for _ in range(runs):
        m = run_cli(Scenario(turns=(turn("ok"),)), ["-p", "hi", *flags])
        if m.returncode != 0 or not m.requests:
            sys.exit(f"run with {count} servers failed (exit {m.returncode}): {m.stderr}")
        if count and "failed to start" in m.stderr:
            sys.exit(f"a server failed to start: {m.stderr}")
        starts.append(m.to_first_request)
        rss.append(m.peak_rss_mb)
    return median(starts), median(rss)


def request_size(search: str) -> tuple[int, int, int]:
    """(bytes of the whole first request, bytes of its tools, tools sent)."""
    flags = config({"big": [*PY_SERVER, "--tools", "100"]})
    m = run_cli(
        Scenario(turns=(turn("ok"),)), ["-p", "hi", *flags], env={"ENABLE_TOOL_SEARCH": search}
    )
    if m.returncode != 0 or not m.requests:
        sys.exit(f"run failed (exit {m.returncode}): {m.stderr}")
    body = m.requests[0].body
    return len(json.dumps(body)), len(json.dumps(body["tools"])), len(body["tools"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    if not (EVERYTHING / "mcp-server-everything").exists():
        sys.exit("the npm servers are missing: npm ci --prefix tests/npm")
    print(f"codeloop -p, start → first model request, {runs} runs (medians)")
    base = None
    for count in (0, 1, 5):
        start, rss = start_up(count, runs)
        base = base or start
        print(
            f"  {count} stdio servers (server-everything)  {ms(start)}  "
            f"(+{(start - base) * 1000:6.1f} ms)  peak RSS {rss:6.1f} MB"
        )
    print("first request with 100 MCP tools (one server)")
    full = request_size("false")
    found = request_size("true")  # auto defers past 10% of the window; 100 tools are ~9% of 200K
    for label, (whole, tools, count) in (("all schemas", full), ("tool search", found)):
        print(
            f"  {label:12}  request {whole / 1024:7.1f} KiB   tools {tools / 1024:7.1f} KiB "
            f"({count} tool definitions, ~{tools // 4:,} tokens)"
        )
    print(f"  tool search sends {full[1] / found[1]:.1f}x less for the tools")


if __name__ == "__main__":
    main()
