"""The ACP registry entry (packaging/acp-registry, the format of agentclientprotocol/registry's
FORMAT.md) stays true to the package: its id names its folder, its version is codeloop's, it
starts `codeloop acp` with the acp extra, and its icon is monochrome (the registry's CI refuses
hard-coded colours)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from codeloop import __version__

ENTRY = Path(__file__).parents[2] / "packaging" / "acp-registry" / "codeloop"


def test_the_entry_starts_codeloop_acp() -> None:
    agent = json.loads((ENTRY / "agent.json").read_text())
    assert agent["id"] == ENTRY.name
    assert agent["version"] == __version__
    for field in ("name", "description", "authors", "license", "distribution"):
        assert agent[field], field
    uvx = agent["distribution"]["uvx"]
    assert uvx == {"package": "codeloop[acp]", "cmd": "codeloop", "args": ["acp"]}


def test_the_icon_is_monochrome() -> None:
    svg = (ENTRY / "icon.svg").read_text()
    assert 'width="16"' in svg and 'height="16"' in svg
    colours = re.findall(r'(?:fill|stroke)="([^"]+)"', svg)
    assert colours and set(colours) <= {"currentColor", "none"}
