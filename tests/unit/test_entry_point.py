"""One entry point above every face: the `codeloop` console script (pyproject's
[project.scripts]) starts where `python -m codeloop` does, so both run every face, `codeloop
batch` included, and end the same way; the flags both command lines share keep Claude Code's
permission modes."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from codeloop.permissions.modes import MODE_ALIASES, PERMISSION_MODES

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def console_script() -> list[str]:
    """What the installed `codeloop` script runs, as pyproject declares it."""
    target = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["scripts"]["codeloop"]
    module, function = target.split(":")
    code = f"import sys\nfrom {module} import {function}\nsys.exit({function}())\n"
    return [sys.executable, "-c", code]


@pytest.mark.parametrize(
    "argv",
    [["--version"], ["batch", "--help"], ["batch", "tasks.jsonl"], ["--no-such-flag"]],
)
def test_the_console_script_runs_what_python_m_codeloop_runs(
    argv: list[str], tmp_path: Path
) -> None:
    script = subprocess.run(
        [*console_script(), *argv], capture_output=True, text=True, cwd=tmp_path
    )
    module = subprocess.run(
        [sys.executable, "-m", "codeloop", *argv], capture_output=True, text=True, cwd=tmp_path
    )
    assert script.stdout or script.stderr
    assert (script.returncode, script.stdout, script.stderr) == (
        module.returncode,
        module.stdout,
        module.stderr,
    )


def test_the_permission_flag_offers_every_mode_the_front_door_takes() -> None:
    """Both command lines take every mode and every other name for one, and nothing else."""
    from codeloop.batch.cli import build_parser as batch_parser
    from codeloop.cli.main import build_parser

    for parser, given in ((build_parser(), []), (batch_parser(), ["t.jsonl", "--out", "r"])):
        for mode in (*PERMISSION_MODES, *MODE_ALIASES):
            args = parser.parse_args([*given, "--permission-mode", mode])
            assert args.permission_mode == mode
        with pytest.raises(SystemExit):
            parser.parse_args([*given, "--permission-mode", "bogus"])
