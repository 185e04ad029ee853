"""Print `key=...` for action.yml's cached install: the runner's system and machine, the
exact Python, and a hash of everything the install is made from (pyproject.toml, the
constraints, the source), so a new version of codeloop or of its pins installs afresh.

    python packaging/action/install_key.py ACTION_PATH >> "$GITHUB_OUTPUT"
"""

from __future__ import annotations

import hashlib
import platform
import sys
from pathlib import Path


def install_key(root: Path) -> str:
    digest = hashlib.sha256()
    files = [root / "pyproject.toml", *sorted((root / "packaging" / "action").iterdir())]
    files += sorted(p for p in (root / "src").rglob("*") if p.is_file() and p.suffix != ".pyc")
    for path in files:
        if path.is_file():
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    system = f"{platform.system()}-{platform.machine()}-py{platform.python_version()}"
    return f"codeloop-{system}-{digest.hexdigest()[:20]}"


if __name__ == "__main__":
    print(f"key={install_key(Path(sys.argv[1]))}")
