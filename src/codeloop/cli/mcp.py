"""`codeloop mcp`: add, list, inspect, remove and log in to MCP servers, as `claude mcp` does."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NoReturn

from codeloop.frontdoor.flags import Parser
from codeloop.mcp.server_config import TRANSPORTS, ConfigError, ServerConfig, parse_server
from codeloop.mcp.sources import SCOPES, Scope, add_server, declared_servers, effective
from codeloop.system.jsonfile import JsonFileError

DESCRIPTION = """\
Configure MCP servers (the same files Claude Code reads):
  codeloop mcp add NAME -- COMMAND [ARGS...]                a stdio server (local scope)
  codeloop mcp add --transport http NAME URL [--header "Authorization: Bearer ..."]
  codeloop mcp add -s project -e KEY=VALUE NAME -- npx -y some-server   shared in .mcp.json
  codeloop mcp add-json NAME '{"type":"stdio","command":"..."}'
  codeloop mcp list | get NAME | remove NAME [-s SCOPE]
  codeloop mcp login NAME | logout NAME                     OAuth for a remote server

OAuth tokens are kept in ~/.codeloop/mcp-auth/ (or $CODELOOP_HOME), readable by you alone,
and refreshed when they expire.

Scopes: local (you, this project; the default), project (.mcp.json, shared with the repository;
its servers need approval), user (you, every project). A name in local hides it in project,
which hides it in user. Values may use ${VAR} and ${VAR:-default}.
"""


class _Parser(Parser):
    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments"):
            message += " (a server command with options goes after --: add NAME -- COMMAND ARGS)"
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    return _parsers()[0]


def _parsers() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The whole parser, and `add`'s own (its flags may follow the name and URL)."""
    parser = _Parser(
        prog="codeloop mcp",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    add = commands.add_parser("add", help="add a server", description="add a server")
    _scope_flag(add)
    add.add_argument(
        "-t", "--transport", choices=TRANSPORTS, default=None, help="stdio (default), http, sse"
    )
    add.add_argument(
        "-e", "--env", action="append", default=[], metavar="KEY=VALUE", help="stdio: variable"
    )
    add.add_argument(
        "-H", "--header", action="append", default=[], metavar="'NAME: VALUE'", help="http/sse"
    )
    add.add_argument("name", help="the server's name (letters, digits, '_', '-')")
    add.add_argument(
        "target", nargs="*", metavar="COMMAND_OR_URL", help="the URL, or -- COMMAND ARGS..."
    )

    add_json = commands.add_parser("add-json", help="add a server from its JSON entry")
    _scope_flag(add_json)
    add_json.add_argument("name")
    add_json.add_argument("json", help="the entry, as in .mcp.json")

    commands.add_parser("list", help="list the servers, checking each one")
    get = commands.add_parser("get", help="show one server's configuration and status")
    get.add_argument("name")
    remove = commands.add_parser("remove", help="remove a server")
    remove.add_argument("name")
    remove.add_argument("-s", "--scope", choices=SCOPES, default=None)
    login = commands.add_parser("login", help="log in to a remote server (OAuth, in the browser)")
    login.add_argument("name")
    logout = commands.add_parser("logout", help="forget a remote server's OAuth tokens")
    logout.add_argument("name")
    return parser, add


def _scope_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-s", "--scope", choices=SCOPES, default="local", help="local (default), project, user"
    )


def run_mcp(argv: Sequence[str], env: Mapping[str, str] | None = None) -> int:
    argv = list(argv)
    # `add NAME -- COMMAND ARGS`: what follows `--` is the server's, flags and all.
    command: list[str] = []
    if argv[:1] == ["add"] and "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1 :]
    parser, add = _parsers()
    if argv[:1] == ["add"]:
        args = add.parse_intermixed_args(argv[1:], argparse.Namespace(command="add"))
        args.target = [*args.target, *command]
    else:
        args = parser.parse_args(argv)
    env = dict(os.environ if env is None else env)
    cwd = Path.cwd().resolve()
    try:
        if args.command == "add":
            return _add(args, cwd, env)
        if args.command == "add-json":
            return _add_json(args, cwd, env)
        if args.command == "list":
            return _list(cwd, env)
        if args.command == "get":
            return _get(args.name, cwd, env)
        if args.command == "remove":
            return _remove(args.name, args.scope, cwd, env)
        if args.command in ("login", "logout"):
            return _login(args.command, args.name, cwd, env)
    except (ConfigError, JsonFileError) as exc:
        print(f"codeloop mcp: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"codeloop mcp: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    raise AssertionError(args.command)


def _add(args: argparse.Namespace, cwd: Path, env: dict[str, str]) -> int:
    target: list[str] = args.target
    if not target:
        raise ConfigError("say what to run (add NAME -- COMMAND ARGS) or where (add NAME URL)")
    transport = args.transport or "stdio"
    raw: dict[str, object] = {"type": transport}
    if transport == "stdio":
        if args.header:
            raise ConfigError("--header is for http and sse servers")
        if args.transport is None and "://" in target[0]:
            print(
                f"codeloop mcp: warning: {target[0]} looks like a URL; it is added as a command "
                "to run (use --transport http or sse for a remote server)",
                file=sys.stderr,
            )
        env_vars = _pairs(args.env, "=", "-e", "KEY=VALUE")
        raw |= {"command": target[0], "args": target[1:], "env": env_vars}
    else:
        if args.env:
            raise ConfigError("-e/--env is for stdio servers (use --header for http and sse)")
        if len(target) != 1:
            raise ConfigError(f"an {transport} server takes one URL, not {shlex.join(target)}")
        raw |= {"url": target[0]}
        if args.header:
            raw["headers"] = _pairs(args.header, ":", "--header", "'Name: value'")
    return _save(args.name, raw, args.scope, cwd, env)


def _add_json(args: argparse.Namespace, cwd: Path, env: dict[str, str]) -> int:
    try:
        raw = json.loads(args.json)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise ConfigError(f"invalid JSON: {exc.msg} ({where})") from None
    return _save(args.name, raw, args.scope, cwd, env)


def _save(name: str, raw: object, scope: Scope, cwd: Path, env: dict[str, str]) -> int:
    config, warnings = parse_server(name, raw, scope=scope)
    for warning in warnings:
        print(f"codeloop mcp: warning: {warning}", file=sys.stderr)
    path = add_server(config, scope, cwd, env)
    print(f"Added {config.transport} MCP server {name} ({_target(config)}) to the {scope} scope")
    print(f"File modified: {path}")
    if scope == "project":
        print("Project servers start once approved: codeloop asks, or set enabledMcpjsonServers.")
    return 0


def _pairs(items: Sequence[str], sep: str, flag: str, form: str) -> dict[str, str]:
    """`-e KEY=VALUE` or `--header "Name: value"` values as a mapping."""
    out = {}
    for item in items:
        key, found, value = item.partition(sep)
        if not found or not key.strip():
            raise ConfigError(f"{flag} {item!r}: expected {form}")
        out[key.strip()] = value.strip() if sep == ":" else value
    return out


def _target(config: ServerConfig) -> str:
    if config.transport == "stdio":
        return shlex.join([config.command, *config.args])
    return config.url


def _list(cwd: Path, env: dict[str, str]) -> int:
    declared, warnings = declared_servers(cwd, env)
    for warning in warnings:
        print(f"codeloop mcp: warning: {warning}", file=sys.stderr)
    servers = list(effective(declared).values())
    if not servers:
        print("No MCP servers configured. Add one with: codeloop mcp add NAME -- COMMAND")
        return 0
    statuses = asyncio.run(_check(servers, cwd, env))
    for server in servers:
        print(
            f"{server.name}: {_target(server)} ({server.transport}, {server.scope}) - "
            f"{statuses[server.name]}"
        )
    return 0


def _get(name: str, cwd: Path, env: dict[str, str]) -> int:
    declared, _ = declared_servers(cwd, env)
    server = effective(declared).get(name)
    if server is None:
        raise ConfigError(f"no MCP server named {name!r} (codeloop mcp list shows them)")
    hidden = [s for s in declared if s.name == name and s is not server]
    print(f"{name}:")
    print(f"  Scope: {server.scope} ({server.source})")
    print(f"  Type: {server.transport}")
    if server.transport == "stdio":
        print(f"  Command: {server.command}")
        print(f"  Args: {shlex.join(server.args)}")
        if server.env:
            print("  Environment:")
            for key, value in server.env.items():
                print(f"    {key}={value}")
    else:
        print(f"  URL: {server.url}")
        if server.headers:
            print("  Headers:")
            for key, value in server.headers.items():
                print(f"    {key}: {value}")
    for other in hidden:
        print(f"  (hides the {other.scope}-scope entry in {other.source})")
    status = asyncio.run(_check([server], cwd, env))[name]
    print(f"  Status: {status}")
    print(f"\nTo remove it: codeloop mcp remove {name} -s {server.scope}")
    return 0


def _remove(name: str, scope: Scope | None, cwd: Path, env: dict[str, str]) -> int:
    from codeloop.mcp.sources import remove_server

    chosen, path = remove_server(name, scope, cwd, env)
    print(f"Removed MCP server {name} from the {chosen} scope")
    print(f"File modified: {path}")
    return 0


def _login(command: str, name: str, cwd: Path, env: dict[str, str]) -> int:
    from codeloop.settings.settings_files import load_settings

    declared, _ = declared_servers(cwd, env)
    server = effective(declared).get(name)
    if server is None:
        raise ConfigError(f"no MCP server named {name!r} (codeloop mcp list shows them)")
    full_env = {**env, **load_settings(cwd, env=env).env}
    server = server.expanded(full_env)
    from codeloop.mcp.auth import LoginError, login, logout

    if command == "logout":
        had = logout(server, full_env)
        print(f"Logged out of {name}" if had else f"No stored login for {name}")
        return 0
    try:
        path = asyncio.run(login(server, full_env, cwd=cwd))
    except LoginError as exc:
        print(f"codeloop mcp: login to {name} failed: {exc}", file=sys.stderr)
        return 1
    print(f"Logged in to {name}; tokens saved in {path} (readable by you alone)")
    return 0


async def _check(servers: Sequence[ServerConfig], cwd: Path, env: dict[str, str]) -> dict[str, str]:
    """Each server's status, checked by connecting to it (all at once)."""
    from codeloop.mcp.health import check_servers

    return await check_servers(servers, cwd, env)
