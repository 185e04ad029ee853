"""WebFetch against a local server: page to markdown answered by the small model, a redirect
to another host reported, a 404, a huge page cut, the cache, and the address rules (loopback
only with a domain rule naming it; cloud metadata and friends refused)."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from codeloop.testing.web_server import WebServer
from codeloop.tools.base import ToolContext, ToolResult, Workspace
from codeloop.tools.web_address import Refused, non_public, parse, resolve
from codeloop.tools.web_fetch import MAX_BYTES, MAX_CONTENT_CHARS, WebFetchTool


class Recorder:
    """A side model that answers with a fixed text and keeps what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def ask(
        self,
        prompt: str,
        *,
        system: str,
        max_tokens: int = 2048,
        server_tools: tuple[Mapping[str, Any], ...] = (),
    ) -> str:
        self.asked.append(prompt)
        return "They hold hands."


def loopback(host: str) -> bool:
    return host in ("127.0.0.1", "localhost")


async def fetch(tool: WebFetchTool, url: str, tmp: Path) -> ToolResult:
    args = tool.parse({"url": url, "prompt": "What do otters do?"})
    return await tool.call(args, ToolContext(Workspace(cwd=tmp)))


def text(result: ToolResult) -> str:
    assert isinstance(result.content, str)
    return result.content


async def test_a_page_becomes_markdown_and_the_small_model_answers(tmp_path: Path) -> None:
    model = Recorder()
    tool = WebFetchTool(model, loopback)
    with WebServer() as web:
        result = await fetch(tool, web.url + "/page", tmp_path)
        again = await fetch(tool, web.url + "/page", tmp_path)
        served = len(web.requests)
    assert not result.is_error and "They hold hands." in text(result)
    (asked, _) = model.asked
    assert "# All about otters" in asked and "* Sea otters" in asked
    assert "What do otters do?" in asked
    assert "alert" not in asked and "color: red" not in asked  # scripts and styles dropped
    assert text(again) == text(result) and served == 1  # the second came from the cache


async def test_a_redirect_to_another_host_is_reported_not_followed(tmp_path: Path) -> None:
    tool = WebFetchTool(Recorder(), loopback)
    with WebServer() as web:
        result = await fetch(tool, web.url + "/elsewhere", tmp_path)
        same = await fetch(tool, web.url + "/same-host-redirect", tmp_path)
        paths = [path for path, _ in web.requests]
    assert not result.is_error and "REDIRECT" in text(result)
    assert "http://localhost:" in text(result) and "/page" in text(result)
    assert paths == ["/elsewhere", "/same-host-redirect", "/page"]  # only the same host's
    assert "They hold hands." in text(same)


async def test_a_404_is_an_error_with_the_status(tmp_path: Path) -> None:
    tool = WebFetchTool(Recorder(), loopback)
    with WebServer() as web:
        result = await fetch(tool, web.url + "/missing", tmp_path)
    assert result.is_error and "404" in text(result) and "Not here" in text(result)


async def test_a_huge_page_is_cut(tmp_path: Path) -> None:
    model = Recorder()
    tool = WebFetchTool(model, loopback)
    with WebServer() as web:
        result = await fetch(tool, web.url + "/huge", tmp_path)
    assert not result.is_error and "first 10 MB" in text(result)
    (asked,) = model.asked
    assert MAX_CONTENT_CHARS < len(asked) < MAX_CONTENT_CHARS + 2_000 < MAX_BYTES


async def test_loopback_needs_a_domain_rule_naming_it(tmp_path: Path) -> None:
    tool = WebFetchTool(Recorder(), host_allowed=lambda host: False)
    with WebServer() as web:
        result = await fetch(tool, web.url + "/page", tmp_path)
        assert web.requests == []
    assert result.is_error and "loopback" in text(result)
    assert "WebFetch(domain:127.0.0.1)" in text(result)


async def test_a_redirect_is_checked_again(tmp_path: Path) -> None:
    # 127.0.0.1 is named; the redirect's target host (localhost) is not.
    tool = WebFetchTool(Recorder(), host_allowed=lambda host: host == "127.0.0.1")
    with WebServer() as web:
        result = await fetch(tool, web.url + "/elsewhere", tmp_path)
    assert "REDIRECT" in text(result)  # reported: another host is the model's next call


@pytest.mark.parametrize(
    "address",
    [
        "169.254.169.254",  # cloud metadata
        "10.1.2.3",
        "192.168.0.1",
        "172.16.5.4",
        "100.64.0.1",
        "0.0.0.0",
        "::1",
        "fe80::1",
        "fd00::1",
        "::ffff:127.0.0.1",
        "::ffff:169.254.169.254",
        "64:ff9b::a9fe:a9fe",
        "2002:7f00:1::",
    ],
)
def test_non_public_addresses_in_every_spelling(address: str) -> None:
    assert non_public(ipaddress.ip_address(address)) is not None


def test_public_addresses_pass() -> None:
    assert non_public(ipaddress.ip_address("93.184.216.34")) is None
    assert non_public(ipaddress.ip_address("2606:2800:220:1::")) is None


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "ftp://example.com/x", "http://user:pw@example.com/", "http:///x"],
)
def test_only_plain_http_urls(url: str) -> None:
    with pytest.raises(Refused):
        parse(url)


async def test_a_name_resolving_to_loopback_is_refused_too(tmp_path: Path) -> None:
    tool = WebFetchTool(Recorder(), host_allowed=lambda host: False)
    with WebServer() as web:
        port = web.url.rsplit(":", 1)[1]
        result = await fetch(tool, f"http://localhost:{port}/page", tmp_path)
        assert web.requests == []
    assert result.is_error and "localhost resolves to" in text(result)


async def test_a_public_http_address_is_upgraded_to_https() -> None:
    # Resolving an address literal sends nothing anywhere: only the target is looked at.
    upgraded = await resolve("http://93.184.216.34/docs?q=1", None)
    assert (upgraded.url, upgraded.scheme, upgraded.port) == (
        "https://93.184.216.34/docs?q=1",
        "https",
        443,
    )
    assert upgraded.pinned_url == "https://93.184.216.34:443/docs?q=1"
    explicit = await resolve("http://93.184.216.34:8080/", None)
    assert (explicit.scheme, explicit.port) == ("http", 8080)
    local = await resolve("http://127.0.0.1/", lambda host: True)
    assert (local.scheme, local.port) == ("http", 80)
