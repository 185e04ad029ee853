"""The conftest network guard fires for the internet and stays out of the way for loopback."""

from __future__ import annotations

import errno
import socket
import threading
from pathlib import Path

import httpx
import pytest

from tests.conftest import NetworkAccessBlocked

TEST_NET = "192.0.2.1"  # RFC 5737 TEST-NET-1: never routed


def test_connect_to_test_net_raises_before_the_syscall(blocked_network_calls: list[str]) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # A real non-blocking connect would raise BlockingIOError (EINPROGRESS) after sending a
        # SYN; the guard's error proves the syscall never ran, and the socket stays unconnected.
        sock.setblocking(False)
        with pytest.raises(NetworkAccessBlocked, match=r"192\.0\.2\.1"):
            sock.connect((TEST_NET, 80))
        with pytest.raises(OSError) as not_connected:
            sock.getpeername()
        assert not_connected.value.errno == errno.ENOTCONN
        with pytest.raises(NetworkAccessBlocked):
            sock.connect_ex((TEST_NET, 443))
    assert len(blocked_network_calls) == 2
    blocked_network_calls.clear()


def test_ipv6_and_name_lookups_are_blocked(blocked_network_calls: list[str]) -> None:
    with pytest.raises(NetworkAccessBlocked):
        socket.create_connection((TEST_NET, 80), timeout=1)
    with pytest.raises(NetworkAccessBlocked):
        socket.getaddrinfo("example.com", 443)
    with (
        socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock,
        pytest.raises(NetworkAccessBlocked),
    ):
        sock.connect(("2001:db8::1", 80, 0, 0))
    blocked_network_calls.clear()


async def test_http_clients_are_blocked(blocked_network_calls: list[str]) -> None:
    # anyio may wrap the guard's error in an ExceptionGroup; the record is what counts.
    async with httpx.AsyncClient() as client:
        with pytest.raises(Exception):  # noqa: B017
            await client.get(f"http://{TEST_NET}/")
    assert blocked_network_calls == [f"connect to ('{TEST_NET}', 80)"]
    blocked_network_calls.clear()


def test_a_swallowed_attempt_still_fails_the_test(pytester: pytest.Pytester) -> None:
    pytester.makeconftest((Path(__file__).parent.parent / "conftest.py").read_text())
    pytester.makepyfile(
        """
        import socket

        def test_swallows():
            try:
                socket.create_connection(("192.0.2.1", 80))
            except Exception:
                pass
        """
    )
    quiet = ("-p", "no:cacheprovider", "-p", "no:asyncio", "-p", "no:hypothesispytest")
    result = pytester.runpytest_inprocess(*quiet)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*the test tried to use the network: connect to*192.0.2.1*"])


def test_loopback_still_works() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        accepted = threading.Thread(target=lambda: server.accept()[0].close())
        accepted.start()
        with socket.create_connection(("localhost", port), timeout=5):
            pass
        accepted.join()
    with socket.socket() as sock:
        # Nothing listens on the port any more: refused by the kernel, not by the guard.
        assert sock.connect_ex(("127.0.0.1", port)) == errno.ECONNREFUSED


def test_unix_sockets_are_allowed(tmp_path: Path) -> None:
    path = str(tmp_path / "s")
    with socket.socket(socket.AF_UNIX) as server, socket.socket(socket.AF_UNIX) as client:
        server.bind(path)
        server.listen()
        client.connect(path)
        server.accept()[0].close()
