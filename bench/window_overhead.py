"""What every request carries besides the conversation (system prompt and tools), and the room
it leaves before compaction, per profile and per provider rendering, at 8K, 16K, 32K and 200K
windows: the numbers behind issue 37's "too small for this session" on the first offline run.

  full / schemas    the full tool set as Claude's and OpenAI's APIs carry it (what codeloop
                    counted for every provider before issue 37, `local:` included)
  full / local      the same tools as the `local:` provider sends them: a one-line list
  compact / ...     the compact profile (tools/profile.py): core tools, first lines,
                    required fields, a short git status

Counted with codeloop's own estimate (about 4 characters a token), in this checkout's git
state; the room is `Shares.free` (the autocompact threshold less the overhead) for a model
with an 8K answer limit, and the per-result cap that room gives.

    python -m bench.window_overhead
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from codeloop.context.system_prompt import gather_prompt_context
from codeloop.context.tokens import ContextLimits, Shares
from codeloop.models.catalog import UNKNOWN
from codeloop.models.local import LocalModel
from codeloop.models.prompt_size import prompt_tokens, schema_prompt_tokens
from codeloop.tools.profile import compact_tools
from codeloop.tools.registry import default_tools

WINDOWS = (8_192, 16_384, 32_768, 200_000)


async def main() -> None:
    full = default_tools()
    compact = compact_tools(full, lambda specs: schema_prompt_tokens("", specs))
    local = LocalModel(Path("model.gguf"))  # never loaded: only its rendering is asked
    head = f"{'profile / rendering':<20}{'tools':>6}{'overhead':>10}"
    print(head + "".join(f"{f'free@{w // 1000}K':>12}{'result cap':>11}" for w in WINDOWS))
    try:
        for name, tools, brief in (("full", full, False), ("compact", compact, True)):
            system = (await gather_prompt_context(Path.cwd(), "m", brief=brief)).system
            specs = tuple(tool.spec() for tool in tools.values())
            for rendering, overhead in (
                ("schemas", schema_prompt_tokens(system, specs)),
                ("local", prompt_tokens(local, system, specs)),
            ):
                row = f"{name + ' / ' + rendering:<20}{len(specs):>6}{overhead:>10,}"
                for window in WINDOWS:
                    info = replace(UNKNOWN, context_window=window)
                    shares = Shares(ContextLimits.for_model(info), overhead)
                    row += f"{shares.free:>12,}{shares.result:>11,}"
                print(row)
    finally:
        await local.aclose()


if __name__ == "__main__":
    asyncio.run(main())
