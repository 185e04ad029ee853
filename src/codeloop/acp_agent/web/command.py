"""`codeloop serve` and `codeloop web`: the command line, the token, the listening socket (bound
before the URL is printed, so a program reading the first line can connect at once) and the
uvicorn server."""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import ipaddress
import os
import secrets
import socket
import sys
from pathlib import Path

from codeloop.errors import UsageError
from codeloop.frontdoor.flags import Parser

TOKEN_VARIABLE = "CODELOOP_SERVER_TOKEN"
DESCRIPTION = {
    "serve": "Serve this folder's codeloop sessions to browsers and programs: ACP (the Agent "
    "Client Protocol) over WebSocket at /acp, and the web UI at /.",
    "web": "Like codeloop serve, and open the web UI in the browser.",
}
EPILOG = """\
The first line on stdout is the URL to open, token included:
  codeloop serve: http://127.0.0.1:PORT/?token=TOKEN
Every request needs the token: `Authorization: Bearer TOKEN`, `?token=TOKEN`, or the cookie
the page gets on its first visit. Requests whose Host is not this server's, and browser
WebSockets from another origin, are refused.

Sessions start in the current folder, with the model and provider every mode uses
(CODELOOP_MODEL, ANTHROPIC_BASE_URL, settings files), in the default permission mode: tools
that ask, ask every connected client, and the first answer wins.

Environment:
  CODELOOP_SERVER_TOKEN   the token, instead of a random one per start

Examples:
  codeloop web                           # this folder, in the browser
  codeloop serve --port 8765             # a fixed port, a new token each start
  codeloop serve --host 0.0.0.0 --token "$(openssl rand -hex 32)"   # reachable on the network
"""


def build_parser(command: str) -> argparse.ArgumentParser:
    parser = Parser(
        prog=f"codeloop {command}",
        description=DESCRIPTION[command],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1; anything not loopback needs --token "
        f"or {TOKEN_VARIABLE})",
    )
    parser.add_argument(
        "--port", type=_port, default=0, help="port to listen on (default 0: a free one)"
    )
    parser.add_argument(
        "--token",
        help=f"the token clients must present (default: ${TOKEN_VARIABLE}, else a random one)",
    )
    return parser


def run_serve(command: str, argv: list[str], session_args: argparse.Namespace) -> int:
    """`session_args`: the session flags' defaults (the model and the rest come from the
    environment and settings, as for every mode)."""
    args = build_parser(command).parse_args(argv)
    chosen = args.token if args.token is not None else os.environ.get(TOKEN_VARIABLE)
    if chosen is not None and not chosen.strip():
        raise UsageError(f"the token is empty (--token or {TOKEN_VARIABLE})")
    if chosen is None and not _loopback(args.host):
        raise UsageError(
            f"--host {args.host} is reachable from other machines: choose the token they "
            f"must present with --token or {TOKEN_VARIABLE} (nothing was started)"
        )
    for module in ("starlette", "uvicorn", "websockets"):
        if importlib.util.find_spec(module) is None:
            raise UsageError(
                f"codeloop {command} needs the serve extra: pip install 'codeloop[serve]'"
            )
    token = chosen if chosen is not None else secrets.token_urlsafe(32)
    listener = _listen(args.host, args.port)
    port = listener.getsockname()[1]
    url = f"http://{_shown_host(args.host)}:{port}/?token={token}"
    print(f"codeloop serve: {url}", flush=True)  # the same line for `web`: programs read it
    if command == "web":
        import webbrowser

        if not webbrowser.open(url):
            print("codeloop web: no browser to open; open the URL above", file=sys.stderr)
    return asyncio.run(_serve(listener, token, port, args.host, session_args))


async def _serve(
    listener: socket.socket, token: str, port: int, host: str, session_args: argparse.Namespace
) -> int:
    import uvicorn

    from codeloop.acp_agent.stdio import LINE_LIMIT, quiet_sdk_logs
    from codeloop.acp_agent.web.app import Server
    from codeloop.acp_agent.web.hub import Hub

    quiet_sdk_logs("serve")
    server = Server(Hub(session_args, Path.cwd()), token, port, _names(host))
    config = uvicorn.Config(
        server.app,
        ws="websockets-sansio",
        lifespan="off",
        access_log=False,  # URLs carry the token
        log_level="warning",  # uvicorn's info lines name WebSocket paths, query string too
        timeout_graceful_shutdown=5,
        ws_max_size=LINE_LIMIT,  # a prompt's images: the same limit as over stdio
    )
    try:
        await uvicorn.Server(config).serve(sockets=[listener])
    finally:
        await server.close()
    return 0


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("a port is 0 (any free one) to 65535")
    return value


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _loopback(host: str) -> bool:
    address = _address(host)
    return host == "localhost" if address is None else address.is_loopback


def _listen(host: str, port: int) -> socket.socket:
    """Bound and listening before anything is printed."""
    name = "127.0.0.1" if host == "localhost" else host.strip("[]")
    try:
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        listener = socket.socket(family, kind, proto)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(128)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    listener.set_inheritable(False)
    return listener


def _shown_host(host: str) -> str:
    """The address to print: loopback's for a loopback or any-address server."""
    address = _address(host)
    if address is None:
        return "127.0.0.1" if host == "localhost" else host
    if address.is_loopback or address.is_unspecified:
        return "127.0.0.1" if address.version == 4 else "[::1]"
    return f"[{address}]" if address.version == 6 else str(address)


def _names(host: str) -> tuple[str, ...]:
    """The Host names besides loopback's that reach this server (see Guard)."""
    address = _address(host)
    if address is None:
        return () if host == "localhost" else (host,)
    if address.is_unspecified:
        return ("*", socket.gethostname())
    if address.is_loopback:
        return ()
    return (f"[{address}]" if address.version == 6 else str(address),)
