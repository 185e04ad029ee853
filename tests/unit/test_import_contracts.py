"""The import contracts in pyproject.toml hold (layers, faces apart, models below tools, test
doubles for tests only, shell analysis on its own), every import counted: import-linter reads
lazy imports and `if TYPE_CHECKING:` ones too, and the config keeps them in."""

from __future__ import annotations

import tomllib
from pathlib import Path

from importlinter.cli import lint_imports

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_every_import_counts_for_the_contracts() -> None:
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]
    assert not config.get("exclude_type_checking_imports", False)
    kinds = {contract["type"] for contract in config["contracts"]}
    assert {"layers", "forbidden", "independence"} <= kinds


def test_the_import_contracts_hold() -> None:
    assert lint_imports(config_filename=str(PYPROJECT), no_cache=True) == 0
