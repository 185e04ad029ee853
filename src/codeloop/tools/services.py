"""What some tools act through, beyond the workspace: the session's policy (ExitPlanMode leaves
plan mode), the question dialog (AskUserQuestion), a model for quick side questions
(WebFetch), the search backend (WebSearch), the domain rules (WebFetch's address check).

The assembler creates one ToolServices before the tools and fills it once the session exists;
a tool reads it when it is built, on first use, which is always after that.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any, Protocol

from codeloop.system.valueclass import valueclass
from codeloop.tools.questions import QuestionChannel

if TYPE_CHECKING:
    from codeloop.lsp.servers import LanguageServers


class SideModel(Protocol):
    """One question to a (small, fast) model, no tools of ours (a provider's server-side
    tools, such as web search, may be given); its cost counts in the session's."""

    async def ask(
        self,
        prompt: str,
        *,
        system: str,
        max_tokens: int = 2048,
        server_tools: tuple[Mapping[str, Any], ...] = (),
    ) -> str: ...


# One search: (query, allowed domains, blocked domains) -> the results, written out for the
# model; raises SearchFailed with a message for it.
Search = Callable[[str, tuple[str, ...], tuple[str, ...]], Awaitable[str]]


class SearchFailed(Exception):
    pass


@valueclass(frozen=False)
class ToolServices:
    # Ends plan mode; whether the session was in it.
    leave_plan_mode: Callable[[], bool] | None = None
    questions: QuestionChannel = field(default_factory=QuestionChannel)
    side_model: SideModel | None = None
    # WebSearch's backends: a SearXNG-compatible endpoint from settings (`webSearch.url`), and
    # whether the provider searches on its side (Anthropic's server tool, via side_model).
    search_endpoint: str | None = None
    server_search: bool = False
    # Whether an allow rule names this host for WebFetch (`WebFetch(domain:HOST)`): the one
    # way to reach a loopback, private or link-local address.
    host_allowed: Callable[[str], bool] | None = None
    # The language servers plugins configure (the LSP tool's; None: no server configured).
    language_servers: LanguageServers | None = None

    @property
    def can_search(self) -> bool:
        """Whether WebSearch has a backend: without one the tool is not offered."""
        return bool(self.search_endpoint) or self.server_search
