"""L1, the tool-result budget: a result too big for the window goes to a file instead.

The executor calls it as each result is made (`Workspace.spill`), before anyone sees it: a
result past the per-result limit, or past what is left of its turn's allowance, is saved, and
the model gets a head-and-tail preview and the file's path, which it can Read (with offset and
limit) or Grep when it needs more: nothing is lost, it only moved. This is for outputs that
cannot be asked for again cheaply (Bash, Grep, MCP and web results); Read sizes its own pages
and is never saved. Saving is idempotent (the file is named after the tool_use id).
"""

from __future__ import annotations

from pathlib import Path

from codeloop.context.tokens import estimate_text
from codeloop.system.lazy_pattern import LazyPattern
from codeloop.text import human_size, truncate_middle

PERSISTED_TAG = "<persisted-output>"
PREVIEW_CHARS = 2_000
# What the note replacing a saved result takes besides its preview: a result no bigger is
# never worth saving.
SAVED_NOTE_TOKENS = 100
_UNSAFE = LazyPattern(r"[^A-Za-z0-9_.-]")
_SAVED_PATH = LazyPattern(r"The full text is saved in (.+?): Read it")


def persist_result(
    tool_use_id: str, text: str, results_dir: Path, preview_chars: int = PREVIEW_CHARS
) -> str:
    """Save a result's text and return the preview that replaces it: its head and tail, in
    at most `preview_chars` (PREVIEW_CHARS at most)."""
    size = human_size(len(text.encode("utf-8")))
    path = results_dir / f"{_UNSAFE.sub('_', tool_use_id) or 'result'}.txt"
    try:
        results_dir.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text(text, encoding="utf-8")
    except OSError as exc:
        # Nowhere to put it: keep a preview anyway, so the window survives; say what was lost.
        where = f"It could not be saved ({exc.strerror or exc}); run the tool again, narrower."
    else:
        where = (
            f"The full text is saved in {path}: Read it (with offset and limit for a long "
            "file) or Grep it when you need more than this preview."
        )
    return (
        f"{PERSISTED_TAG}\nThis result was too large to keep in the conversation ({size}, "
        f"about {estimate_text(text):,} tokens). {where}\n\n"
        f"{truncate_middle(text, min(preview_chars, PREVIEW_CHARS))}\n</persisted-output>"
    )


def saved_path(text: str) -> str | None:
    """The file a preview points to (microcompact keeps it in its stub)."""
    if not text.startswith(PERSISTED_TAG):
        return None
    match = _SAVED_PATH.search(text)
    return match.group(1) if match else None
