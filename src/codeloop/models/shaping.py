"""The last step before a request leaves: what the catalog knows of its model, what the user
asked for, and each server's quirks, applied to every request of every provider alike.

- `name[1m]` is sent as `name`, with the long-context beta where the model needs one;
- thinking and effort (models/thinking.py);
- `requestOverrides` from the settings: extra body fields and headers per provider or model,
  for servers that want more than the standard request (llama.cpp's `tool_choice`, vLLM's
  and Ollama's options). Keys are a provider (`openai`), `provider:model-glob`
  (`openai:qwen3*`) or a model glob (`claude-*`); every matching entry applies, provider-wide
  ones first. Values: `{"body": {...}, "headers": {...}}`;
- an image sent to a model that reads no images fails here, before anything is sent.
"""

from __future__ import annotations

import fnmatch
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import field, replace
from typing import Any

from codeloop.history_fold import HistoryFold
from codeloop.models.base import MediaError, ModelClient, ModelRequest, StreamEvent
from codeloop.models.catalog import CONTEXT_1M_BETA, LONG_CONTEXT_SUFFIX, lookup
from codeloop.models.thinking import ThinkingConfig, apply_thinking, effort_after, prompt_effort
from codeloop.system.valueclass import valueclass
from codeloop.types import ImageBlock, Message, ToolResultBlock


@valueclass
class Override:
    """Extra request fields and headers for the requests `selector` matches."""

    selector: str
    body: Mapping[str, Any]
    headers: Mapping[str, str]

    def matches(self, provider: str, model: str) -> bool:
        head, colon, pattern = self.selector.partition(":")
        if colon:
            return head == provider and fnmatch.fnmatchcase(model.lower(), pattern.lower())
        pattern = self.selector.lower()
        return self.selector == provider or fnmatch.fnmatchcase(model.lower(), pattern)

    @property
    def specificity(self) -> int:
        return 0 if ":" not in self.selector and "*" not in self.selector else 1


def parse_overrides(raw: Mapping[str, Any]) -> tuple[tuple[Override, ...], list[str]]:
    """The settings' `requestOverrides` object as overrides, and a warning per bad entry."""
    overrides, warnings = [], []
    for selector, entry in raw.items():
        where = f"requestOverrides.{selector}"
        if not isinstance(entry, Mapping) or not set(entry) <= {"body", "headers"}:
            warnings.append(f'{where}: expected {{"body": {{...}}, "headers": {{...}}}}; ignored')
            continue
        body, headers = entry.get("body", {}), entry.get("headers", {})
        if not isinstance(body, Mapping) or not isinstance(headers, Mapping):
            warnings.append(f"{where}: body and headers must be objects; ignored")
            continue
        if not all(isinstance(v, str) for v in headers.values()):
            warnings.append(f"{where}.headers: values must be strings; ignored")
            continue
        overrides.append(Override(selector, dict(body), dict(headers)))
    overrides.sort(key=lambda o: o.specificity)
    return tuple(overrides), warnings


@valueclass
class RequestShape:
    thinking: ThinkingConfig = field(default_factory=ThinkingConfig)
    overrides: tuple[Override, ...] = ()
    # --betas: Anthropic beta features every request asks for.
    betas: tuple[str, ...] = ()

    def apply(
        self, request: ModelRequest, provider: str, scans: HistoryScans | None = None
    ) -> ModelRequest:
        """`scans` reads the history (from scratch unless a client keeps them, `HistoryScans`)."""
        scans = scans or HistoryScans(prompt_effort, has_images)
        model = request.model
        betas = (*request.betas, *(b for b in self.betas if b not in request.betas))
        if model.lower().endswith(LONG_CONTEXT_SUFFIX):
            model = model[: -len(LONG_CONTEXT_SUFFIX)]
            if lookup(model).extended_window:
                betas = (*betas, CONTEXT_1M_BETA)
        info = lookup(model)
        if info.known and not info.images and scans.images(request.messages):
            raise MediaError(f"{model} reads no images; this request carries one")
        shaped = replace(request, model=model, betas=betas)
        shaped = apply_thinking(shaped, info, self.thinking, scans.effort)
        extra, headers = dict(shaped.extra), dict(shaped.headers)
        for override in self.overrides:
            if override.matches(provider, model):
                extra = _merged(extra, override.body)
                headers.update(override.headers)
        return replace(shaped, extra=extra, headers=headers)


@valueclass
class HistoryScans:
    """What shaping reads from the whole history: the latest prompt's effort keyword, and
    whether any image is in it."""

    effort: Callable[[Sequence[Message]], str | None]
    images: Callable[[Sequence[Message]], bool]

    @staticmethod
    def kept() -> HistoryScans:
        """Both kept as the history grows (history_fold.py): a request costs its new messages."""
        return HistoryScans(
            HistoryFold(None, effort_after),
            HistoryFold(False, lambda seen, message: seen or _has_image(message)),
        )


class ShapedClient:
    """A provider's client with `shape` applied to every request it sends."""

    def __init__(self, inner: ModelClient, shape: RequestShape) -> None:
        self.inner = inner
        self.shape = shape
        self.provider = inner.provider
        self._scans = HistoryScans.kept()

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        return self.inner.stream(self.shape.apply(request, self.provider, self._scans))

    async def aclose(self) -> None:
        await self.inner.aclose()


def has_images(messages: Sequence[Message]) -> bool:
    return any(_has_image(message) for message in messages)


def _has_image(message: Message) -> bool:
    blocks = list(message.content)
    for block in blocks:
        if isinstance(block, ToolResultBlock) and not isinstance(block.content, str):
            blocks.extend(block.content)
    return any(isinstance(block, ImageBlock) for block in blocks)


def _merged(low: Mapping[str, Any], high: Mapping[str, Any]) -> dict[str, Any]:
    """Objects merge key by key; anything else in `high` replaces what `low` had."""
    out = dict(low)
    for key, value in high.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out
