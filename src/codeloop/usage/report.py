"""The usage report: totals by turn, tool, sub-agent, model and file, and why it cost that much.

Built in one pass over the parts attribute.py charges; rendering is the CLI's job (as a table
or as JSON, from `to_json`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import Any

from codeloop.models.catalog import model_info
from codeloop.system.valueclass import valueclass
from codeloop.usage.attribute import UNRECORDED, Part, parts
from codeloop.usage.ledger import Request, SessionLedger

FILE_TOOLS = frozenset({"Read"})
# What each kind of prompt segment is, in words, for the summary.
KIND_LABELS = {
    "system": "the system prompt and tool definitions, sent with every request",
    "prompt": "your prompts",
    "assistant": "the model's earlier answers and tool calls, re-sent as history",
    "summary": "compaction summaries",
    "meta": "reminders, memory and other added context",
    "output": "the model's output",
    UNRECORDED: "requests recorded before codeloop kept their contents",
}


@valueclass(frozen=False)
class Tally:
    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0
    cost_usd: float = 0.0

    def add(self, part: Part) -> None:
        setattr(self, part.type, getattr(self, part.type) + part.tokens)
        self.cost_usd += part.cost_usd

    @property
    def prompt(self) -> int:
        return self.input + self.cache_read + self.cache_write

    @property
    def tokens(self) -> int:
        return self.prompt + self.output

    def to_json(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input,
            "cache_read_input_tokens": self.cache_read,
            "cache_creation_input_tokens": self.cache_write,
            "output_tokens": self.output,
            "cost_usd": round(self.cost_usd, 10),
        }


@valueclass(frozen=False)
class Group:
    """One row of a breakdown: what it cost, and in how many calls and requests."""

    tally: Tally = field(default_factory=Tally)
    calls: set[str] = field(default_factory=set)  # tool calls
    requests: set[tuple[str, int]] = field(default_factory=set)  # (session, number)
    label: str = ""


@valueclass(frozen=False)
class Savings:
    """Tokens not re-sent thanks to compaction and folding, and what they would have cost
    at cache-read prices (the least they could have cost)."""

    compaction_tokens: int = 0
    compaction_usd: float = 0.0
    fold_tokens: int = 0
    fold_usd: float = 0.0


@valueclass(frozen=False)
class Report:
    ledgers: Sequence[SessionLedger]
    total: Tally = field(default_factory=Tally)
    turns: dict[tuple[str, int], Group] = field(default_factory=dict)
    tools: dict[str, Group] = field(default_factory=dict)
    calls: dict[str, Group] = field(default_factory=dict)
    subagents: dict[str, Group] = field(default_factory=dict)
    # The sub-agents' answers, as results riding along in their parent's later requests.
    subagent_results: dict[str, Group] = field(default_factory=dict)
    models: dict[str, Group] = field(default_factory=dict)
    files: dict[str, Group] = field(default_factory=dict)
    # What the main agent's requests were made of (each sub-agent is a row of its own).
    kinds: dict[str, Group] = field(default_factory=dict)
    savings: Savings = field(default_factory=Savings)
    requests: list[Request] = field(default_factory=list)

    @property
    def cache_hit_rate(self) -> float:
        prompt = self.total.prompt
        return self.total.cache_read / prompt if prompt else 0.0


def build_report(ledgers: Sequence[SessionLedger], since: str | None = None) -> Report:
    """`since` (an ISO date or time) leaves out requests made before it."""
    report = Report(ledgers)
    for ledger in ledgers:
        requests = [r for r in ledger.requests if since is None or r.timestamp >= since]
        report.requests += requests
        for request in requests:  # a request billed nothing (it failed at once) still shows
            key = (request.session_id, request.number)
            _group(report.turns, key, key)
            _group(report.models, request.model, key)
        for part in parts(requests):
            _add(report, part)
        _add_savings(report.savings, ledger, requests)
    return report


def _add(report: Report, part: Part) -> None:
    request = part.request
    key = (request.session_id, request.number)
    report.total.add(part)
    _group(report.turns, key, key).tally.add(part)
    _group(report.models, request.model, key).tally.add(part)
    if request.agent_id is None:
        _group(report.kinds, part.kind, key).tally.add(part)
    else:
        agent = _group(report.subagents, request.agent_id, key)
        agent.tally.add(part)
        agent.label = request.agent_description
    segment = part.segment
    if segment is None or segment.tool_use_id is None:
        return
    call_id, tool = segment.tool_use_id, segment.tool or "unknown tool"
    for groups, name in ((report.tools, tool), (report.calls, call_id)):
        group = _group(groups, name, key)
        group.tally.add(part)
        group.calls.add(call_id)
    report.calls[call_id].label = f"{tool} {segment.target}" if segment.target else tool
    if tool in FILE_TOOLS and segment.target:
        _group(report.files, segment.target, key).tally.add(part)
        report.files[segment.target].calls.add(call_id)
    if tool == "Task":
        _group(report.subagent_results, call_id, key).tally.add(part)


def _group(groups: dict[Any, Group], name: Any, request: tuple[str, int]) -> Group:
    group = groups.get(name)
    if group is None:
        group = groups[name] = Group()
    group.requests.add(request)
    return group


def _add_savings(savings: Savings, ledger: SessionLedger, requests: list[Request]) -> None:
    main = [r for r in requests if r.agent_id is None and r.purpose == "turn"]
    for compaction in ledger.compactions:
        if compaction.post_tokens is None:
            continue
        saved = max(0, compaction.pre_tokens - compaction.post_tokens)
        for request in main:
            if request.number > compaction.after:
                savings.compaction_tokens += saved
                savings.compaction_usd += saved * _read_price(request.model)
    for request in requests:
        for segment in request.segments or ():
            original = ledger.result_tokens.get(segment.tool_use_id or "")
            if original is not None and original > segment.tokens:
                saved = original - segment.tokens
                savings.fold_tokens += saved
                savings.fold_usd += saved * _read_price(request.model)


def _read_price(model: str) -> float:
    return model_info(model).cache_read_price / 1_000_000


@valueclass
class Contributor:
    label: str
    cost_usd: float
    tokens: int
    requests: int


def contributors(report: Report, limit: int = 5) -> list[Contributor]:
    """The costliest single causes: tool calls (their results, in every request that carried
    them), sub-agents (their own requests), and the kinds of context that are no tool's."""
    found: list[Contributor] = []
    for call in report.calls.values():
        found.append(
            Contributor(call.label, call.tally.cost_usd, call.tally.tokens, len(call.requests))
        )
    for agent_id, agent in report.subagents.items():
        name = f"sub-agent {agent.label or agent_id}"
        found.append(
            Contributor(name, agent.tally.cost_usd, agent.tally.tokens, len(agent.requests))
        )
    for kind, group in report.kinds.items():
        if kind in KIND_LABELS:
            tally = group.tally
            found.append(
                Contributor(KIND_LABELS[kind], tally.cost_usd, tally.tokens, len(group.requests))
            )
    found.sort(key=lambda c: (-c.cost_usd, -c.tokens))
    return [c for c in found[:limit] if c.tokens]
