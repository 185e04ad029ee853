"""Print the constraints action.yml installs codeloop with: every package codeloop needs at
run time (no extras), at the version installed here. Run it in a fresh `pip install .` venv
and write its output to packaging/action/constraints.txt:

    .venv/bin/python packaging/action/pin.py > packaging/action/constraints.txt
"""

from __future__ import annotations

import importlib.metadata as metadata
import re
import sys

from packaging.markers import default_environment
from packaging.requirements import Requirement


def closure(name: str, extras: tuple[str, ...], found: dict[str, str]) -> None:
    key = re.sub(r"[-_.]+", "-", name).lower()
    if key in found:
        return
    found[key] = metadata.distribution(name).version
    for line in metadata.distribution(name).requires or []:
        requirement = Requirement(line)
        marker = requirement.marker
        environment = dict(default_environment())
        wanted = extras or ("",)
        if marker is None or any(marker.evaluate({**environment, "extra": e}) for e in wanted):
            closure(requirement.name, tuple(requirement.extras), found)


def main() -> None:
    found: dict[str, str] = {}
    closure("codeloop", (), found)
    del found["codeloop"]
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    print(f"# codeloop's run-time dependencies as action.yml installs them (Python {python}).")
    print("# Regenerate with packaging/action/pin.py when pyproject.toml's dependencies change.")
    for key in sorted(found):
        print(f"{key}=={found[key]}")


if __name__ == "__main__":
    main()
