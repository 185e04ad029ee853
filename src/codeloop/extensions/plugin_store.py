"""Marketplaces and installed plugins, on disk, in Claude Code's shapes.

A marketplace is a folder (or a git repository, cloned) with .claude-plugin/marketplace.json:
`{"name", "owner", "plugins": [{"name", "source", ...}]}`, a plugin's source being a path
inside the marketplace (`./plugins/x`) or a git repository (`github`, `url`, `git-subdir`).
codeloop keeps its own state under ~/.codeloop/plugins (known_marketplaces.json,
installed_plugins.json, marketplaces/ clones, cache/ copies of installed plugins, data/), and
also reads Claude Code's ~/.claude/plugins files, so plugins installed there load here too.
Installing copies the plugin into the cache and enables it in the chosen scope's settings
file (user: ~/.codeloop/settings.json, project: .codeloop/settings.json, local:
.codeloop/settings.local.json), as `enabledPlugins` that Claude Code's files also set.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from codeloop.extensions.plugins import Plugin, data_dir_for, read_plugin
from codeloop.system.jsonfile import write_json_atomic
from codeloop.system.valueclass import valueclass

Scope = Literal["user", "project", "local"]
SCOPES: tuple[Scope, ...] = ("user", "project", "local")
GIT_TIMEOUT = 300


class PluginError(Exception):
    """What went wrong, in a sentence for the user."""


@valueclass
class Marketplace:
    name: str
    source: Mapping[str, Any]
    root: Path  # where its marketplace.json lives (a folder, or a clone)

    def catalog(self) -> dict[str, Any]:
        path = self.root / ".claude-plugin" / "marketplace.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise PluginError(f"marketplace {self.name}: cannot read {path}: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("plugins"), list):
            raise PluginError(f"marketplace {self.name}: {path} has no plugins list")
        return data

    def entry(self, plugin: str) -> dict[str, Any]:
        for entry in self.catalog()["plugins"]:
            if isinstance(entry, dict) and entry.get("name") == plugin:
                return entry
        names = ", ".join(
            str(e.get("name")) for e in self.catalog()["plugins"] if isinstance(e, dict)
        )
        raise PluginError(f"marketplace {self.name} has no plugin {plugin} (it has: {names})")


@valueclass
class Installed:
    id: str  # name@marketplace
    scope: str
    path: Path
    version: str | None = None
    project: str | None = None  # project and local scopes: the project's folder
    entry: Mapping[str, Any] | None = None


class PluginStore:
    """codeloop's plugin state, with Claude Code's read alongside."""

    def __init__(self, codeloop_home: Path, claude_home: Path) -> None:
        self.home = codeloop_home / "plugins"
        self.claude = claude_home / "plugins"

    # --- marketplaces ------------------------------------------------------------------------

    def marketplaces(
        self, declared: Mapping[str, Mapping[str, Any]] | None = None
    ) -> dict[str, Marketplace]:
        """Known marketplaces by name: Claude Code's, then codeloop's (which win), then those a
        settings file declares (`extraKnownMarketplaces`) when not known yet."""
        found: dict[str, Marketplace] = {}
        for path in (
            self.claude / "known_marketplaces.json",
            self.home / "known_marketplaces.json",
        ):
            for name, info in _read_json(path, {}).items():
                if isinstance(info, dict) and isinstance(info.get("installLocation"), str):
                    found[name] = Marketplace(
                        name, info.get("source", {}), Path(info["installLocation"])
                    )
        for name, source in (declared or {}).items():
            if name not in found:
                root = self._local_root(source)
                if root is not None:
                    found[name] = Marketplace(name, source, root)
        return found

    def add_marketplace(self, spec: str, cwd: Path) -> Marketplace:
        """`codeloop plugin marketplace add SPEC`: a folder, a marketplace.json, a git URL, or
        a GitHub owner/repo (cloned)."""
        source = parse_source(spec, cwd)
        root = self._local_root(source)
        if root is None:
            scratch = self.home / "marketplaces" / f".adding-{os.getpid()}"
            shutil.rmtree(scratch, ignore_errors=True)
            clone(source, scratch)
            root = scratch
        name = _catalog_name(root)
        if root.name.startswith(".adding-"):
            final = self.home / "marketplaces" / name
            shutil.rmtree(final, ignore_errors=True)
            root.rename(final)
            root = final
        known = _read_json(self.home / "known_marketplaces.json", {})
        known[name] = {"source": dict(source), "installLocation": str(root), "lastUpdated": _now()}
        write_json_atomic(self.home / "known_marketplaces.json", known)
        return Marketplace(name, source, root)

    def remove_marketplace(self, name: str) -> None:
        known = _read_json(self.home / "known_marketplaces.json", {})
        if name not in known:
            raise PluginError(f"no marketplace {name} (see codeloop plugin marketplace list)")
        info = known.pop(name)
        write_json_atomic(self.home / "known_marketplaces.json", known)
        location = Path(info.get("installLocation", ""))
        if location.is_relative_to(self.home / "marketplaces"):
            shutil.rmtree(location, ignore_errors=True)

    def _local_root(self, source: Mapping[str, Any]) -> Path | None:
        kind = source.get("source")
        if kind == "directory" and isinstance(source.get("path"), str):
            return Path(source["path"])
        if kind == "file" and isinstance(source.get("path"), str):
            return Path(source["path"]).parent.parent
        return None

    # --- installed plugins -------------------------------------------------------------------

    def installed(self) -> list[Installed]:
        """Every install record, Claude Code's first."""
        out: list[Installed] = []
        for path in (self.claude / "installed_plugins.json", self.home / "installed_plugins.json"):
            data = _read_json(path, {})
            plugins = data.get("plugins", data) if isinstance(data, dict) else {}
            for plugin_id, records in plugins.items():
                if not isinstance(plugin_id, str) or "@" not in plugin_id:
                    continue
                for record in records if isinstance(records, list) else [records]:
                    if isinstance(record, dict) and isinstance(record.get("installPath"), str):
                        out.append(
                            Installed(
                                plugin_id,
                                str(record.get("scope", "user")),
                                Path(record["installPath"]),
                                record.get("version"),
                                record.get("projectPath"),
                                record.get("marketplaceEntry"),
                            )
                        )
        return out

    def install(
        self,
        plugin_id: str,
        scope: Scope,
        project: Path,
        declared: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> Installed:
        name, market_name = split_id(plugin_id)
        markets = self.marketplaces(declared)
        if market_name is None:
            owners = [m for m in markets.values() if _has_plugin(m, name)]
            if len(owners) != 1:
                where = ", ".join(m.name for m in owners) or "no known marketplace"
                raise PluginError(f"say which marketplace: {name}@MARKETPLACE (found in {where})")
            market_name = owners[0].name
        market = markets.get(market_name)
        if market is None:
            raise PluginError(
                f"no marketplace {market_name}: add it with codeloop plugin marketplace add"
            )
        entry = market.entry(name)
        plugin_id = f"{name}@{market.name}"
        source_dir = self._fetch(market, entry)
        plugin = read_plugin(source_dir, plugin_id, entry=entry)
        version = plugin.version or _git_head(source_dir) or "unknown"
        target = self.home / "cache" / market.name / name / _safe(version)
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source_dir, target, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        record: dict[str, Any] = {
            "scope": scope,
            "installPath": str(target),
            "version": version,
            "installedAt": _now(),
        }
        if scope != "user":
            record["projectPath"] = str(project)
        if entry.get("strict") is False:
            record["marketplaceEntry"] = entry
        self._write_record(plugin_id, scope, project, record)
        return Installed(plugin_id, scope, target, version, record.get("projectPath"), entry)

    def uninstall(self, plugin_id: str, scope: Scope | None, project: Path) -> Installed:
        record = self.find(plugin_id, scope, project)
        data = _read_json(self.home / "installed_plugins.json", {"version": 2, "plugins": {}})
        plugins = data.setdefault("plugins", {})
        kept = [
            r
            for r in plugins.get(record.id, [])
            if not (r.get("scope") == record.scope and r.get("projectPath") == record.project)
        ]
        if kept:
            plugins[record.id] = kept
        else:
            plugins.pop(record.id, None)
        write_json_atomic(self.home / "installed_plugins.json", data)
        still_used = any(
            str(r.get("installPath")) == str(record.path) for rs in plugins.values() for r in rs
        )
        if not still_used and record.path.is_relative_to(self.home / "cache"):
            shutil.rmtree(record.path, ignore_errors=True)
        return record

    def find(self, plugin_id: str, scope: Scope | None, project: Path) -> Installed:
        name, market = split_id(plugin_id)
        matches = [
            r
            for r in self.installed()
            if split_id(r.id)[0] == name
            and (market is None or split_id(r.id)[1] == market)
            and (scope is None or r.scope == scope)
            and applies(r, project)
        ]
        if not matches:
            raise PluginError(f"plugin {plugin_id} is not installed (see codeloop plugin list)")
        return matches[-1]

    def _write_record(
        self, plugin_id: str, scope: Scope, project: Path, record: Mapping[str, Any]
    ) -> None:
        data = _read_json(self.home / "installed_plugins.json", {"version": 2, "plugins": {}})
        plugins = data.setdefault("plugins", {})
        others = [
            r
            for r in plugins.get(plugin_id, [])
            if not (r.get("scope") == scope and r.get("projectPath") == record.get("projectPath"))
        ]
        plugins[plugin_id] = [*others, dict(record)]
        data["version"] = 2
        write_json_atomic(self.home / "installed_plugins.json", data)

    def _fetch(self, market: Marketplace, entry: Mapping[str, Any]) -> Path:
        """The plugin's folder: inside the marketplace, or cloned from its git source."""
        source = entry.get("source")
        if isinstance(source, str):
            relative = source.removeprefix("./")
            if "/" not in source and not source.startswith("./"):
                base = market.catalog().get("metadata", {}).get("pluginRoot", ".")
                relative = f"{str(base).removeprefix('./').rstrip('/')}/{source}".lstrip("./")
            folder = (market.root / relative).resolve()
            if not folder.is_relative_to(market.root.resolve()) or not folder.is_dir():
                raise PluginError(
                    f"plugin {entry.get('name')}: source {source} is not a folder "
                    f"inside the marketplace"
                )
            return folder
        if not isinstance(source, dict):
            raise PluginError(f"plugin {entry.get('name')}: its source is missing")
        kind = source.get("source")
        if kind not in ("github", "url", "git", "git-subdir"):
            raise PluginError(f"plugin {entry.get('name')}: {kind} sources are not supported")
        target = self.home / "sources" / _safe(f"{market.name}-{entry.get('name')}")
        shutil.rmtree(target, ignore_errors=True)
        clone(source, target)
        if kind == "git-subdir":
            return target / str(source.get("path", ""))
        return target


def applies(record: Installed, project: Path) -> bool:
    """A user-scope install applies everywhere; a project or local one in its project."""
    if record.scope in ("user", "managed"):
        return True
    if record.project is None:
        return False
    here = Path(record.project)
    return project == here or here in project.parents


def split_id(plugin_id: str) -> tuple[str, str | None]:
    name, at, market = plugin_id.partition("@")
    return name, market if at else None


def parse_source(spec: str, cwd: Path) -> dict[str, Any]:
    """A marketplace source from what the user typed: `./folder`, a marketplace.json path,
    a git URL (`#ref` pins a branch or tag), or GitHub `owner/repo[@ref]`."""
    spec = spec.strip()
    local = (cwd / spec).expanduser()
    if re.match(r"^[a-z][a-z0-9+.-]*://|^git@", spec) or spec.endswith(".git"):
        url, _, ref = spec.partition("#")
        if url.endswith(".git") and not re.match(r"^[a-z][a-z0-9+.-]*://|^git@", url):
            url = (cwd / url).resolve().as_uri()
        return {"source": "git", "url": url, **({"ref": ref} if ref else {})}
    if local.is_dir():
        if (local / ".git").exists() and not (local / ".claude-plugin").is_dir():
            return {"source": "git", "url": local.resolve().as_uri()}
        return {"source": "directory", "path": str(local.resolve())}
    if local.is_file() and local.name == "marketplace.json":
        return {"source": "file", "path": str(local.resolve())}
    shorthand = re.fullmatch(r"([\w.-]+)/([\w.-]+)(?:@([\w./-]+))?", spec)
    if shorthand and not spec.startswith("."):
        owner, repo, ref = shorthand.groups()
        return {"source": "github", "repo": f"{owner}/{repo}", **({"ref": ref} if ref else {})}
    raise PluginError(
        f"{spec}: not a folder, a marketplace.json, a git URL or a GitHub owner/repo "
        "(a URL needs its scheme, e.g. https://)"
    )


def clone(source: Mapping[str, Any], target: Path) -> None:
    url = source.get("url") or ""
    if source.get("source") == "github":
        url = f"https://github.com/{source.get('repo')}.git"
    elif source.get("source") == "git-subdir" and re.fullmatch(r"[\w.-]+/[\w.-]+", str(url)):
        url = f"https://github.com/{url}.git"
    if not url:
        raise PluginError("the source has no URL to clone")
    target.parent.mkdir(parents=True, exist_ok=True)
    command = ["git", "clone", "--quiet", "--depth", "1"]
    if source.get("ref"):
        command += ["--branch", str(source["ref"])]
    try:
        done = subprocess.run(
            [*command, str(url), str(target)],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PluginError(f"git clone {url} failed: {exc}") from None
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()
        raise PluginError(f"git clone {url} failed: {detail[-1] if detail else done.returncode}")
    sha = source.get("sha")
    if sha:
        subprocess.run(["git", "-C", str(target), "checkout", "--quiet", str(sha)], check=False)


def settings_file(scope: Scope, codeloop_home: Path, project: Path) -> Path:
    """Where `enabledPlugins` is written for a scope."""
    if scope == "user":
        return codeloop_home / "settings.json"
    name = "settings.json" if scope == "project" else "settings.local.json"
    return project / ".codeloop" / name


def set_enabled(path: Path, plugin_id: str, enabled: bool | None) -> None:
    """Write (or, with None, remove) `enabledPlugins[plugin_id]` in one settings file, keeping
    everything else in it."""
    data = _read_json(path, {})
    if not isinstance(data, dict):
        raise PluginError(f"{path} is not a JSON object; fix it before changing plugins")
    flags = data.get("enabledPlugins")
    flags = dict(flags) if isinstance(flags, dict) else {}
    if enabled is None:
        flags.pop(plugin_id, None)
    else:
        flags[plugin_id] = enabled
    data["enabledPlugins"] = flags
    write_json_atomic(path, data)


def load_installed(
    store: PluginStore,
    project: Path,
    enabled: Mapping[str, bool],
    extra_dirs: Sequence[Path] = (),
) -> tuple[list[Plugin], list[str]]:
    """The plugins this session loads: installed ones that apply here and are enabled, and
    `--plugin-dir` ones; notes name what is enabled but not installed."""
    notes: list[str] = []
    plugins: dict[str, Plugin] = {}
    for record in store.installed():
        if not applies(record, project) or not record.path.is_dir():
            continue
        plugin = read_plugin(
            record.path,
            record.id,
            data_dir=data_dir_for(store.home, record.id),
            entry=record.entry,
            notes=notes,
        )
        if enabled.get(
            record.id,
            plugin.entry.get("defaultEnabled", plugin.manifest.get("defaultEnabled", True)),
        ):
            plugins[record.id] = plugin
    for plugin_id, on in enabled.items():
        if on and plugin_id not in plugins and "@" in plugin_id:
            notes.append(
                f"plugin {plugin_id} is enabled in the settings but not installed: "
                f"codeloop plugin install {plugin_id}"
            )
    for folder in extra_dirs:
        if not folder.is_dir():
            notes.append(f"--plugin-dir {folder}: no such folder")
            continue
        plugin = read_plugin(folder, notes=notes)
        plugin = read_plugin(
            folder, plugin.id, data_dir=data_dir_for(store.home, plugin.id), notes=notes
        )
        plugins[plugin.id] = plugin
    return list(plugins.values()), notes


def _has_plugin(market: Marketplace, name: str) -> bool:
    try:
        market.entry(name)
    except PluginError:
        return False
    return True


def _catalog_name(root: Path) -> str:
    path = root / ".claude-plugin" / "marketplace.json"
    data = _read_json(path, None)
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise PluginError(f"{root} has no .claude-plugin/marketplace.json with a name")
    if not isinstance(data.get("plugins"), list):
        raise PluginError(f"{path}: expected a plugins list")
    return str(data["name"])


def _git_head(folder: Path) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def _read_json(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "-", text) or "unknown"


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
