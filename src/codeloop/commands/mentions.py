"""`@path` in a prompt or a command file: the file's content (or the image) goes with it.

The text stays as written; each mentioned file that exists becomes an attachment after it.
A word after `@` that is no file (an e-mail address, a decorator) is left alone.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

from codeloop.system.valueclass import valueclass
from codeloop.text import IMAGE_TYPES, looks_binary
from codeloop.types import ImageBlock, TextBlock

MAX_TEXT_BYTES = 256 * 1024
MAX_IMAGE_BYTES = 3_932_160  # what the API takes after base64, as the Read tool sends
MAX_LISTING = 200
_MENTION = re.compile(r'(?:(?<=\s)|^)@("[^"\n]+"|[^\s"]+)')
_TRAILING = ",.;:!?)]}'"


@valueclass
class Attached:
    blocks: tuple[TextBlock | ImageBlock, ...]
    notes: tuple[str, ...]  # for the user: a file too big, or unreadable


def mentioned_paths(text: str, cwd: Path) -> list[Path]:
    """The existing files and folders `@` names in `text`, in order, each once."""
    found: list[Path] = []
    for match in _MENTION.finditer(text):
        raw = match.group(1).strip('"')
        path = _existing(raw, cwd) or _existing(raw.rstrip(_TRAILING), cwd)
        if path is not None and path not in found:
            found.append(path)
    return found


def attach(text: str, cwd: Path) -> Attached:
    blocks: list[TextBlock | ImageBlock] = []
    notes: list[str] = []
    for path in mentioned_paths(text, cwd):
        shown = _shown(path, cwd)
        try:
            block = _block(path, shown)
        except OSError as exc:
            notes.append(f"@{shown}: cannot read it ({exc.strerror or exc})")
            continue
        if isinstance(block, str):
            notes.append(block)
        else:
            blocks.append(block)
    return Attached(tuple(blocks), tuple(notes))


def _block(path: Path, shown: str) -> TextBlock | ImageBlock | str:
    if path.is_dir():
        entries = sorted(p.name + ("/" if p.is_dir() else "") for p in path.iterdir())
        more = f"\n... and {len(entries) - MAX_LISTING} more" if len(entries) > MAX_LISTING else ""
        listing = "\n".join(entries[:MAX_LISTING]) + more
        return TextBlock(f"The user mentioned the folder {shown}; it holds:\n{listing}")
    media = IMAGE_TYPES.get(path.suffix.lower())
    size = path.stat().st_size
    if media is not None:
        if size > MAX_IMAGE_BYTES:
            return f"@{shown}: the image is too large to attach ({size:,} bytes)"
        return ImageBlock(media, base64.b64encode(path.read_bytes()).decode("ascii"))
    if size > MAX_TEXT_BYTES:
        return f"@{shown}: too large to attach ({size:,} bytes); the model can Read it in parts"
    data = path.read_bytes()
    if looks_binary(data):
        return f"@{shown}: a binary file, not attached"
    return attached_file(shown, data.decode("utf-8", "replace"))


def attached_file(shown: str, content: str) -> TextBlock:
    """A file the user attached to a prompt, as the model reads it (an @mention, or the text
    an editor sent)."""
    return TextBlock(f'The user attached {shown}:\n<file path="{shown}">\n{content}</file>')


def _existing(raw: str, cwd: Path) -> Path | None:
    if not raw:
        return None
    path = (cwd / Path(raw).expanduser()).resolve()
    try:
        return path if path.exists() else None
    except OSError:
        return None


def _shown(path: Path, cwd: Path) -> str:
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)
