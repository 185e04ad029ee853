"""codeloop's HTTP/1.1 transport against a real server on 127.0.0.1: keep-alive, framing, the
ways a connection ends, timeouts, and the errors httpx callers (the error taxonomy) expect."""

from __future__ import annotations

import asyncio
import json
import shutil
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from codeloop.models.base import StreamIdle, Transient, Unreachable
from codeloop.models.http11 import Http11Transport, proxied
from codeloop.models.http_errors import error_from_transport

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class Server:
    """Answers with `answers` in turn, one per request, on however many connections."""

    def __init__(self, *answers: bytes) -> None:
        self.answers = list(answers)
        self.connections = 0
        self.bodies: list[bytes] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while self.answers:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                self.bodies.append(await reader.readexactly(length))
                answer = self.answers.pop(0)
                writer.write(answer)
                await writer.drain()
                if b"connection: close" in answer.lower() or not answer.startswith(b"HTTP"):
                    break
        except asyncio.IncompleteReadError:
            pass
        finally:
            writer.close()


def ok(body: bytes, *extra: bytes) -> bytes:
    head = [b"HTTP/1.1 200 OK", b"content-length: %d" % len(body), *extra]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


@asynccontextmanager
async def serving(handler: Handler, tls: ssl.SSLContext | None = None) -> AsyncIterator[str]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0, ssl=tls)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    finally:
        server.close()


def client(**timeouts: float) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=Http11Transport(), timeout=httpx.Timeout(5, **timeouts))


async def test_requests_share_one_kept_alive_connection() -> None:
    chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    chunked += b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
    server = Server(ok(b"first"), chunked, ok(b"third"))
    async with serving(server.handle) as url, client() as http:
        answers = [await http.post(url + "/v1", content=b"x" * n) for n in (10, 300_000, 0)]
    assert [a.content for a in answers] == [b"first", b"abcde", b"third"]
    assert [len(b) for b in server.bodies] == [10, 300_000, 0]
    assert server.connections == 1


async def test_requests_at_once_each_get_a_connection_kept_for_the_next() -> None:
    """Sub-agents ask in parallel through one client."""
    server = Server(*(ok(b"answer") for _ in range(6)))
    async with serving(server.handle) as url, client() as http:
        first = await asyncio.gather(*(http.post(url, content=b"a") for _ in range(3)))
        again = await asyncio.gather(*(http.post(url, content=b"b") for _ in range(3)))
    assert [a.content for a in (*first, *again)] == [b"answer"] * 6
    assert server.connections == 3


async def test_a_connection_the_server_closes_is_not_reused() -> None:
    server = Server(ok(b"one", b"connection: close"), ok(b"two"))
    async with serving(server.handle) as url, client() as http:
        assert (await http.post(url, content=b"a")).content == b"one"
        assert (await http.post(url, content=b"b")).content == b"two"
    assert server.connections == 2


async def test_an_answer_left_unread_closes_its_connection() -> None:
    server = Server(ok(b"y" * 200_000), ok(b"next"))
    async with serving(server.handle) as url, client() as http:
        async with http.stream("POST", url, content=b"a") as response:
            async for _ in response.aiter_bytes():
                break
        assert (await http.post(url, content=b"b")).content == b"next"
    assert server.connections == 2


async def test_a_cut_mid_answer_is_a_transient_error() -> None:
    cut = b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial"
    server = Server(cut)
    async with serving(server.handle) as url, client() as http:
        with pytest.raises(httpx.RemoteProtocolError) as raised:
            await http.post(url, content=b"a")
    assert isinstance(error_from_transport(raised.value, url=url), Transient)


async def test_a_server_that_closes_without_answering() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.close()

    async with serving(hang_up) as url, client() as http:
        with pytest.raises(httpx.RemoteProtocolError, match="without sending a response"):
            await http.post(url, content=b"")


async def test_a_silent_server_times_out_as_an_idle_stream() -> None:
    done = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await done.wait()
        writer.close()

    async with serving(silent) as url, client(read=0.2) as http:
        with pytest.raises(httpx.ReadTimeout) as raised:
            await http.post(url, content=b"a")
        done.set()
    assert isinstance(error_from_transport(raised.value, url=url), StreamIdle)


async def test_nobody_listening_is_unreachable() -> None:
    async with serving(Server().handle) as url:
        pass  # the port is closed again
    async with client() as http:
        with pytest.raises(httpx.ConnectError) as raised:
            await http.post(url, content=b"a")
    assert isinstance(error_from_transport(raised.value, url=url), Unreachable)


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, and its key."""
    if shutil.which("openssl") is None:
        pytest.skip("makes its certificate with openssl")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    new = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
    subject = ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
    files = ["-keyout", str(key), "-out", str(cert)]
    subprocess.run(
        [*new, *subject, *files],
        check=True,
        capture_output=True,
    )
    return cert, key


async def test_https_verifies_the_server_against_the_trusted_certificates(
    certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """TLS with the server's name checked; SSL_CERT_FILE names what is trusted, as for httpx."""
    cert, key = certificate
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    server = Server(ok(b"secure"), ok(b"again"))
    async with serving(server.handle, tls) as url:
        async with client() as http:  # the certifi bundle does not know this certificate
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await http.post(url, content=b"a")
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        async with client() as http:
            answers = [(await http.post(url, content=b"b")).content for _ in range(2)]
    assert answers == [b"secure", b"again"]
    assert server.connections == 1  # kept alive (a refused handshake never reaches it)


def test_a_proxy_in_the_environment_keeps_httpx_transport() -> None:
    assert proxied({"HTTPS_PROXY": "http://127.0.0.1:3128"})
    assert proxied({"all_proxy": "socks5://127.0.0.1:1080"})
    assert not proxied({"NO_PROXY": "*", "HTTPS_PROXY": ""})


SENDS_ONE_REQUEST = """
import asyncio, json, sys
from codeloop.models.transport import HttpTransport
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, turn

async def main():
    with FakeModelServer(Scenario(turns=(turn("hi"),))) as server:
        before = set(sys.modules)
        transport = HttpTransport(server.anthropic_base_url, {}, timeout=5, auth_hint="")
        body = {"model": "m", "max_tokens": 10, "stream": True,
                "messages": [{"role": "user", "content": "x"}]}
        async for _ in transport.post_sse("/v1/messages", body, model="m"):
            pass
        await transport.aclose()
    print(json.dumps(sorted(set(sys.modules) - before)))

asyncio.run(main())
"""


def test_a_model_request_loads_neither_anyio_nor_httpcore() -> None:
    """Their import was most of the first request's cost (and ~2 MB)."""
    run = subprocess.run(
        [sys.executable, "-c", SENDS_ONE_REQUEST], capture_output=True, text=True, check=True
    )
    loaded = json.loads(run.stdout)
    assert "httpx" in loaded
    assert not [m for m in loaded if m.split(".")[0] in {"anyio", "httpcore", "sniffio"}]


class HeldServer:
    """Answers a background request ("bg...") at once and a foreground one once `release`
    is set; notes the bodies in the order they arrive."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.arrived = asyncio.Event()  # a second request arrived
        self.release = asyncio.Event()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                body = await reader.readexactly(length)
                self.bodies.append(body)
                if len(self.bodies) == 2:
                    self.arrived.set()
                if not body.startswith(b"bg"):
                    await self.release.wait()
                writer.write(ok(b"answer to " + body))
                await writer.drain()
        except asyncio.IncompleteReadError:
            pass
        finally:
            writer.close()


async def test_a_background_request_goes_out_and_is_read_while_a_foreground_one_waits() -> None:
    """Tool-use summaries' side requests (codeloop.system.lull): never between an answer and
    the next request."""
    from codeloop.system.lull import background_work, lull

    server = HeldServer()

    async def in_background(http: httpx.AsyncClient, url: str, body: bytes) -> bytes:
        async with background_work():
            return (await http.post(url, content=body)).content

    async with serving(server.handle) as url, client() as http:
        with lull().waiting():  # as a session's first request did: the foreground marks waits
            pass
        side = asyncio.ensure_future(in_background(http, url, b"bg label"))  # started first
        main = asyncio.ensure_future(http.post(url, content=b"main"))
        await asyncio.wait_for(server.arrived.wait(), 5)
        assert server.bodies == [b"main", b"bg label"]  # out once the main request waited
        assert await asyncio.wait_for(side, 5) == b"answer to bg label"
        assert not main.done()  # read while the main answer was still awaited
        server.release.set()
        assert (await asyncio.wait_for(main, 5)).content == b"answer to main"
        # Nothing in the foreground waits now: the owner's own wait is the lull.
        later = asyncio.ensure_future(in_background(http, url, b"bg again"))
        with lull().waiting():
            assert await asyncio.wait_for(later, 5) == b"answer to bg again"
