"""WebSearch: search the web, in Claude Code's schema (query, allowed_domains, blocked_domains).

Two backends, chosen when the session is built (`search_backend`): on Anthropic, the API's
server-side web search tool, used through one side request to the small fast model (the
domain lists go to the API, which applies them); elsewhere a SearXNG-compatible JSON endpoint
named in settings (`webSearch.url`), whose results are filtered here. With neither the tool is
not offered. The endpoint is the user's own configuration, like a model's base URL, so it is
not put through WebFetch's address guard; the tool is asked like WebFetch (a `WebSearch` allow
rule runs it without asking).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar
from urllib.parse import urlsplit

from codeloop.tools.base import Tool, ToolContext, ToolResult
from codeloop.tools.input import Arg, ToolInput
from codeloop.tools.services import Search, SearchFailed, SideModel, ToolServices

MAX_RESULTS = 10
MAX_SERVER_SEARCHES = 8  # the server tool's max_uses: one WebSearch call, a few queries
TIMEOUT_SECONDS = 30.0
SERVER_TOOL = "web_search_20250305"
SEARCH_SYSTEM = (
    "You run web searches for another assistant. Search for the query you are given, then "
    "answer with the results: for each useful one a line `- [title](url)` and one sentence of "
    "what it says, then a short summary of what the results say about the query. Only results "
    "you found; no advice, no follow-up questions."
)


class WebSearchInput(ToolInput):
    query: Annotated[str, Arg("The search query.", min_length=2)]
    allowed_domains: Annotated[
        list[str] | None, Arg("Only include results from these domains (and subdomains).")
    ] = None
    blocked_domains: Annotated[
        list[str] | None, Arg("Never include results from these domains (and subdomains).")
    ] = None


DESCRIPTION = """\
Search the web and get the results (titles, URLs, what each says), for information newer \
than your training or that you do not know.

- Give a specific query; include the year when recency matters.
- allowed_domains keeps only results from those sites; blocked_domains drops results from \
them (use one or the other).
- Cite the sources you use, with their URLs, in your answer. Use WebFetch to read a result \
in full."""


class WebSearchTool(Tool[WebSearchInput]):
    name: ClassVar[str] = "WebSearch"
    description: ClassVar[str] = DESCRIPTION
    input_model = WebSearchInput

    def __init__(self, search: Search | None = None) -> None:
        self.search = search

    @classmethod
    def from_services(cls, services: ToolServices) -> WebSearchTool:
        return cls(search_backend(services))

    def is_read_only(self, args: WebSearchInput) -> bool:
        return False  # it sends the query off the machine: asked, unless a rule allows it

    def is_concurrency_safe(self, args: WebSearchInput) -> bool:
        return True

    async def call(self, args: WebSearchInput, ctx: ToolContext) -> ToolResult:
        allowed = tuple(_domain(d) for d in args.allowed_domains or ())
        blocked = tuple(_domain(d) for d in args.blocked_domains or ())
        if allowed and blocked:
            return ToolResult.error(
                "Give allowed_domains or blocked_domains, not both, in one search."
            )
        if self.search is None:
            return ToolResult.error("Web search is not configured in this session.")
        try:
            found = await self.search(args.query.strip(), allowed, blocked)
        except SearchFailed as exc:
            return ToolResult.error(f"WebSearch failed: {exc}")
        return ToolResult(f'Web search results for "{args.query.strip()}":\n\n{found}')


def search_backend(services: ToolServices) -> Search | None:
    """The session's search: the configured endpoint, else the provider's server-side tool
    (through the side model), else none."""
    if services.search_endpoint:
        return SearxngSearch(services.search_endpoint)
    if services.server_search and services.side_model is not None:
        return ServerSearch(services.side_model)
    return None


class SearxngSearch:
    """A SearXNG-compatible JSON API: GET `endpoint?q=…&format=json` → `{"results": [{title,
    url, content}]}`. The domain lists are applied to the results here."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    async def __call__(self, query: str, allowed: tuple[str, ...], blocked: tuple[str, ...]) -> str:
        import httpx

        params = {"q": query, "format": "json"}
        try:
            async with httpx.AsyncClient(timeout=TIMEOUT_SECONDS) as client:
                response = await client.get(self.endpoint, params=params)
        except httpx.HTTPError as exc:
            raise SearchFailed(f"{self.endpoint}: {type(exc).__name__}: {exc}") from None
        if response.status_code >= 400:
            raise SearchFailed(
                f"{self.endpoint} answered {response.status_code} {response.reason_phrase}"
            )
        try:
            data = response.json()
        except ValueError:
            raise SearchFailed(f"{self.endpoint} did not answer with JSON") from None
        raw = data.get("results") if isinstance(data, dict) else None
        if not isinstance(raw, list):
            raise SearchFailed(f"{self.endpoint} answered without a results list")
        kept = [r for r in _results(raw) if _wanted(r["url"], allowed, blocked)]
        return render(kept[:MAX_RESULTS])


class ServerSearch:
    """Anthropic's server-side web search, in one side request: the model searches, then
    writes the results out (the tool's own result blocks stay on the server's side of the
    stream, which codeloop does not model)."""

    def __init__(self, side_model: SideModel) -> None:
        self.side_model = side_model

    async def __call__(self, query: str, allowed: tuple[str, ...], blocked: tuple[str, ...]) -> str:
        tool: dict[str, Any] = {
            "type": SERVER_TOOL,
            "name": "web_search",
            "max_uses": MAX_SERVER_SEARCHES,
        }
        if allowed:
            tool["allowed_domains"] = list(allowed)
        if blocked:
            tool["blocked_domains"] = list(blocked)
        try:
            answer = await self.side_model.ask(
                f"Search the web for: {query}", system=SEARCH_SYSTEM, server_tools=(tool,)
            )
        except Exception as exc:  # the model's error, already retried under the policy
            raise SearchFailed(str(exc)) from None
        return answer.strip() or "No results."


def render(results: Sequence[Mapping[str, str]]) -> str:
    if not results:
        return "No results."
    lines = []
    for number, result in enumerate(results, 1):
        lines.append(f"{number}. {result['title'] or result['url']}\n   {result['url']}")
        if result["snippet"]:
            lines.append(f"   {result['snippet']}")
    return "\n".join(lines)


def _results(raw: list[Any]) -> list[dict[str, str]]:
    found = []
    for item in raw:
        if isinstance(item, dict) and isinstance(item.get("url"), str):
            title, snippet = item.get("title"), item.get("content")
            found.append(
                {
                    "url": item["url"],
                    "title": " ".join(str(title or "").split()),
                    "snippet": " ".join(str(snippet or "").split()),
                }
            )
    return found


def _domain(entry: str) -> str:
    """`example.com`, `*.example.com`, `https://example.com/x` → `example.com`."""
    text = entry.strip().casefold()
    host = urlsplit(text).hostname if "://" in text else text.split("/", 1)[0]
    return (host or text).removeprefix("*.").rstrip(".")


def _wanted(url: str, allowed: tuple[str, ...], blocked: tuple[str, ...]) -> bool:
    host = (urlsplit(url).hostname or "").rstrip(".")
    if any(_within(host, d) for d in blocked):
        return False
    return not allowed or any(_within(host, d) for d in allowed)


def _within(host: str, domain: str) -> bool:
    return host == domain or host.endswith("." + domain)
