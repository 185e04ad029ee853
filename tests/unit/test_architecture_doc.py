"""docs/architecture.md stays true: every file and module it names exists, and every package of
src/codeloop is named in it. A moved file or a new package fails here until the page follows."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"

# A repository path the page names: under src/codeloop, tests, bench or scripts.
_PATH = re.compile(r"(?<![\w./-])(?:src/codeloop|tests|bench|scripts)(?:/[\w.*-]+)*/?")
# A dotted module name: codeloop, codeloop.x, codeloop.x.y ...
_MODULE = re.compile(r"(?<![\w./-])codeloop(?:\.\w+)*")


def named_paths(doc: str) -> set[str]:
    return {match.rstrip(".") for match in _PATH.findall(doc)}


def named_modules(doc: str) -> set[str]:
    return set(_MODULE.findall(doc))


def missing_paths(doc: str, root: Path) -> list[str]:
    """The paths the page names that match nothing in the tree (a `*` is a glob)."""
    return sorted(
        path
        for path in named_paths(doc)
        if not (any(root.glob(path)) if "*" in path else (root / path).exists())
    )


def missing_modules(doc: str, root: Path) -> list[str]:
    """The dotted names that are neither a module file nor a package under src/."""
    missing = []
    for name in named_modules(doc):
        base = root / "src" / Path(*name.split("."))
        if not (base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()):
            missing.append(name)
    return sorted(missing)


def packages(root: Path) -> list[str]:
    """Every package of src/codeloop, as dotted names."""
    src = root / "src"
    return sorted(
        ".".join(init.parent.relative_to(src).parts)
        for init in (src / "codeloop").rglob("__init__.py")
    )


def unnamed_packages(doc: str, root: Path) -> list[str]:
    """Packages the page names neither as `codeloop.x.y` nor as `src/codeloop/x/y/`."""
    modules, paths = named_modules(doc), {path.rstrip("/") for path in named_paths(doc)}
    return [
        package
        for package in packages(root)
        if package not in modules and "src/" + package.replace(".", "/") not in paths
    ]


def test_every_path_the_document_names_exists() -> None:
    doc = DOC.read_text()
    assert named_paths(doc), "the page names no path: the pattern is broken"
    assert missing_paths(doc, ROOT) == []


def test_every_module_the_document_names_exists() -> None:
    doc = DOC.read_text()
    assert named_modules(doc), "the page names no module: the pattern is broken"
    assert missing_modules(doc, ROOT) == []


def test_every_package_is_in_the_document() -> None:
    assert unnamed_packages(DOC.read_text(), ROOT) == []


def _tree(root: Path, files: list[str]) -> None:
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")


def test_the_checks_catch_a_removed_file_and_an_unnamed_package(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        [
            "src/codeloop/__init__.py",
            "src/codeloop/loop.py",
            "src/codeloop/tools/__init__.py",
            "src/codeloop/tools/executor.py",
            "src/codeloop/fresh/__init__.py",
            "tests/unit/test_loop.py",
        ],
    )
    doc = (
        "In `codeloop`, `codeloop.loop` runs, and `codeloop.tools` holds "
        "`codeloop.tools.executor` and `codeloop.tools.gone`. "
        "See `tests/unit/test_loop.py`, `tests/unit/test_gone.py` and `bench/*.py`."
    )
    assert missing_paths(doc, tmp_path) == ["bench/*.py", "tests/unit/test_gone.py"]
    assert missing_modules(doc, tmp_path) == ["codeloop.tools.gone"]
    assert unnamed_packages(doc, tmp_path) == ["codeloop.fresh"]
    named = doc + " The new package lives in src/codeloop/fresh/."
    assert unnamed_packages(named, tmp_path) == []
