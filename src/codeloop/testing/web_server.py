"""A small web server on 127.0.0.1 for WebFetch and WebSearch tests: a page, a redirect to
another host (localhost instead of 127.0.0.1), a same-host redirect, a 404, a huge page, a
SearXNG-compatible search endpoint, and `POST /v1/messages` answering as the Messages API does
when its server-side web search runs (server_tool_use, web_search_tool_result, then text with
citations). It records every request it answers (a POST's JSON body in `bodies`).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

from codeloop.testing.loopback_http import LoopbackHttp, OwnedServer

PAGE = """<!doctype html><html><head><title>Otters</title><style>p {color: red}</style>
<script>alert("no")</script></head><body><h1>All about otters</h1>
<p>Otters hold hands while they sleep, so they do not drift apart.</p>
<ul><li>Sea otters</li><li>River otters</li></ul>
<a href="/more">more</a></body></html>"""
HUGE_BYTES = 12 * 1024 * 1024
SEARCH_RESULTS = [
    {"url": "http://docs.example.org/otters", "title": "Otter facts", "content": "Hand holding."},
    {"url": "http://blocked.example.net/x", "title": "Spam", "content": "Buy otters."},
    {"url": "http://www.example.com/sea", "title": "Sea otters", "content": "Kelp forests."},
]


def _search_stream() -> bytes:
    """The Messages API's stream for one server-side search: the blocks codeloop does not
    model come first, as they do on the wire."""
    found = [
        {
            "type": "web_search_result",
            "url": r["url"],
            "title": r["title"],
            "page_age": None,
            "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi",
        }
        for r in SEARCH_RESULTS
    ]
    text = "".join(f"- [{r['title']}]({r['url']}): {r['content']}\n" for r in SEARCH_RESULTS)
    citation = {
        "type": "web_search_result_location",
        "url": SEARCH_RESULTS[0]["url"],
        "title": SEARCH_RESULTS[0]["title"],
        "encrypted_index": "Eo8BCioIAhgB",
        "cited_text": "Hand holding.",
    }
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_search",
                "type": "message",
                "role": "assistant",
                "model": "claude-haiku-4-5",
                "content": [],
                "stop_reason": None,
                "usage": {
                    "input_tokens": 40,
                    "output_tokens": 1,
                    "server_tool_use": {"web_search_requests": 0},
                },
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {
                "type": "server_tool_use",
                "id": "srvtoolu_1",
                "name": "web_search",
                "input": {},
            },
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"query": "otter facts"}'},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {
                "type": "web_search_tool_result",
                "tool_use_id": "srvtoolu_1",
                "content": found,
            },
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {"type": "text", "text": "", "citations": []},
        },
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "citations_delta", "citation": citation},
        },
        {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 2},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 60, "server_tool_use": {"web_search_requests": 1}},
        },
        {"type": "message_stop"},
    ]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


class _Handler(BaseHTTPRequestHandler):
    server: OwnedServer[WebServer]

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        self.server.owner.record(self.path, dict(self.headers))
        port = self.server.server_address[1]
        if parts.path == "/page":
            self._send(200, PAGE.encode(), "text/html; charset=utf-8")
        elif parts.path == "/same-host-redirect":
            self._redirect("/page")
        elif parts.path == "/elsewhere":
            self._redirect(f"http://localhost:{port}/page")
        elif parts.path == "/huge":
            self._huge()
        elif parts.path == "/search":
            query = parse_qs(parts.query)
            body = {"query": query.get("q", [""])[0], "results": SEARCH_RESULTS}
            self._send(200, json.dumps(body).encode(), "application/json")
        else:
            self._send(404, b"<html><body><h1>Not here</h1></body></html>", "text/html")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self.server.owner.record(self.path, dict(self.headers), body)
        if urlsplit(self.path).path == "/v1/messages":
            self._send(200, _search_stream(), "text/event-stream")
        else:
            self._send(404, b"{}", "application/json")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _huge(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(HUGE_BYTES))
        self.end_headers()
        line = b"otters " * 146 + b"\n"  # 1 KiB
        try:
            for _ in range(HUGE_BYTES // len(line)):
                self.wfile.write(line)
        except (BrokenPipeError, ConnectionResetError):
            return  # the client stopped reading: what a size limit does


class WebServer:
    """`with WebServer() as web:` then fetch `web.url + "/page"`."""

    def __init__(self) -> None:
        self._http = LoopbackHttp(_Handler, self)
        self._lock = threading.Lock()
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.bodies: list[Any] = []

    @property
    def url(self) -> str:
        return self._http.url

    def record(self, path: str, headers: dict[str, str], body: Any = None) -> None:
        with self._lock:
            self.requests.append((path, headers))
            if body is not None:
                self.bodies.append(body)

    def __enter__(self) -> Self:
        self._http.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._http.stop()
