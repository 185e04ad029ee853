"""A session's events as Claude Code's metrics, events (OpenTelemetry logs) and spans.

Metric and event names, attribute names and their values follow Claude Code's monitoring
documentation, so collectors and dashboards built for it read codeloop's data unchanged:
`claude_code.session.count`, `.cost.usage`, `.token.usage` (type input, output, cacheRead,
cacheCreation), `.lines_of_code.count`, `.commit.count`, `.pull_request.count`,
`.active_time.total`, `.code_edit_tool.decision`; the events `claude_code.user_prompt` (its
text only with OTEL_LOG_USER_PROMPTS=1), `.api_request`, `.api_error`, `.tool_decision`,
`.tool_result`, `.compaction`; and the spans `claude_code.interaction` (one per prompt) with
`claude_code.llm_request` and `claude_code.tool` children, a sub-agent's nested under the Task
call that started it.
"""

from __future__ import annotations

import os
import secrets
import time
import uuid
from collections.abc import Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

from codeloop._version import __version__
from codeloop.events import (
    CompactBoundary,
    Event,
    LoopEnd,
    RequestEnd,
    SubAgent,
    ToolFinished,
    ToolStarted,
)
from codeloop.models.catalog import cost_usd
from codeloop.store.data_paths import codeloop_home
from codeloop.telemetry.activity import (
    EDIT_TOOLS,
    is_commit,
    is_pull_request,
    language,
    lines_changed,
    tool_input,
    tool_parameters,
)
from codeloop.telemetry.config import TelemetryConfig
from codeloop.telemetry.providers import LOGGER_NAME, METER_NAME, TRACER_NAME, build_providers
from codeloop.types import Message, ToolUseBlock

Attributes = dict[str, Any]
# name: (unit, description), as Claude Code declares them.
METRICS = {
    "claude_code.session.count": ("", "Count of CLI sessions started"),
    "claude_code.lines_of_code.count": ("", "Count of lines of code modified"),
    "claude_code.pull_request.count": ("", "Number of pull requests created"),
    "claude_code.commit.count": ("", "Number of git commits created"),
    "claude_code.cost.usage": ("USD", "Cost of the Claude Code session"),
    "claude_code.token.usage": ("tokens", "Number of tokens used"),
    "claude_code.code_edit_tool.decision": ("", "Count of code editing tool permission decisions"),
    "claude_code.active_time.total": ("s", "Total active time"),
}
TOKEN_TYPES = (
    ("input", "input_tokens"),
    ("output", "output_tokens"),
    ("cacheRead", "cache_read_input_tokens"),
    ("cacheCreation", "cache_creation_input_tokens"),
)
REDACTED = "<REDACTED>"


class SessionTelemetry:
    """The SessionObserver that exports one session's telemetry."""

    def __init__(
        self,
        config: TelemetryConfig,
        env: Mapping[str, str],
        session_id: str,
        model: str,
        start_type: str,
    ) -> None:
        self._config = config
        self._model = model
        self._providers = build_providers(config)
        standard: Attributes = {"session.id": session_id, "user.id": _user_id(env)}
        if terminal := env.get("TERM_PROGRAM") or env.get("TERM"):
            standard["terminal.type"] = terminal
        if config.metrics_version:
            standard["app.version"] = __version__
        # Custom keys never override the standard ones.
        self._event_base = {**config.resource_attributes, **standard}
        metric_base = dict(self._event_base)
        if not config.metrics_resource_attributes:
            metric_base = {
                k: v for k, v in metric_base.items() if k not in config.resource_attributes
            }
        if not config.metrics_session_id:
            metric_base.pop("session.id")
        self._metric_base = metric_base
        providers = self._providers
        meter = providers.meters.get_meter(METER_NAME, __version__) if providers.meters else None
        self._counters = (
            {
                name: meter.create_counter(name, unit=unit, description=text)
                for name, (unit, text) in METRICS.items()
            }
            if meter is not None
            else {}
        )
        self._logger = (
            providers.loggers.get_logger(LOGGER_NAME, __version__) if providers.loggers else None
        )
        self._tracer = (
            providers.tracers.get_tracer(TRACER_NAME, __version__) if providers.tracers else None
        )
        self._sequence = 0
        self._prompt_id: str | None = None
        self._interactions = 0
        self._interaction: Span | None = None
        self._prompt_started = 0.0
        self._tools: dict[str, Span] = {}
        self._count("claude_code.session.count", 1, start_type=start_type)

    # --- SessionObserver ------------------------------------------------------------------

    def prompt(self, message: Message) -> None:
        self._prompt_id = str(uuid.uuid4())
        self._interactions += 1
        self._prompt_started = time.monotonic()
        text = message.text
        shown: Attributes = {"prompt": text} if self._config.log_user_prompts else {}
        self._emit(
            "user_prompt", prompt_length=len(text), **shown, **{"message.uuid": message.uuid}
        )
        if self._tracer is not None:
            self._interaction = self._tracer.start_span(
                "claude_code.interaction",
                attributes=self._span_attributes(
                    "claude_code.interaction",
                    user_prompt=text if self._config.log_user_prompts else REDACTED,
                    user_prompt_length=len(text),
                    **{"interaction.sequence": self._interactions},
                ),
            )

    def event(self, event: Event, agent: SubAgent | None) -> None:
        if isinstance(event, RequestEnd):
            self._request(event, agent)
        elif isinstance(event, ToolStarted):
            self._tool_span(event.tool_use.id, event.tool_use.name, agent)
        elif isinstance(event, ToolFinished):
            self._tool_finished(event, agent)
        elif isinstance(event, CompactBoundary):
            self._emit(  # a failed compaction leaves no boundary (the history stands)
                "compaction",
                trigger=event.trigger,
                success="true",
                pre_tokens=event.tokens_before,
                post_tokens=event.tokens_after,
            )
        elif isinstance(event, LoopEnd) and agent is None:
            self._end_interaction()

    def close(self) -> None:
        self._end_interaction()
        for span in self._tools.values():
            span.end()
        self._tools.clear()
        self._providers.shutdown()

    # --- requests ---------------------------------------------------------------------------

    def _request(self, event: RequestEnd, agent: SubAgent | None) -> None:
        model, usage = event.request.model, event.usage
        self._model = model if event.purpose == "turn" and agent is None else self._model
        cost = cost_usd(model, usage)
        if event.purpose != "turn":
            category, source = "auxiliary", "compact" if event.purpose == "summary" else "hook"
        elif agent is not None:
            category, source = "subagent", agent_name(agent)
        else:
            category, source = "main", "repl_main_thread"
        labels: Attributes = {"model": model, "query_source": category}
        if agent is not None:
            labels["agent.name"] = agent_name(agent)
        self._count("claude_code.cost.usage", cost, **labels)
        for token_type, field in TOKEN_TYPES:
            self._count("claude_code.token.usage", getattr(usage, field), type=token_type, **labels)
        common: Attributes = {
            "model": model,
            "duration_ms": round(event.duration_ms),
            "speed": "normal",
            "query_source": source,
        }
        if agent is not None:
            common["agent.name"] = agent_name(agent)
        if event.ttft_ms is not None:
            common["ttft_ms"] = round(event.ttft_ms)
        if event.error is not None:
            status = {"status_code": event.status} if event.status is not None else {}
            self._emit("api_error", error=event.error, attempt=event.attempt, **status, **common)
        else:
            self._emit(
                "api_request",
                cost_usd=cost,
                cost_usd_micros=round(cost * 1_000_000),
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_read_tokens=usage.cache_read_input_tokens,
                cache_creation_tokens=usage.cache_creation_input_tokens,
                **common,
            )
        if self._tracer is None:
            return
        ended = time.time_ns()
        attributes = self._span_attributes(
            "claude_code.llm_request",
            model=model,
            query_source=source,
            duration_ms=round(event.duration_ms),
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_input_tokens,
            cache_creation_tokens=usage.cache_creation_input_tokens,
            attempt=event.attempt,
            success=event.error is None,
            **{"gen_ai.request.model": model},
        )
        if event.ttft_ms is not None:
            attributes["ttft_ms"] = round(event.ttft_ms)
        if agent is not None:
            attributes["agent_id"] = agent.tool_use_id
        if event.error is not None:
            attributes["error"] = event.error
            if event.status is not None:
                attributes["status_code"] = event.status
        span = self._tracer.start_span(
            "claude_code.llm_request",
            context=self._parent(agent),
            attributes=attributes,
            start_time=ended - round(event.duration_ms * 1_000_000),
        )
        if event.error is not None:
            span.set_status(Status(StatusCode.ERROR, event.error))
        span.end(end_time=ended)

    # --- tools ------------------------------------------------------------------------------

    def _tool_span(self, call_id: str, name: str, agent: SubAgent | None) -> Span | None:
        """The call's open span, started now if it is not yet (a sub-agent's requests can be
        seen before its Task call's start is)."""
        if self._tracer is None:
            return None
        span = self._tools.get(call_id)
        if span is None:
            attributes = self._span_attributes(
                "claude_code.tool",
                tool_name=name,
                tool_use_id=call_id,
                **{"gen_ai.tool.call.id": call_id},
            )
            if agent is not None:
                attributes["agent_id"] = agent.tool_use_id
            span = self._tracer.start_span(
                "claude_code.tool", context=self._parent(agent), attributes=attributes
            )
            self._tools[call_id] = span
        return span

    def _tool_finished(self, event: ToolFinished, agent: SubAgent | None) -> None:
        use, result = event.tool_use, event.result
        success = not result.is_error
        source = event.decision_source or "config"
        if event.decision is not None:
            self._emit(
                "tool_decision",
                tool_name=use.name,
                tool_use_id=use.id,
                decision=event.decision,
                source=source,
                tool_source="mcp" if use.name.startswith("mcp__") else "builtin",
                **self._details(use, input_too=False),
            )
            if use.name in EDIT_TOOLS:
                path = str(use.input.get("file_path") or use.input.get("notebook_path") or "")
                self._count(
                    "claude_code.code_edit_tool.decision",
                    1,
                    tool_name=use.name,
                    decision=event.decision,
                    source=source,
                    language=language(path),
                )
        if event.decision == "accept":
            size = len(result.text.encode("utf-8"))
            self._emit(
                "tool_result",
                tool_name=use.name,
                tool_use_id=use.id,
                success="true" if success else "false",
                duration_ms=round(event.duration_ms),
                decision_type="accept",
                decision_source=source,
                tool_input_size_bytes=len(tool_input(use).encode("utf-8")),
                tool_result_size_bytes=size,
                **({} if success else {"error_type": "ToolError"}),
                **({"error": result.text} if not success and self._config.log_tool_details else {}),
                **self._details(use, input_too=True),
            )
            if success:
                self._count_activity(use)
        span = self._tool_span(use.id, use.name, agent)
        self._tools.pop(use.id, None)
        if span is not None:
            span.set_attribute("duration_ms", round(event.duration_ms))
            span.set_attribute("result_tokens", (len(result.text) + 3) // 4)
            ended = time.time_ns()
            execution = self._tracer.start_span(  # type: ignore[union-attr]
                "claude_code.tool.execution",
                context=trace.set_span_in_context(span),
                attributes=self._span_attributes(
                    "claude_code.tool.execution",
                    duration_ms=round(event.duration_ms),
                    tool_use_id=use.id,
                    success=success,
                ),
                start_time=ended - round(event.duration_ms * 1_000_000),
            )
            if not success:
                execution.set_status(Status(StatusCode.ERROR))
            execution.end(end_time=ended)
            span.end(end_time=ended)

    def _count_activity(self, use: ToolUseBlock) -> None:
        if use.name in EDIT_TOOLS:
            added, removed = lines_changed(use)
            for kind, lines in (("added", added), ("removed", removed)):
                if lines:
                    self._count(
                        "claude_code.lines_of_code.count", lines, type=kind, model=self._model
                    )
        elif use.name == "Bash":
            command = str(use.input.get("command") or "")
            if is_commit(command):
                self._count("claude_code.commit.count", 1)
            if is_pull_request(command):
                self._count("claude_code.pull_request.count", 1)

    def _details(self, use: ToolUseBlock, *, input_too: bool) -> Attributes:
        if not self._config.log_tool_details:
            return {}
        details: Attributes = {"tool_parameters": tool_parameters(use)}
        if input_too:
            details["tool_input"] = tool_input(use)
        return details

    # --- plumbing ---------------------------------------------------------------------------

    def _end_interaction(self) -> None:
        if self._prompt_id is None:
            return
        elapsed = time.monotonic() - self._prompt_started
        self._count("claude_code.active_time.total", elapsed, type="cli")
        if self._interaction is not None:
            self._interaction.set_attribute("interaction.duration_ms", round(elapsed * 1000))
            self._interaction.end()
            self._interaction = None
        self._prompt_id = None

    def _parent(self, agent: SubAgent | None) -> Any:
        """A sub-agent's spans nest under its Task call's; the rest under the interaction."""
        if agent is not None:
            span = self._tool_span(agent.tool_use_id, "Task", None)
        else:
            span = self._interaction
        return trace.set_span_in_context(span) if span is not None else None

    def _count(self, name: str, value: float, **attributes: Any) -> None:
        counter = self._counters.get(name)
        if counter is not None:
            counter.add(value, {**attributes, **self._metric_base})

    def _emit(self, name: str, **attributes: Any) -> None:
        if self._logger is None:
            return
        self._sequence += 1
        now = time.time_ns()
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now // 1_000_000_000))
        base: Attributes = {
            "event.name": name,
            "event.timestamp": f"{stamp}.{now // 1_000_000 % 1000:03d}Z",
            "event.sequence": self._sequence,
        }
        if self._prompt_id is not None:
            base["prompt.id"] = self._prompt_id
        self._logger.emit(
            timestamp=now,
            body=f"claude_code.{name}",
            event_name=f"claude_code.{name}",
            attributes={**attributes, **base, **self._event_base},
        )

    def _span_attributes(self, name: str, **attributes: Any) -> Attributes:
        return {**attributes, "span.type": name, **self._event_base}


def _user_id(env: Mapping[str, str]) -> str:
    """An anonymous id for this user, kept in codeloop's folder (as Claude Code keeps its in
    ~/.claude.json): the same across sessions, derived from nothing about the user."""
    path = codeloop_home(env) / "telemetry-user-id"
    try:
        found = path.read_text(encoding="ascii").strip()
        if len(found) == 64:
            return found
    except (OSError, UnicodeDecodeError):
        pass
    made = secrets.token_hex(32)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as file:
            file.write(made + "\n")
    except OSError:
        pass  # unsaved: this session's id is a fresh one
    return made


def agent_name(agent: SubAgent) -> str:
    """A sub-agent's name as Claude Code exports it: built-in names verbatim, the names of
    agents a user or a plugin defined replaced with "custom" (they may say what the work is)."""
    return agent.agent_type if agent.built_in else "custom"
