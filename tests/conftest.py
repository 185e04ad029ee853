"""Test-wide setup: tests never reach the network.

The guard wraps `socket.socket.connect`/`connect_ex` and `socket.getaddrinfo` for the whole run,
so a connection to anything but loopback or a Unix socket raises in Python before a packet
leaves, and a name lookup other than localhost raises before any DNS query. Every blocked
attempt is also recorded and fails the test at teardown, even if the code under test swallowed
the exception (a client's retry loop treating it as a network error, say).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

import pytest

# pytester runs an inner session to prove the guard fails a test that swallows its error.
pytest_plugins = ("pytester",)


class NetworkAccessBlocked(RuntimeError):
    """Not an OSError on purpose: code under test must not mistake it for a flaky network."""


_LOCAL_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost"})
_blocked: list[str] = []
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


def _is_loopback(host: str) -> bool:
    if host.lower() in _LOCAL_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False  # a host name: connect() would resolve it through DNS
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def _check_address(sock: socket.socket, address: Any) -> None:
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return  # AF_UNIX and friends never leave the machine
    host = str(address[0])
    if not _is_loopback(host):
        _block(f"connect to {address!r}")


def _block(what: str) -> None:
    _blocked.append(what)
    raise NetworkAccessBlocked(f"tests must not use the network: {what}")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check_address(self, address)
    _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check_address(self, address)
    return _real_connect_ex(self, address)


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if host is not None:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if not _is_literal_or_local(name):
            _block(f"resolve {name!r}")
    return _real_getaddrinfo(host, *args, **kwargs)


def _is_literal_or_local(name: str) -> bool:
    """Resolving an IP literal sends nothing; the connect guard judges where it points."""
    if name.lower() in _LOCAL_NAMES or name == "":
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def pytest_configure(config: pytest.Config) -> None:
    # Installed before collection, so module-level code in test files is covered too.
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = _guarded_getaddrinfo


def pytest_unconfigure(config: pytest.Config) -> None:
    socket.socket.connect = _real_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _real_connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = _real_getaddrinfo


@pytest.fixture
def blocked_network_calls() -> list[str]:
    """The attempts the guard blocked in this test; a test that expects some clears it."""
    return _blocked


@pytest.fixture(autouse=True)
def _fail_on_network_access() -> Iterator[None]:
    _blocked.clear()
    yield
    if _blocked:
        attempts = ", ".join(_blocked)
        _blocked.clear()
        pytest.fail(f"the test tried to use the network: {attempts}", pytrace=False)
