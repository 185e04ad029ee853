"""Everything a session takes from Claude Code's extension files, loaded in one step: enabled
plugins, then agents, skills and commands, and the output style (each from the project, the
user, managed folders and the plugins), with one note per file that could not be used."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from codeloop.extensions.agents import Agents, agent_dirs, load_agents
from codeloop.extensions.output_styles import OutputStyle, find, load_styles, style_dirs
from codeloop.extensions.plugins import Plugin, component_folders
from codeloop.extensions.skills import Skills, load_skills, skill_roots
from codeloop.hooks.hook_config import HooksConfig, merge_hooks
from codeloop.settings.settings_files import Settings, managed_dir, user_dirs
from codeloop.store.data_paths import find_repo_root
from codeloop.system.valueclass import valueclass


@valueclass
class Extensions:
    plugins: tuple[Plugin, ...]
    agents: Agents
    skills: Skills
    style: OutputStyle | None
    styles: tuple[str, ...]
    hooks: HooksConfig  # the plugins'
    # Plugin MCP servers by scoped name (plugin:<plugin>:<server>), for the MCP support.
    mcp_servers: Mapping[str, Mapping[str, Any]]
    # Plugin language servers by scoped name (plugin:<plugin>:<server>), for lsp/config.py.
    lsp_servers: Mapping[str, Any]
    bin_dirs: tuple[Path, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)
    # Notes that matter whatever the verbosity (an output style that does not exist...).
    warnings: tuple[str, ...] = field(default_factory=tuple)


def load_extensions(
    cwd: Path,
    settings: Settings,
    env: Mapping[str, str],
    *,
    agents_json: str | None = None,
    plugin_dirs: Sequence[Path] = (),
    extra_dirs: Sequence[Path] = (),
    sources: Collection[str] | None = None,
) -> Extensions:
    """`sources` (`--setting-sources`): whether the user's and the project's folders load, as
    their settings files do (None: both; managed folders and plugins always)."""
    dirs = user_dirs(env)
    skipped = {"user", "project"} - set(sources) if sources is not None else set()
    managed = managed_dir(env)
    repo = find_repo_root(cwd)
    notes: list[str] = []
    warnings: list[str] = []
    plugins: list[Plugin] = []
    records = [d / "plugins" / "installed_plugins.json" for d in (dirs.codeloop, dirs.claude)]
    if plugin_dirs or settings.enabled_plugins or any(p.is_file() for p in records):
        # The install machinery (git, copies) loads only where there are plugins.
        from codeloop.extensions.plugin_store import PluginStore, load_installed

        store = PluginStore(dirs.codeloop, dirs.claude)
        plugins, plugin_notes = load_installed(store, cwd, settings.enabled_plugins, plugin_dirs)
        warnings += plugin_notes
    agents = load_agents(
        [
            d
            for d in agent_dirs(cwd, repo, dirs.claude, dirs.codeloop, managed)
            if d[1] not in skipped
        ],
        cli_json=agents_json,
        plugins=component_folders(plugins, "agent_paths"),
    )
    skills = load_skills(
        [
            root
            for root in skill_roots(cwd, repo, [dirs.claude, dirs.codeloop], managed, extra_dirs)
            if root[1] not in skipped
        ],
        plugins=[(p.name, p.root, p.skill_dirs, p.command_paths) for p in plugins],
    )
    user_styles = {d / "output-styles" for d in (dirs.claude, dirs.codeloop)}
    styles, style_notes = load_styles(
        [
            d
            for d in style_dirs(cwd, repo, [dirs.claude, dirs.codeloop], managed)
            if not ("user" in skipped and d in user_styles)
            and not (
                "project" in skipped and d not in user_styles and not d.is_relative_to(managed)
            )
        ],
        component_folders(plugins, "style_paths"),
    )
    style = find(styles, settings.output_style)
    if settings.output_style and style is None and settings.output_style.lower() != "default":
        known = ", ".join(["default", *styles])
        warnings.append(f"outputStyle {settings.output_style!r} is not a style ({known})")
    hooks = merge_hooks(*(p.hooks(notes) for p in plugins))
    servers: dict[str, Mapping[str, Any]] = {}
    for plugin in plugins:
        for name, config in plugin.mcp_servers(notes).items():
            if isinstance(config, dict):
                servers[f"plugin:{plugin.name}:{name}"] = config
    language_servers = {
        f"plugin:{plugin.name}:{name}": config
        for plugin in plugins
        for name, config in plugin.lsp_servers(warnings).items()
    }
    notes += [*agents.notes, *skills.notes, *style_notes]
    return Extensions(
        plugins=tuple(plugins),
        agents=agents,
        skills=skills,
        style=style,
        styles=tuple(styles),
        hooks=hooks,
        mcp_servers=servers,
        lsp_servers=language_servers,
        bin_dirs=tuple(p.bin_dir for p in plugins if p.bin_dir is not None),
        notes=tuple(notes),
        warnings=tuple(warnings),
    )
