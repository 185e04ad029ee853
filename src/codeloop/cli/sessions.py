"""`codeloop sessions`: this directory's saved sessions as a table, newest first."""

from __future__ import annotations

import argparse
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from codeloop.session_store import SessionStore, SessionSummary

HEADER = ("SESSION", "LAST ACTIVE", "TURNS", "COST", "FIRST PROMPT")


def run_sessions(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="codeloop sessions",
        description="List the sessions started in this directory, newest first. "
        'Continue one with: codeloop -p "PROMPT" --resume ID',
    )
    parser.parse_args(argv)
    project = Path.cwd().resolve()
    summaries = SessionStore(project, os.environ).summaries()
    if not summaries:
        print(f"No sessions in {project} yet.")
        return 0
    width = shutil.get_terminal_size((120, 24)).columns
    for line in format_table(summaries, width):
        print(line)
    return 0


def format_table(summaries: Sequence[SessionSummary], width: int) -> list[str]:
    rows = [
        (
            s.session_id,
            time.strftime("%Y-%m-%d %H:%M", time.localtime(s.last_active)),
            str(s.turns),
            f"${s.cost_usd:.4f}",
            " ".join(s.first_prompt.split()) or "-",
        )
        for s in summaries
    ]
    widths = [max(len(row[i]) for row in (HEADER, *rows)) for i in range(4)]

    def line(row: tuple[str, ...]) -> str:
        sid, date, turns, cost, prompt = row
        head = (
            f"{sid:<{widths[0]}}  {date:<{widths[1]}}  {turns:>{widths[2]}}  {cost:>{widths[3]}}  "
        )
        room = max(20, width - len(head))
        return head + (prompt if len(prompt) <= room else prompt[: room - 1] + "…")

    return [line(HEADER), *(line(row) for row in rows)]
