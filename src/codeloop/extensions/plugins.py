"""Plugins in Claude Code's format: a folder (optionally with .claude-plugin/plugin.json)
bundling skills/, commands/, agents/, hooks/hooks.json, .mcp.json, output-styles/ and bin/.

Installed plugins (plugin_store.py) load when enabled (`enabledPlugins` in any settings file,
else the manifest's `defaultEnabled`, true by default), and `--plugin-dir` adds one for the
session. Their parts join the project's own, namespaced by the plugin's name: skill
`my-plugin:review`, agent `my-plugin:reviewer`; their hooks run with CLAUDE_PLUGIN_ROOT and
CLAUDE_PLUGIN_DATA; their MCP and language server configs are kept for the MCP and LSP
support to start.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from codeloop.hooks.hook_config import HooksConfig, merge_hooks, parse_hooks
from codeloop.system.valueclass import valueclass


@valueclass
class Plugin:
    name: str
    root: Path
    # name@marketplace (or name@inline for --plugin-dir).
    id: str
    manifest: Mapping[str, Any] = field(default_factory=dict)
    version: str | None = None
    data_dir: Path | None = None
    # strict: false marketplace entries define the components instead of plugin.json.
    entry: Mapping[str, Any] = field(default_factory=dict)

    def _paths(self, key: str, default: str) -> list[Path]:
        """A component's paths: the manifest's (or the marketplace entry's) if given, else the
        default folder."""
        raw = self.manifest.get(key, self.entry.get(key))
        if raw is None:
            return [self.root / default]
        items = raw if isinstance(raw, list) else [raw]
        return [_inside(self.root, item) for item in items if isinstance(item, str)]

    @property
    def skill_dirs(self) -> list[Path]:
        """skills/ always; manifest `skills` paths add to it. A root SKILL.md is one skill."""
        listed = self.manifest.get("skills", self.entry.get("skills"))
        extra = [] if listed is None else self._paths("skills", "skills")
        if extra and self.entry.get("source") in ("./", ".") and any(p.exists() for p in extra):
            # Entries sharing the marketplace root list their own skills: only those load.
            return extra
        dirs = [self.root / "skills", *(p for p in extra if p != self.root / "skills")]
        if (
            listed is None
            and not (self.root / "skills").is_dir()
            and (self.root / "SKILL.md").is_file()
        ):
            dirs.append(self.root)
        return dirs

    @property
    def command_paths(self) -> list[Path]:
        return self._paths("commands", "commands")

    @property
    def agent_paths(self) -> list[Path]:
        return self._paths("agents", "agents")

    @property
    def style_paths(self) -> list[Path]:
        return self._paths("outputStyles", "output-styles")

    @property
    def bin_dir(self) -> Path | None:
        folder = self.root / "bin"
        return folder if folder.is_dir() else None

    def hooks(self, notes: list[str]) -> HooksConfig:
        """hooks/hooks.json, then the manifest's or entry's `hooks` (a path or inline)."""
        configs: list[HooksConfig] = []
        sources: list[Any] = [self.root / "hooks" / "hooks.json"]
        declared = self.manifest.get("hooks", self.entry.get("hooks"))
        sources += declared if isinstance(declared, list) else [declared]
        seen: set[Path] = set()
        for source in sources:
            raw: Any = None
            where = f"plugin {self.name}"
            if isinstance(source, str):
                source = _inside(self.root, source)
            if isinstance(source, Path):
                if source in seen or not source.is_file():
                    continue
                seen.add(source)
                where = str(source)
                raw = _json_file(source, notes)
                raw = raw.get("hooks", raw) if isinstance(raw, dict) else None
            elif isinstance(source, dict):
                raw = source.get("hooks", source)
            if raw is None:
                continue
            configs.append(
                parse_hooks(
                    raw,
                    _noter(notes, where),
                    plugin_root=self.root,
                    plugin_data=self.data_dir,
                )
            )
        return merge_hooks(*configs)

    def mcp_servers(self, notes: list[str]) -> dict[str, Any]:
        """The plugin's MCP server configs (.mcp.json or the manifest's `mcpServers`), for the
        MCP support; their names are scoped `plugin:<plugin>:<server>` there."""
        declared = self.manifest.get("mcpServers", self.entry.get("mcpServers"))
        raw: Any = None
        if isinstance(declared, dict):
            raw = declared
        else:
            path = _inside(self.root, declared) if isinstance(declared, str) else None
            path = path or self.root / ".mcp.json"
            raw = _json_file(path, notes) if path.is_file() else None
        if isinstance(raw, dict) and isinstance(raw.get("mcpServers"), dict):
            raw = raw["mcpServers"]
        return dict(raw) if isinstance(raw, dict) else {}

    def lsp_servers(self, notes: list[str]) -> dict[str, Any]:
        """The plugin's language server configs (`lspServers` in the manifest: inline, a path,
        or a list of both; else .lsp.json), for the LSP support (lsp/config.py)."""
        declared = self.manifest.get("lspServers", self.entry.get("lspServers"))
        if declared is None:
            declared = ".lsp.json" if (self.root / ".lsp.json").is_file() else []
        servers: dict[str, Any] = {}
        for item in declared if isinstance(declared, list) else [declared]:
            raw = item
            if isinstance(item, str):
                raw = _json_file(_inside(self.root, item), notes)
            if isinstance(raw, dict) and isinstance(raw.get("lspServers"), dict):
                raw = raw["lspServers"]
            if isinstance(raw, dict):
                servers.update(raw)
            elif not isinstance(item, str) or raw is not None:
                notes.append(f"plugin {self.name}: lspServers: expected an object or a path")
        return servers


def read_plugin(
    root: Path,
    plugin_id: str | None = None,
    *,
    data_dir: Path | None = None,
    entry: Mapping[str, Any] | None = None,
    notes: list[str] | None = None,
) -> Plugin:
    """A plugin folder; without a manifest, its name is the folder's."""
    notes = notes if notes is not None else []
    manifest: dict[str, Any] = {}
    path = root / ".claude-plugin" / "plugin.json"
    if path.is_file():
        loaded = _json_file(path, notes)
        manifest = loaded if isinstance(loaded, dict) else {}
    name = str(manifest.get("name") or (entry or {}).get("name") or root.name)
    version = manifest.get("version") or (entry or {}).get("version")
    return Plugin(
        name=name,
        root=root,
        id=plugin_id or f"{name}@inline",
        manifest=manifest,
        version=str(version) if version else None,
        data_dir=data_dir,
        entry=dict(entry or {}),
    )


def _noter(notes: list[str], where: str) -> Callable[[str, str], None]:
    def note(place: str, problem: str) -> None:
        notes.append(f"{where}: {place}: {problem}")

    return note


def default_enabled(plugin: Plugin) -> bool:
    value = plugin.entry.get("defaultEnabled", plugin.manifest.get("defaultEnabled", True))
    return value is not False


def data_dir_for(plugins_home: Path, plugin_id: str) -> Path:
    """`${CLAUDE_PLUGIN_DATA}`: a folder that survives updates, one per plugin id."""
    return plugins_home / "data" / re.sub(r"[^A-Za-z0-9_-]", "-", plugin_id)


def _inside(root: Path, relative: str) -> Path:
    cleaned = relative.strip()
    return root if cleaned in (".", "./") else root / cleaned.removeprefix("./")


def _json_file(path: Path, notes: list[str]) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        notes.append(f"{path}: cannot read: {exc}")
    except json.JSONDecodeError as exc:
        notes.append(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}")
    return None


def plugin_variables(
    scoped: str, roots: Mapping[str, tuple[Path, Path | None]]
) -> dict[str, str] | None:
    """CLAUDE_PLUGIN_ROOT (and CLAUDE_PLUGIN_DATA) of the plugin a server scoped
    `plugin:<plugin>:<server>` comes from (None: no such plugin in `roots`, its root and data
    folder by name)."""
    plugin = scoped.split(":")[1] if scoped.count(":") >= 2 else ""
    if plugin not in roots:
        return None
    root, data = roots[plugin]
    values = {"CLAUDE_PLUGIN_ROOT": str(root)}
    if data is not None:
        values["CLAUDE_PLUGIN_DATA"] = str(data)
    return values


def component_folders(plugins: Sequence[Plugin], attribute: str) -> list[tuple[str, Path]]:
    """(plugin name, path) for one kind of component of every plugin."""
    return [(p.name, path) for p in plugins for path in getattr(p, attribute)]
