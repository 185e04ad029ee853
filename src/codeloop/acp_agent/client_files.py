"""The editor's buffers as the session's files (ACP's fs/read_text_file and
fs/write_text_file, when the client declares them): the model reads what the user sees,
unsaved changes included, and its edits land in the editor."""

from __future__ import annotations

from pathlib import Path

from acp import RequestError
from acp.interfaces import Client


class ClientFiles:
    def __init__(self, client: Client, session_id: str, *, read: bool, write: bool) -> None:
        self.client = client
        self.session_id = session_id
        self.read = read
        self.write = write

    async def read_text(self, path: Path) -> str | None:
        """None (read the disk) when the client does not read files or cannot read this one."""
        if not self.read:
            return None
        try:
            response = await self.client.read_text_file(session_id=self.session_id, path=str(path))
        except (RequestError, ConnectionError):
            return None
        return response.content

    async def write_text(self, path: Path, text: str) -> bool:
        if not self.write:
            return False
        try:
            await self.client.write_text_file(
                session_id=self.session_id, path=str(path), content=text
            )
        except RequestError as exc:
            raise OSError(f"the editor refused the write: {exc}") from None
        return True
