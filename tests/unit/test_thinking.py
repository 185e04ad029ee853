"""Effort, thinking budgets and prompt keywords as each model's request fields, and the request
shaper that applies them with the long-context beta and the per-server overrides."""

from __future__ import annotations

import pytest

from codeloop.models.anthropic import request_body, request_headers
from codeloop.models.base import MediaError, ModelRequest, ToolSpec
from codeloop.models.catalog import lookup
from codeloop.models.openai import request_body as chat_body
from codeloop.models.shaping import RequestShape, parse_overrides
from codeloop.models.thinking import (
    INTERLEAVED_BETA,
    ThinkingConfig,
    apply_thinking,
    effort_for_budget,
    nearest_effort,
    prompt_effort,
)
from codeloop.types import ImageBlock, Message, ToolResultBlock

TOOL = ToolSpec("Read", "Read a file.", {"type": "object"})


def shaped(
    model: str, config: ThinkingConfig, prompt: str = "hi", **fields: object
) -> ModelRequest:
    request = ModelRequest(model, (Message.user(prompt),), max_tokens=8_192, **fields)  # type: ignore[arg-type]
    return apply_thinking(request, lookup(model), config)


def test_effort_on_an_adaptive_model_is_adaptive_thinking_with_that_effort() -> None:
    body = request_body(shaped("claude-sonnet-5-5", ThinkingConfig(effort="high")))
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": "high"}


def test_a_budget_on_an_adaptive_model_becomes_the_matching_effort() -> None:
    body = request_body(shaped("claude-opus-4-8", ThinkingConfig(budget=8_000)))
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": "medium"}


def test_a_budget_on_an_extended_model_is_a_budget_with_room_for_the_answer() -> None:
    request = shaped("claude-haiku-4-5", ThinkingConfig(budget=8_000), tools=(TOOL,))
    body = request_body(request)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8_000}
    assert body["max_tokens"] == 8_000 + 8_192
    assert "output_config" not in body
    # With tools, the model may think between calls.
    assert request_headers(request)["anthropic-beta"] == INTERLEAVED_BETA


def test_effort_max_on_an_extended_model_is_capped_below_its_output_limit() -> None:
    body = request_body(shaped("claude-haiku-4-5", ThinkingConfig(effort="max")))
    assert body["thinking"]["budget_tokens"] == 63_999
    assert body["max_tokens"] == 64_000


def test_nothing_asked_leaves_the_request_alone() -> None:
    for model in ("claude-sonnet-5-5", "claude-haiku-4-5", "gpt-6.2-sol", "claude-opus-5-5"):
        request = shaped(model, ThinkingConfig())
        assert not request.adaptive_thinking and request.effort is None, model
        assert request.thinking_budget is None


def test_always_thinking_models_take_only_an_effort() -> None:
    request = shaped("claude-fable-5-2", ThinkingConfig(effort="low"))
    assert (request.adaptive_thinking, request.effort, request.thinking_budget) == (
        True,
        "low",
        None,
    )


@pytest.mark.parametrize(
    ("prompt", "level"),
    [
        ("ultrathink: why does the parser loop?", "high"),
        ("Please think hard about this", "medium"),
        ("think harder", "high"),
        ("I think the bug is here", None),
        ("the pathink option", None),
    ],
)
def test_prompt_keywords(prompt: str, level: str | None) -> None:
    assert prompt_effort((Message.user(prompt),)) == level


def test_the_keyword_counts_for_the_whole_prompt_and_only_that_prompt() -> None:
    asked = Message.user("ultrathink: fix it")
    after_tools = (asked, Message("user", (ToolResultBlock("t1", "ok"),)))
    assert prompt_effort(after_tools) == "high"
    assert prompt_effort((*after_tools, Message.user("thanks, now tidy up"))) is None
    body = request_body(shaped("claude-haiku-4-5", ThinkingConfig(), prompt="ultrathink"))
    assert body["thinking"]["budget_tokens"] == 31_999


def test_the_stronger_of_the_setting_and_the_keyword_wins() -> None:
    request = shaped("claude-sonnet-5-5", ThinkingConfig(effort="low"), prompt="ultrathink")
    assert request.effort == "high"
    request = shaped("claude-sonnet-5-5", ThinkingConfig(effort="max"), prompt="think hard")
    assert request.effort == "max"


def test_openai_reasoning_effort_in_chat_completions() -> None:
    body = chat_body(shaped("gpt-6.2-sol", ThinkingConfig(effort="high")))
    assert body["reasoning_effort"] == "high"
    # o3 knows low/medium/high only: max becomes its highest.
    assert shaped("o3", ThinkingConfig(effort="max")).effort == "high"


def test_nearest_effort_and_budget_levels() -> None:
    assert nearest_effort("xhigh", ("low", "medium", "high", "max")) == "high"
    assert nearest_effort("low", ("medium",)) == "medium"
    assert [effort_for_budget(n) for n in (1_000, 8_000, 20_000, 40_000, 90_000)] == [
        "low",
        "medium",
        "high",
        "xhigh",
        "max",
    ]


# --- the shaper -------------------------------------------------------------------------------


def test_1m_suffix_is_stripped_and_adds_the_beta_only_where_it_is_needed() -> None:
    shape = RequestShape()
    old = shape.apply(ModelRequest("claude-sonnet-4-5[1m]", ()), "anthropic")
    assert old.model == "claude-sonnet-4-5"
    assert request_headers(old)["anthropic-beta"] == "context-1m-2025-08-07"
    new = shape.apply(ModelRequest("claude-sonnet-5-5[1m]", ()), "anthropic")
    assert new.model == "claude-sonnet-5-5" and "anthropic-beta" not in request_headers(new)


def test_overrides_add_fields_and_headers_to_the_requests_they_select() -> None:
    raw = {
        "openai": {"body": {"tool_choice": "required", "options": {"num_ctx": 8192}}},
        "openai:qwen3*": {"body": {"options": {"top_k": 20}}, "headers": {"x-route": "gpu"}},
        "claude-*": {"headers": {"x-team": "a"}},
        "broken": {"bodyy": {}},
    }
    overrides, warnings = parse_overrides(raw)
    assert warnings == [
        'requestOverrides.broken: expected {"body": {...}, "headers": {...}}; ignored'
    ]
    shape = RequestShape(overrides=overrides)
    qwen = shape.apply(ModelRequest("qwen3-coder:30b", ()), "openai")
    body = chat_body(qwen)
    assert body["tool_choice"] == "required"
    assert body["options"] == {"num_ctx": 8192, "top_k": 20}
    assert qwen.headers == {"x-route": "gpu"}
    llama = shape.apply(ModelRequest("llama3", ()), "openai")
    assert chat_body(llama)["options"] == {"num_ctx": 8192} and llama.headers == {}
    claude = shape.apply(ModelRequest("claude-sonnet-5-5", ()), "anthropic")
    assert claude.extra == {} and request_headers(claude) == {"x-team": "a"}


def test_an_image_for_a_model_without_vision_fails_before_sending() -> None:
    image = ImageBlock("image/png", "iVBORw0KGgo=")
    with_image = (Message("user", (ToolResultBlock("t", (image,)),)),)
    with pytest.raises(MediaError, match="reads no images"):
        RequestShape().apply(ModelRequest("smollm2-135m-instruct", with_image), "local")
    RequestShape().apply(ModelRequest("claude-sonnet-5-5", with_image), "anthropic")
