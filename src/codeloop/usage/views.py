"""A usage report's views: JSON for scripts, and the tables `codeloop usage` prints and /usage
shows (drawn with rich, imported only when a table is drawn)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from codeloop.usage.report import Group, Report, Tally, contributors

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

VIEWS = ("turn", "tool", "subagent", "model", "file")


# --- JSON ------------------------------------------------------------------------------------


def report_json(report: Report, views: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "sessions": [ledger.session_id for ledger in report.ledgers],
        "requests": len(report.requests),
        "total": report.total.to_json(),
        "cache_hit_rate": round(report.cache_hit_rate, 4),
        "savings": {
            "compaction_tokens": report.savings.compaction_tokens,
            "compaction_usd": round(report.savings.compaction_usd, 6),
            "fold_tokens": report.savings.fold_tokens,
            "fold_usd": round(report.savings.fold_usd, 6),
        },
        "largest": [
            {
                "what": c.label,
                "cost_usd": round(c.cost_usd, 10),
                "tokens": c.tokens,
                "requests": c.requests,
            }
            for c in contributors(report)
        ],
    }
    rows = _rows(report)
    for view in views:
        out[f"by_{view}"] = rows[view]
    return out


def _rows(report: Report) -> dict[str, list[dict[str, Any]]]:
    by_request = {(r.session_id, r.number): r for r in report.requests}
    turns = []
    for key, group in report.turns.items():
        r = by_request[key]
        turns.append(
            {
                "session": r.session_id,
                "number": r.number,
                "time": r.timestamp,
                "prompt": r.prompt,
                "agent": r.agent_id,
                "agent_description": r.agent_description or None,
                "model": r.model,
                "purpose": r.purpose,
                "outcome": r.outcome,
                "ttft_ms": r.ttft_ms,
                **group.tally.to_json(),
            }
        )
    return {
        "turn": turns,
        "tool": [
            {"tool": name, "calls": len(g.calls), "requests": len(g.requests), **g.tally.to_json()}
            for name, g in _costliest(report.tools)
        ],
        "subagent": [
            {
                "agent": agent_id,
                "description": g.label,
                "requests": len(g.requests),
                **g.tally.to_json(),
                "result_in_parent": _result_in_parent(report, agent_id).to_json(),
            }
            for agent_id, g in _costliest(report.subagents)
        ],
        "model": [
            {"model": name, "requests": len(g.requests), **g.tally.to_json()}
            for name, g in _costliest(report.models)
        ],
        "file": [
            {"file": name, "reads": len(g.calls), "requests": len(g.requests), **g.tally.to_json()}
            for name, g in _costliest(report.files)
        ],
    }


def _costliest(groups: dict[str, Group]) -> list[tuple[str, Group]]:
    return sorted(groups.items(), key=lambda item: (-item[1].tally.cost_usd, -item[1].tally.tokens))


def _result_in_parent(report: Report, agent_id: str) -> Tally:
    group = report.subagent_results.get(agent_id)
    return group.tally if group is not None else Tally()


# --- tables ----------------------------------------------------------------------------------


def print_report(report: Report, views: Sequence[str], console: Console | None = None) -> None:
    if console is None:
        from rich.console import Console

        console = Console(highlight=False)
    for line in summary_lines(report):
        console.print(line)
    rows = _rows(report)
    for view in views:
        console.print()
        console.print(_TABLES[view](rows[view]))


def usage_text(report: Report, views: Sequence[str], width: int) -> str:
    """The same as `codeloop usage` prints, as plain text `width` columns wide (the UI's
    /usage)."""
    import io

    from rich.console import Console as Plain

    out = io.StringIO()
    print_report(report, views, Plain(file=out, width=width, color_system=None, highlight=False))
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())


def summary_lines(report: Report) -> list[str]:
    """The few lines that say why it cost what it cost."""
    total = report.total
    sessions = len(report.ledgers)
    which = f"{sessions} sessions" if sessions > 1 else f"session {report.ledgers[0].session_id}"
    requests = report.requests
    main = sum(r.agent_id is None and r.purpose == "turn" for r in requests)
    agents = len({r.agent_id for r in requests if r.agent_id is not None})
    summaries = sum(r.purpose == "summary" for r in requests)
    made = [f"{main} by the main agent"]
    if agents:
        made.append(f"{len(requests) - main - summaries} by {agents} sub-agent(s)")
    if summaries:
        made.append(f"{summaries} compaction summaries")
    lines = [
        f"{which}: ${total.cost_usd:.4f} for {len(requests)} model requests ({', '.join(made)})",
        f"  tokens: {total.input:,} input, {total.cache_read:,} cache read, "
        f"{total.cache_write:,} cache write, {total.output:,} output",
        f"  cache hit rate: {report.cache_hit_rate:.0%} of prompt tokens were read from the cache",
    ]
    largest = contributors(report)
    if largest and total.cost_usd > 0:
        lines.append("  largest contributors:")
        for c in largest:
            share = c.cost_usd / total.cost_usd
            lines.append(
                f"    {share:4.0%}  ${c.cost_usd:.4f}  {c.label}  ({c.tokens:,} tokens"
                f" over {c.requests} request{'s' if c.requests != 1 else ''})"
            )
    savings = report.savings
    if savings.compaction_tokens or savings.fold_tokens:
        lines.append(
            f"  saved: compaction kept {savings.compaction_tokens:,} tokens out of later "
            f"requests, folding and moving big results to files {savings.fold_tokens:,} "
            f"(at least ${savings.compaction_usd + savings.fold_usd:.4f})"
        )
    return lines


def _table(title: str, columns: Sequence[str]) -> Table:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i < _TEXT_COLUMNS.get(title, 1) else "right")
    return table


_TEXT_COLUMNS = {"By turn": 4}
_TOKEN_HEADERS = ("input", "cache read", "cache write", "output", "cost")


def _tokens(row: dict[str, Any]) -> list[str]:
    return [
        f"{row['input_tokens']:,}",
        f"{row['cache_read_input_tokens']:,}",
        f"{row['cache_creation_input_tokens']:,}",
        f"{row['output_tokens']:,}",
        f"${row['cost_usd']:.4f}",
    ]


def _turn_table(rows: list[dict[str, Any]]) -> Table:
    table = _table("By turn", ("#", "time", "prompt", "who", "first token", *_TOKEN_HEADERS))
    for row in rows:
        who = "main" if row["agent"] is None else f"sub-agent {row['agent_description'] or ''}"
        if row["purpose"] == "summary":
            who += " (compaction summary)"
        elif row["outcome"] != "answer":
            who += f" ({row['outcome']})"
        stamp = _local_time(row["time"])
        ttft = "" if row["ttft_ms"] is None else f"{row['ttft_ms']:,} ms"
        table.add_row(str(row["number"]), stamp, str(row["prompt"]), who, ttft, *_tokens(row))
    return table


def _local_time(stamp: str) -> str:
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    return time.strftime("%m-%d %H:%M:%S", time.localtime(moment.timestamp()))


def _named_table(title: str, key: str, *counts: str) -> Any:
    def render(rows: list[dict[str, Any]]) -> Table:
        table = _table(title, (key, *counts, *_TOKEN_HEADERS))
        for row in rows:
            table.add_row(str(row[key]), *(str(row[c]) for c in counts), *_tokens(row))
        return table

    return render


def _subagent_table(rows: list[dict[str, Any]]) -> Table:
    headers = ("sub-agent", "requests", *_TOKEN_HEADERS, "its answer, later")
    table = _table("By sub-agent", headers)
    for row in rows:
        carried = row["result_in_parent"]
        prompt = sum(carried[k] for k in _PROMPT_KEYS)
        later = f"{prompt:,} tokens, ${carried['cost_usd']:.4f}"
        name = row["description"] or row["agent"]
        table.add_row(name, str(row["requests"]), *_tokens(row), later)
    return table


_PROMPT_KEYS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
_TABLES = {
    "turn": _turn_table,
    "tool": _named_table("By tool", "tool", "calls", "requests"),
    "subagent": _subagent_table,
    "model": _named_table("By model", "model", "requests"),
    "file": _named_table("By file read", "file", "reads", "requests"),
}
