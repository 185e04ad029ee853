"""WebFetch: fetch a URL, turn its HTML into markdown, and answer the model's prompt about it
with a small, fast model (the session's own when there is no small one).

Only http(s), and only public addresses unless a domain rule names the host (web_address.py);
a redirect to another host is reported, not followed, so the model (and the permission rules)
see the new host before anything is fetched from it. At most MAX_BYTES are read, at most
MAX_CONTENT_CHARS of the page reach the small model; a page fetched in the last 15 minutes is
served from the cache. Permission rules apply as for any tool: `WebFetch(domain:example.com)`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, ClassVar
from urllib.parse import urljoin

from codeloop.system.valueclass import valueclass
from codeloop.text import truncate_middle
from codeloop.tools.base import Tool, ToolContext, ToolResult
from codeloop.tools.input import Arg, ToolInput
from codeloop.tools.services import SideModel, ToolServices
from codeloop.tools.web_address import Refused, Target, parse, resolve

if TYPE_CHECKING:
    from collections.abc import Callable

    import httpx

MAX_BYTES = 10 * 1024 * 1024
MAX_CONTENT_CHARS = 100_000
MAX_REDIRECTS = 10
CACHE_SECONDS = 15 * 60
CACHE_ENTRIES = 64
TIMEOUT_SECONDS = 60.0
USER_AGENT = "codeloop (WebFetch; +https://github.com/codeloop)"
_REDIRECTS = frozenset({301, 302, 303, 307, 308})

ANSWER_SYSTEM = (
    "You answer a question about one web page, using only its content as given. Be concise "
    "and exact; quote only short passages; say so when the page does not hold the answer."
)


class WebFetchInput(ToolInput):
    url: Annotated[str, Arg("The URL to fetch (http or https).")]
    prompt: Annotated[str, Arg("What to find out from the page.")]


DESCRIPTION = """\
Fetch a web page and answer a question about it: the page's HTML becomes markdown, and a \
small, fast model answers your prompt from it.

- Give a full http(s) URL and say exactly what you want from the page; a public site's http \
URL is fetched over https.
- If the URL redirects to another host, you are told the new URL: fetch it with a second call.
- Pages are cached for 15 minutes; very large pages are cut.
- Read-only: it changes nothing. For a local file use Read."""


@valueclass
class Page:
    url: str
    status: int
    reason: str
    content_type: str
    body: bytes
    cut: bool  # more than MAX_BYTES: the rest was not read

    def text(self) -> str:
        """The body as markdown (HTML), as text (other text types), or a note (binary)."""
        kind = self.content_type.split(";", 1)[0].strip().lower()
        charset = _charset(self.content_type)
        if kind in ("text/html", "application/xhtml+xml") or (not kind and b"<html" in self.body):
            return html_to_markdown(self.body.decode(charset, errors="replace"))
        if kind.startswith("text/") or kind.endswith(("json", "xml", "javascript")) or not kind:
            return self.body.decode(charset, errors="replace")
        return f"[binary content: {kind}, {len(self.body):,} bytes, not shown]"


@valueclass
class Redirected:
    url: str
    location: str
    status: int


def html_to_markdown(html: str) -> str:
    """markdownify (MIT), imported on the first page; it drops scripts and styles."""
    from markdownify import markdownify

    text: str = markdownify(html, heading_style="ATX")
    lines = [line.rstrip() for line in text.splitlines()]
    compact: list[str] = []
    for line in lines:
        if line or (compact and compact[-1]):
            compact.append(line)
    return "\n".join(compact).strip()


class WebFetchTool(Tool[WebFetchInput]):
    name: ClassVar[str] = "WebFetch"
    description: ClassVar[str] = DESCRIPTION
    input_model = WebFetchInput

    def __init__(
        self,
        side_model: SideModel | None = None,
        host_allowed: Callable[[str], bool] | None = None,
    ) -> None:
        self.side_model = side_model
        self.host_allowed = host_allowed
        self._cache: dict[str, tuple[float, Page]] = {}

    @classmethod
    def from_services(cls, services: ToolServices) -> WebFetchTool:
        return cls(services.side_model, services.host_allowed)

    def is_read_only(self, args: WebFetchInput) -> bool:
        return False  # it reaches outside the machine: asked, unless a rule allows it

    def is_concurrency_safe(self, args: WebFetchInput) -> bool:
        return True  # it changes nothing here

    async def call(self, args: WebFetchInput, ctx: ToolContext) -> ToolResult:
        try:
            fetched = await self._fetch(args.url)
        except Refused as exc:
            return ToolResult.error(f"WebFetch refused: {exc}")
        except _HttpError as exc:
            return ToolResult.error(f"WebFetch failed: {exc}")
        if isinstance(fetched, Redirected):
            return ToolResult(
                f"REDIRECT: {fetched.url} redirects ({fetched.status}) to another host: "
                f"{fetched.location}\nIt was not followed. To fetch it, call WebFetch again "
                f"with url={fetched.location!r} and the same prompt."
            )
        content = fetched.text()
        note = " (only its first 10 MB were read)" if fetched.cut else ""
        head = f"URL: {fetched.url}\nStatus: {fetched.status} {fetched.reason}{note}"
        if fetched.status >= 400:
            excerpt = truncate_middle(content, 2_000, what="the page")
            return ToolResult.error(f"{head}\nThe server answered with an error page:\n{excerpt}")
        shown = truncate_middle(content, MAX_CONTENT_CHARS, what="the page")
        if self.side_model is None:
            return ToolResult(f"{head}\n\n{shown}")
        question = (
            f"Web page content ({fetched.url}):\n---\n{shown}\n---\n\n{args.prompt}\n\n"
            "Answer from the content above."
        )
        try:
            answer = await self.side_model.ask(question, system=ANSWER_SYSTEM)
        except Exception as exc:  # the page is still worth having
            return ToolResult(
                f"{head}\n(the model that answers about pages failed: {exc}; the page "
                f"follows)\n\n{truncate_middle(content, 20_000, what='the page')}"
            )
        return ToolResult(f"{head}\n\n{answer.strip() or '(the model gave no answer)'}")

    async def _fetch(self, url: str) -> Page | Redirected:
        now = time.monotonic()
        cached = self._cache.get(url)
        if cached is not None and now - cached[0] < CACHE_SECONDS:
            return cached[1]
        import httpx  # already loaded by the model client; imported here for the types

        async with httpx.AsyncClient(
            follow_redirects=False, trust_env=False, timeout=TIMEOUT_SECONDS
        ) as client:
            current = url
            for _ in range(MAX_REDIRECTS + 1):
                target = await resolve(current, self.host_allowed)
                found = await _get(client, target)
                if not isinstance(found, Redirected):
                    self._remember(url, found)
                    return found
                if not _same_site(parse(current)[1], parse(found.location)[1]):
                    return found
                current = found.location
        raise _HttpError(f"more than {MAX_REDIRECTS} redirects from {url}")

    def _remember(self, url: str, page: Page) -> None:
        now = time.monotonic()
        self._cache = {
            key: entry for key, entry in self._cache.items() if now - entry[0] < CACHE_SECONDS
        }
        while len(self._cache) >= CACHE_ENTRIES:
            self._cache.pop(next(iter(self._cache)))
        self._cache[url] = (now, page)


class _HttpError(Exception):
    pass


async def _get(client: httpx.AsyncClient, target: Target) -> Page | Redirected:
    """One GET to the checked address; at most MAX_BYTES of the body are read."""
    import httpx

    headers = {
        "Host": target.host_header,
        "User-Agent": USER_AGENT,
        "Accept": "text/markdown, text/html;q=0.9, */*;q=0.5",
    }
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    request = client.build_request("GET", target.pinned_url, headers=headers, extensions=extensions)
    try:
        response = await client.send(request, stream=True)
    except httpx.HTTPError as exc:
        raise _HttpError(f"{target.url}: {type(exc).__name__}: {exc}") from None
    try:
        location = response.headers.get("location")
        if response.status_code in _REDIRECTS and location:
            return Redirected(target.url, urljoin(target.url, location), response.status_code)
        body, cut = bytearray(), False
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_BYTES:
                del body[MAX_BYTES:]
                cut = True
                break
    except httpx.HTTPError as exc:
        raise _HttpError(f"{target.url}: {type(exc).__name__}: {exc}") from None
    finally:
        await response.aclose()
    return Page(
        target.url,
        response.status_code,
        response.reason_phrase,
        response.headers.get("content-type", ""),
        bytes(body),
        cut,
    )


def _same_site(host: str, other: str) -> bool:
    """Redirects followed without asking: the same host, or only a `www.` apart."""
    return host.removeprefix("www.") == other.removeprefix("www.")


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        key, _, value = part.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"')
            try:
                "".encode(charset)
            except LookupError:
                return "utf-8"
            return charset
    return "utf-8"
