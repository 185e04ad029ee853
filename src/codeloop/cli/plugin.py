"""`codeloop plugin ...`: marketplaces and plugins from the shell, as `claude plugin` does.

codeloop plugin marketplace add SOURCE      a folder, a marketplace.json, a git URL, owner/repo
codeloop plugin marketplace list [--json]
codeloop plugin marketplace remove NAME
codeloop plugin install NAME[@MARKETPLACE] [--scope user|project|local]
codeloop plugin list [--json]
codeloop plugin enable|disable NAME[@MARKETPLACE] [--scope ...]
codeloop plugin remove NAME[@MARKETPLACE] [--scope ...]   (also: uninstall)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from codeloop.frontdoor.flags import Parser


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="codeloop plugin", description="Manage plugins and marketplaces.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    market = commands.add_parser("marketplace", help="add, list or remove marketplaces")
    market_commands = market.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = market_commands.add_parser("add", help="add a marketplace")
    add.add_argument("source", help="a folder, a marketplace.json, a git URL, or owner/repo")
    listing = market_commands.add_parser("list", help="list the known marketplaces")
    listing.add_argument("--json", action="store_true", help="print JSON")
    remove = market_commands.add_parser("remove", aliases=["rm"], help="remove a marketplace")
    remove.add_argument("name")
    install = commands.add_parser("install", aliases=["i"], help="install a plugin")
    install.add_argument("plugin", metavar="NAME[@MARKETPLACE]")
    install.add_argument("-s", "--scope", choices=("user", "project", "local"), default="user")
    plugins = commands.add_parser("list", help="list installed plugins")
    plugins.add_argument("--json", action="store_true", help="print JSON")
    for name, help_text in (("enable", "enable a plugin"), ("disable", "disable a plugin")):
        sub = commands.add_parser(name, help=help_text)
        sub.add_argument("plugin", metavar="NAME[@MARKETPLACE]")
        sub.add_argument("-s", "--scope", choices=("user", "project", "local"), default=None)
    uninstall = commands.add_parser("remove", aliases=["uninstall", "rm"], help="remove a plugin")
    uninstall.add_argument("plugin", metavar="NAME[@MARKETPLACE]")
    uninstall.add_argument("-s", "--scope", choices=("user", "project", "local"), default=None)
    return parser


def run_plugin(argv: Sequence[str]) -> int:
    from codeloop.extensions.plugin_store import PluginError

    args = build_parser().parse_args(list(argv))
    try:
        return _run(args)
    except PluginError as exc:
        print(f"codeloop plugin: {exc}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    from codeloop.extensions.plugin_store import (
        SCOPES,
        PluginStore,
        Scope,
        set_enabled,
        settings_file,
    )
    from codeloop.settings.settings_files import load_settings, user_dirs

    env = os.environ
    dirs = user_dirs(env)
    cwd = Path.cwd().resolve()
    store = PluginStore(dirs.codeloop, dirs.claude)
    settings = load_settings(cwd, env=env)
    declared = {m.name: m.source for m in settings.marketplaces}
    if args.command == "marketplace":
        if args.action == "add":
            _check_policy(args.source, cwd, settings)
            market = store.add_marketplace(args.source, cwd)
            count = len(market.catalog()["plugins"])
            print(f"Added marketplace {market.name} ({count} plugins) from {args.source}")
        elif args.action == "list":
            markets = store.marketplaces(declared)
            if args.json:
                _print_json(
                    [
                        {"name": m.name, "source": dict(m.source), "installLocation": str(m.root)}
                        for m in markets.values()
                    ]
                )
            elif not markets:
                print("No marketplaces. Add one with: codeloop plugin marketplace add SOURCE")
            for market in markets.values():
                print(f"{market.name}\t{_describe(market.source)}")
        else:
            store.remove_marketplace(args.name)
            print(f"Removed marketplace {args.name}")
        return 0
    if args.command in ("install", "i"):
        record = store.install(args.plugin, args.scope, cwd, declared)
        set_enabled(settings_file(args.scope, dirs.codeloop, cwd), record.id, True)
        print(f"Installed {record.id} {record.version or ''} ({args.scope} scope)".rstrip())
        return 0
    if args.command == "list":
        return _list(store, cwd, settings.enabled_plugins, args.json)
    record = store.find(args.plugin, args.scope, cwd)
    scope: Scope = args.scope or (record.scope if record.scope in SCOPES else "user")
    target = settings_file(scope, dirs.codeloop, cwd)
    if args.command in ("enable", "disable"):
        set_enabled(target, record.id, args.command == "enable")
        print(f"{args.command.capitalize()}d {record.id} ({scope} scope)")
        return 0
    store.uninstall(record.id, args.scope, cwd)
    set_enabled(target, record.id, None)
    print(f"Removed {record.id} ({record.scope} scope)")
    return 0


def _list(store: Any, cwd: Path, enabled: Mapping[str, bool], as_json: bool) -> int:
    from codeloop.extensions.plugin_store import applies
    from codeloop.extensions.plugins import default_enabled, read_plugin

    rows = []
    for record in store.installed():
        if not applies(record, cwd):
            continue
        plugin = read_plugin(record.path, record.id, entry=record.entry)
        on = enabled.get(record.id, default_enabled(plugin))
        rows.append(
            {
                "id": record.id,
                "version": record.version,
                "scope": record.scope,
                "enabled": on,
                "installPath": str(record.path),
            }
        )
    if as_json:
        _print_json(rows)
    elif not rows:
        print("No plugins installed. Install one with: codeloop plugin install NAME@MARKETPLACE")
    for row in [] if as_json else rows:
        state = "enabled" if row["enabled"] else "disabled"
        print(f"{row['id']}\t{row['version'] or '-'}\t{row['scope']}\t{state}")
    return 0


def _check_policy(spec: str, cwd: Path, settings: Any) -> None:
    """Managed `blockedMarketplaces` and `strictKnownMarketplaces` before anything is fetched."""
    from codeloop.extensions.plugin_store import PluginError, parse_source

    source = parse_source(spec, cwd)

    def same(rule: Any) -> bool:
        if not isinstance(rule, dict) or rule.get("source") not in (source.get("source"), None):
            return False
        keys = [k for k in ("repo", "url", "path") if k in rule]
        return bool(keys) and all(_fits(str(rule[k]), str(source.get(k, ""))) for k in keys)

    if any(same(rule) for rule in settings.blocked_marketplaces):
        raise PluginError(f"{spec}: this marketplace source is blocked by the managed settings")
    strict = settings.strict_marketplaces
    if strict is not None and not any(same(rule) for rule in strict):
        raise PluginError(
            f"{spec}: only the marketplaces strictKnownMarketplaces lists may be added"
        )


def _fits(pattern: str, value: str) -> bool:
    if pattern.endswith("/*"):
        return value.startswith(pattern[:-1])
    return pattern.rstrip("/") == value.rstrip("/")


def _describe(source: Any) -> str:
    if not isinstance(source, dict):
        return str(source)
    return str(source.get("path") or source.get("url") or source.get("repo") or source)


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2))
