"""Where WebFetch may connect: http(s) only, and never to a loopback, private, link-local
(cloud metadata: 169.254.169.254) or otherwise non-public address unless a domain rule names
the host (`WebFetch(domain:localhost)`), in every permission mode.

The host is resolved here and every address it resolves to is checked (IPv4 hidden in IPv6
forms too); the request then goes to the checked address itself, with the name in the Host
header and TLS's server name, so a DNS answer that changes between the check and the connect
(rebinding) cannot slip past. Each redirect hop is checked again the same way.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Callable
from urllib.parse import urlsplit, urlunsplit

from codeloop.system.valueclass import valueclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class Refused(Exception):
    """A URL WebFetch will not fetch; the message is written for the model."""


@valueclass
class Target:
    url: str
    scheme: str
    host: str  # lower-case, no trailing dot, IPv6 without brackets
    port: int
    address: str  # the checked address the request goes to

    @property
    def pinned_url(self) -> str:
        """The URL with the checked address in place of the host name."""
        parts = urlsplit(self.url)
        host = f"[{self.address}]" if ":" in self.address else self.address
        return urlunsplit((parts.scheme, f"{host}:{self.port}", parts.path or "/", parts.query, ""))

    @property
    def host_header(self) -> str:
        name = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return name if self.port == default else f"{name}:{self.port}"


def parse(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a URL WebFetch may try; Refused otherwise."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise Refused(f"{url!r} is not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise Refused(f"only http and https URLs can be fetched, not {scheme or 'this'}: {url}")
    if parts.username or parts.password:
        raise Refused("URLs with a user name or password in them are not fetched")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise Refused(f"{url!r} names no host")
    return scheme, host, port or (443 if scheme == "https" else 80)


async def resolve(url: str, host_allowed: Callable[[str], bool] | None) -> Target:
    """The address to fetch `url` from, once every address of its host passed the check."""
    scheme, host, port = parse(url)
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )
    except (socket.gaierror, UnicodeError) as exc:
        raise Refused(f"the host {host} could not be resolved ({exc})") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise Refused(f"the host {host} has no address")
    allowed = host_allowed is not None and host_allowed(host)
    public = True
    for address in addresses:
        kind = non_public(ipaddress.ip_address(address.split("%", 1)[0]))
        public = public and kind is None
        if kind is not None and not allowed:
            raise Refused(
                f"{host} resolves to {address}, a {kind} address. WebFetch reaches such "
                f"addresses only when a domain rule names the host: WebFetch(domain:{host}) "
                "in the allowed tools or the settings' permissions.allow."
            )
    if scheme == "http" and public and urlsplit(url.strip()).port is None:
        # As Claude Code does: a public site is read over TLS. A local server a domain rule
        # lets in (a dev server, rarely with TLS) and an explicit port keep plain http.
        return Target("https" + url.strip()[4:], "https", host, 443, addresses[0])
    return Target(url, scheme, host, port, addresses[0])


def non_public(ip: IPAddress) -> str | None:
    """What kind of address `ip` is when it is not a public one (None when it is)."""
    embedded = _embedded_ipv4(ip)
    if embedded is not None:
        return non_public(embedded)
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local (cloud metadata)"
    if ip.is_private:
        return "private"
    if ip.is_multicast or ip.is_unspecified or ip.is_reserved or not ip.is_global:
        return "reserved (not public)"
    return None


def _embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, Teredo, NAT64), if any."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None
