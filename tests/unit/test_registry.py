"""The built-in tools load lazily, and the specs the model sees are the ones they declare."""

from __future__ import annotations

import subprocess
import sys

from codeloop.tools.registry import declared_specs, default_tools, on_demand_tool


def test_stored_specs_match_what_the_tools_declare() -> None:
    stored = {name: tool.spec() for name, tool in default_tools().items()}
    stored["Skill"] = on_demand_tool("Skill", lambda: default_tools()["Read"]).spec()
    assert stored == declared_specs(), "run `python -m codeloop.tools.registry` to regenerate"


def test_a_session_starts_without_importing_pydantic_or_the_tools() -> None:
    code = (
        "import sys\n"
        "from codeloop.options import build_session, Options\n"
        "s = build_session(Options(model='claude-sonnet-4-5', "
        "env={'ANTHROPIC_API_KEY': 'k', 'CODELOOP_HOME': sys.argv[1]}))\n"
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


def test_a_lazy_tool_loads_and_runs_on_first_use() -> None:
    tools = default_tools()
    read = tools["Read"]
    args = read.parse({"file_path": "x"})
    assert read.is_read_only(args)
    assert type(read).__name__ == "LazyTool"
