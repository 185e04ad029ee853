"""An ACP prompt's content blocks as codeloop's prompt: the text, and what is attached to it
(images; files as the @mention format writes them, with the text the editor sent rather than
a re-read of the disk). A block codeloop cannot pass on is refused, never silently dropped."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path
from urllib.parse import unquote, urlparse

from acp import RequestError, schema

from codeloop.commands.mentions import MAX_IMAGE_BYTES, attach, attached_file
from codeloop.system.valueclass import valueclass
from codeloop.text import IMAGE_TYPES
from codeloop.types import ImageBlock, TextBlock
from codeloop.workspace.tool_workspace import EditorFiles

Block = (
    schema.TextContentBlock
    | schema.ImageContentBlock
    | schema.AudioContentBlock
    | schema.ResourceContentBlock
    | schema.EmbeddedResourceContentBlock
)


@valueclass(frozen=False)
class Prompt:
    text: str = ""
    attachments: list[TextBlock | ImageBlock] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for the user: a linked file unreadable


async def to_prompt(blocks: Sequence[Block], cwd: Path, files: EditorFiles | None) -> Prompt:
    """RequestError (invalid params) names the first block codeloop cannot take. A linked
    file is the editor's buffer of it when `files` serves it."""
    prompt = Prompt()
    for block in blocks:
        match block:
            case schema.TextContentBlock(text=text):
                prompt.text += text
            case schema.ImageContentBlock(data=data, mime_type=mime):
                prompt.attachments.append(_image(data, mime, "the image"))
            case schema.EmbeddedResourceContentBlock(resource=resource):
                _embedded(prompt, resource, cwd)
            case schema.ResourceContentBlock(uri=uri, name=name):
                await _linked(prompt, uri, name, cwd, files)
            case _:
                raise _refused(
                    f"{block.type} content is not supported "
                    "(codeloop takes text, images and resources)"
                )
    if not prompt.text.strip() and not prompt.attachments:
        raise _refused("the prompt is empty")
    return prompt


def _embedded(
    prompt: Prompt, resource: schema.TextResourceContents | schema.BlobResourceContents, cwd: Path
) -> None:
    shown = _shown(resource.uri, cwd)
    if isinstance(resource, schema.TextResourceContents):
        prompt.text += (
            f" @{shown} " if prompt.text and not prompt.text.endswith(" ") else f"@{shown} "
        )
        prompt.attachments.append(attached_file(shown, resource.text))
        return
    mime = resource.mime_type or ""
    if mime not in IMAGE_TYPES.values():
        raise _refused(f"binary resource {resource.uri} ({mime or 'no type'}) is not supported")
    prompt.attachments.append(_image(resource.blob, mime, resource.uri))


async def _linked(
    prompt: Prompt, uri: str, name: str, cwd: Path, files: EditorFiles | None
) -> None:
    path = _file_path(uri)
    if path is None:  # not a file: the model sees the link
        prompt.text += f"[{name}]({uri})"
        return
    shown = _shown(uri, cwd)
    prompt.text += f"@{shown}"
    text_file = path.suffix.lower() not in IMAGE_TYPES
    buffer = await files.read_text(path) if files is not None and text_file else None
    if buffer is not None:
        prompt.attachments.append(attached_file(shown, buffer))
        return
    attached = attach(f'@"{path}"', cwd)
    prompt.attachments.extend(attached.blocks)
    prompt.notes.extend(attached.notes)
    if not attached.blocks and not attached.notes:
        prompt.notes.append(f"@{shown}: no such file")


def _image(data: str, mime: str, what: str) -> ImageBlock:
    if mime not in IMAGE_TYPES.values():
        known = ", ".join(sorted(set(IMAGE_TYPES.values())))
        raise _refused(f"{what}: {mime or 'no type'} is not an image type codeloop sends ({known})")
    try:
        size = len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        raise _refused(f"{what}: the data is not base64") from None
    if size > MAX_IMAGE_BYTES:
        raise _refused(f"{what} is too large ({size:,} bytes; at most {MAX_IMAGE_BYTES:,})")
    return ImageBlock(mime, data)


def _file_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def _shown(uri: str, cwd: Path) -> str:
    """A file inside the project by its relative path, anything else by its URI."""
    path = _file_path(uri)
    if path is None:
        return uri
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def _refused(message: str) -> RequestError:
    return RequestError(-32602, f"Invalid params: {message}", {"message": message})
