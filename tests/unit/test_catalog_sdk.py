"""The catalog against the official SDKs' own model lists: a current model an SDK names but the
catalog lacks fails here, so the next SDK update shows up as a failing test, not as wrong
limits and a $0 cost."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Iterable

import anthropic
import pytest
from anthropic._data import DEPRECATED_MODELS
from openai.types.shared import chat_model, responses_model

from codeloop.models.catalog import ModelInfo, catalog, lookup

# Not a model: the openai SDK keeps it "for compatibility" and says so in its deprecation list.
_NOT_MODELS = {"gpt-5.1-mini"}


def _literals(alias: object) -> set[str]:
    """Every string in a Literal, or a Union holding Literals (ResponsesModel is one)."""
    names: set[str] = set()
    for arg in typing.get_args(alias):
        if isinstance(arg, str):
            names.add(arg)
        else:
            names |= _literals(arg)
    return names


def _openai_deprecated() -> set[str]:
    """The names the openai SDK lists under "Deprecated values" in its model modules."""
    names: set[str] = set()
    for module in (chat_model, responses_model):
        source = inspect.getsource(module)
        if "Deprecated values" in source:
            names |= set(re.findall(r'"([^"]+)"', source.split("Deprecated values", 1)[1]))
    return names


def anthropic_current() -> set[str]:
    return _literals(anthropic.types.ModelParam) - set(DEPRECATED_MODELS)


def openai_current() -> set[str]:
    names = _literals(chat_model.ChatModel) | _literals(responses_model.ResponsesModel)
    return names - _openai_deprecated() - _NOT_MODELS


def missing(sdk_names: Iterable[str], models: Iterable[ModelInfo]) -> list[str]:
    """SDK model names no current catalog entry covers (a snapshot matches its family)."""
    table = {info.name: info for info in models}
    out = []
    for name in sorted(sdk_names):
        info = lookup(name)
        if info.name not in table or info.deprecated:
            out.append(name)
    return out


def test_the_sdks_are_the_ones_the_project_pins() -> None:
    assert tuple(int(p) for p in anthropic.__version__.split(".")[:2]) >= (2, 14)
    assert len(anthropic_current()) > 10 and len(openai_current()) > 20


@pytest.mark.parametrize("vendor", ["anthropic", "openai"])
def test_every_current_sdk_model_is_in_the_catalog(vendor: str) -> None:
    names = anthropic_current() if vendor == "anthropic" else openai_current()
    assert missing(names, catalog()) == []


def test_a_model_removed_from_the_catalog_fails_the_check() -> None:
    names = anthropic_current() | openai_current()
    for dropped in ("claude-sonnet-5-5", "gpt-6.2-sol"):
        without = [info for info in catalog() if info.name != dropped]
        assert missing(names, without) == [dropped]


def test_deprecated_sdk_models_still_resolve_and_name_a_current_replacement() -> None:
    for name in sorted(set(DEPRECATED_MODELS)):
        info = lookup(name)
        assert info.known and info.deprecated, name
        assert info.replacement is not None and not lookup(info.replacement).deprecated


@pytest.mark.parametrize(
    "info", [i for i in catalog() if i.provider != "local"], ids=lambda i: i.name
)
def test_every_entry_has_limits_and_prices(info: ModelInfo) -> None:
    assert info.context_window >= 8_192 and info.max_output_tokens >= 1_024
    assert info.input_price > 0 and info.output_price > info.input_price
    assert 0 < info.cache_read_price <= info.input_price
