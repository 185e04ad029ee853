"""Skills and custom commands in Claude Code's format.

A skill is a folder with a SKILL.md (YAML frontmatter: name, description, when_to_use,
allowed-tools, disable-model-invocation, user-invocable, context, agent, model, hooks,
arguments...) and any supporting files; a custom command is a single markdown file under a
commands folder, invoked by its file name (subfolders become a `namespace:`). Both load from
the project (every .claude/ and .codeloop/ from the working directory up to the repository
root), the user's ~/.claude and ~/.codeloop, the managed folder and plugins (named
`plugin:skill`). Across levels managed beats the user's, the user's beat the project's, and a
skill beats a command of the same name.

Only names and descriptions reach the model (`listing`); the Skill tool renders a skill's body
when the model invokes it (`render`), and the model reads the other files on demand.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any, Literal

from codeloop.hooks.hook_config import HooksConfig, parse_hooks
from codeloop.system.lazy_pattern import LazyPattern
from codeloop.system.valueclass import valueclass

MAX_LISTING_CHARS = 1536
Level = Literal["plugin", "project", "user", "managed"]
_LEVEL_RANK: dict[str, int] = {"plugin": 0, "project": 1, "user": 2, "managed": 3}


@valueclass
class Skill:
    name: str  # what the model (or the user, as /name) invokes
    description: str
    path: Path  # SKILL.md, or the command file
    body: str
    kind: Literal["skill", "command"] = "skill"
    level: Level = "project"
    allowed_tools: tuple[str, ...] = ()
    model_invocable: bool = True
    user_invocable: bool = True
    argument_hint: str | None = None
    arguments: tuple[str, ...] = ()
    context: str | None = None  # "fork": runs in a sub-agent
    agent: str | None = None
    model: str | None = None
    hooks: HooksConfig = field(default_factory=dict)
    # A command's subfolders (`frontend` for commands/frontend/x.md), shown as namespace:name.
    namespace: str | None = None
    plugin: str | None = None
    plugin_root: Path | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    # `paths:` globs: the skill is offered once the model works on a matching file.
    paths: tuple[str, ...] = ()

    @property
    def directory(self) -> Path:
        return self.path.parent

    @property
    def command_name(self) -> str:
        """What the user types after `/`: a command in a subfolder is `folder:name`."""
        return f"{self.namespace}:{self.name}" if self.namespace and not self.plugin else self.name


@valueclass
class Skills:
    by_name: Mapping[str, Skill]
    notes: tuple[str, ...] = ()

    def get(self, name: str) -> Skill | None:
        name = name.strip().lstrip("/")
        found = self.by_name.get(name)
        if found is None:
            lowered = name.lower()
            found = next((s for s in self.by_name.values() if s.name.lower() == lowered), None)
        return found

    def listing(
        self, overrides: Mapping[str, str] | None = None, *, only: Iterable[str] | None = None
    ) -> str:
        """The skills the model may invoke, one line each (empty: none): those without
        `paths:`, or the `only` ones (skills that have just become available)."""
        lines = []
        chosen = None if only is None else set(only)
        for skill in self.by_name.values():
            if (skill.paths and chosen is None) or (
                chosen is not None and skill.name not in chosen
            ):
                continue
            setting = (overrides or {}).get(skill.name, "on") if skill.plugin is None else "on"
            if not skill.model_invocable or setting in ("off", "user-invocable-only"):
                continue
            text = skill.description
            from codeloop.extensions import frontmatter

            when = frontmatter.text_field(dict(skill.meta), "when_to_use", "when-to-use")
            if when:
                text = f"{text} {when}"
            if len(text) > MAX_LISTING_CHARS:
                text = text[: MAX_LISTING_CHARS - 1] + "…"
            lines.append(f"- {skill.name}" if setting == "name-only" else f"- {skill.name}: {text}")
        if not lines:
            return ""
        return "The following skills are available for use with the Skill tool:\n\n" + "\n".join(
            lines
        )


def skill_roots(
    cwd: Path,
    repo_root: Path | None,
    user_dirs: Sequence[Path],
    managed: Path,
    extra_dirs: Sequence[Path] = (),
) -> list[tuple[Path, Level]]:
    """Folders holding skills/ and commands/, lowest priority first."""
    project: list[tuple[Path, Level]] = []
    top = repo_root or cwd
    chain, current = [cwd], cwd
    while current != top and top in current.parents:
        current = current.parent
        chain.append(current)
    for directory in [*reversed(chain), *extra_dirs]:
        project += [(directory / ".claude", "project"), (directory / ".codeloop", "project")]
    return [
        *project,
        *((d, "user") for d in user_dirs),
        (managed / ".claude", "managed"),
    ]


def load_skills(
    roots: Sequence[tuple[Path, Level]],
    *,
    plugins: Iterable[tuple[str, Path, Sequence[Path], Sequence[Path]]] = (),
) -> Skills:
    """Skills and commands from each root's skills/ and commands/, and from each plugin
    (name, root, skill folders, command folders), namespaced by the plugin."""
    notes: list[str] = []
    found: dict[str, Skill] = {}

    def add(skill: Skill) -> None:
        have = found.get(skill.name)
        if have is not None:
            if _LEVEL_RANK[have.level] > _LEVEL_RANK[skill.level]:
                return
            if have.level == skill.level and have.kind == "skill" and skill.kind == "command":
                return
        found[skill.name] = skill

    for name, root, skill_dirs, command_dirs in plugins:
        for folder in skill_dirs:
            for skill in skills_in(folder, "plugin", notes, plugin=name, plugin_root=root):
                add(skill)
        for folder in command_dirs:
            for skill in _commands_in(folder, "plugin", notes, plugin=name, plugin_root=root):
                add(skill)
    for root, level in roots:
        for skill in _commands_in(root / "commands", level, notes):
            add(skill)
        for skill in skills_in(root / "skills", level, notes):
            add(skill)
    return Skills(found, tuple(notes))


def load_commands(folder: Path, level: Level = "project") -> list[Skill]:
    """One commands folder's files (the terminal UI's custom slash commands)."""
    return _commands_in(folder, level, [])


def skills_in(
    folder: Path,
    level: Level,
    notes: list[str],
    *,
    plugin: str | None = None,
    plugin_root: Path | None = None,
) -> list[Skill]:
    if not folder.is_dir():
        return []
    paths = [folder / "SKILL.md"] if (folder / "SKILL.md").is_file() else []
    paths += sorted(p / "SKILL.md" for p in folder.iterdir() if (p / "SKILL.md").is_file())
    skills = []
    for path in paths:
        if path.parent.name.lower() == "synced" and plugin is None:
            continue  # a reserved folder name in Claude Code
        skill = _read(path, path.parent.name, "skill", level, notes, plugin, plugin_root)
        if skill is not None:
            skills.append(skill)
    return skills


def _commands_in(
    folder: Path,
    level: Level,
    notes: list[str],
    *,
    plugin: str | None = None,
    plugin_root: Path | None = None,
) -> list[Skill]:
    if folder.is_file() and folder.suffix == ".md":
        files, folder = [folder], folder.parent
    elif folder.is_dir():
        files = sorted(p for p in folder.rglob("*.md") if p.is_file())
    else:
        return []
    commands = []
    for path in files:
        parts = path.relative_to(folder).parent.parts
        skill = _read(
            path,
            path.stem,
            "command",
            level,
            notes,
            plugin,
            plugin_root,
            namespace=":".join(parts) or None,
        )
        if skill is not None:
            commands.append(skill)
    return commands


def _read(
    path: Path,
    default_name: str,
    kind: Literal["skill", "command"],
    level: Level,
    notes: list[str],
    plugin: str | None,
    plugin_root: Path | None,
    *,
    namespace: str | None = None,
) -> Skill | None:
    from codeloop.extensions import frontmatter

    try:
        doc = frontmatter.read(path)
    except OSError as exc:
        notes.append(f"{path}: cannot read: {exc}")
        return None
    if doc.problem:
        notes.append(f"{path}: frontmatter {doc.problem}")
    meta = doc.meta
    base = default_name
    if kind == "skill" and plugin is not None:
        base = frontmatter.text_field(meta, "name") or default_name
    name = f"{plugin}:{base}" if plugin else base
    if namespace and plugin:
        name = f"{plugin}:{namespace}:{base}"
    description = frontmatter.text_field(meta, "description") or _first_paragraph(doc.body)
    hooks: HooksConfig = {}
    if isinstance(meta.get("hooks"), dict):
        hooks = parse_hooks(
            meta["hooks"],
            lambda w, p: notes.append(f"{path}: {w}: {p}"),
            plugin_root=plugin_root,
        )
    model = frontmatter.text_field(meta, "model")
    return Skill(
        name=name,
        description=description or f"{kind} {name}",
        path=path,
        body=doc.body,
        kind=kind,
        level=level,
        allowed_tools=tuple(frontmatter.name_list(meta.get("allowed-tools")) or ()),
        model_invocable=not frontmatter.flag(meta, "disable-model-invocation"),
        user_invocable=frontmatter.flag(meta, "user-invocable", default=True),
        argument_hint=frontmatter.text_field(meta, "argument-hint"),
        arguments=tuple(frontmatter.name_list(meta.get("arguments")) or ()),
        context=frontmatter.text_field(meta, "context"),
        agent=frontmatter.text_field(meta, "agent"),
        model=None if model in (None, "inherit") else model,
        hooks=hooks,
        namespace=namespace,
        plugin=plugin,
        plugin_root=plugin_root,
        meta=meta,
        # Claude Code ignores `paths` in a command file.
        paths=tuple(frontmatter.name_list(meta.get("paths")) or ()) if kind == "skill" else (),
    )


def _first_paragraph(body: str) -> str:
    for block in re.split(r"\n\s*\n", body.strip()):
        text = " ".join(line.strip().lstrip("#").strip() for line in block.splitlines())
        if text:
            return text[:300]
    return ""


# --- rendering a skill's body for the model --------------------------------------------------

_INLINE_SHELL = LazyPattern(r"(?:(?<=\s)|^)!`([^`\n]+)`", re.MULTILINE)
_BLOCK_SHELL = LazyPattern(r"^```!\s*\n(.*?)\n```[ \t]*$", re.MULTILINE | re.DOTALL)
_INDEXED = LazyPattern(r"(?<!\\)\$(?:ARGUMENTS\[(\d+)\]|(\d+))")


def substitute(
    skill: Skill,
    args: str,
    *,
    session_id: str,
    project_dir: Path,
    plugin_data: Path | None = None,
) -> str:
    """Claude Code's substitutions: $ARGUMENTS, $ARGUMENTS[N] and $N, declared $names, and the
    ${CLAUDE_SKILL_DIR}-style paths. Arguments given to a body without $ARGUMENTS are added as
    `ARGUMENTS: ...` at the end."""
    text = skill.body
    try:
        words = shlex.split(args)
    except ValueError:
        words = args.split()
    variables = {
        "CLAUDE_SKILL_DIR": str(skill.directory),
        "CLAUDE_SESSION_ID": session_id,
        "CLAUDE_PROJECT_DIR": str(project_dir),
    }
    if skill.plugin_root is not None:
        variables["CLAUDE_PLUGIN_ROOT"] = str(skill.plugin_root)
        if plugin_data is not None:
            variables["CLAUDE_PLUGIN_DATA"] = str(plugin_data)
    for key, value in variables.items():
        text = text.replace("${" + key + "}", value)
    had_placeholder = "$ARGUMENTS" in text or _INDEXED.search(text) is not None

    def indexed(match: re.Match[str]) -> str:
        index = int(match.group(1) or match.group(2))
        return words[index] if index < len(words) else match.group(0)

    text = _INDEXED.sub(indexed, text)
    text = re.sub(r"(?<!\\)\$ARGUMENTS", lambda _: args, text)
    for i, name in enumerate(skill.arguments):
        value = words[i] if i < len(words) else ""
        text = re.sub(rf"(?<!\\)\${re.escape(name)}\b", value.replace("\\", "\\\\"), text)
        had_placeholder = had_placeholder or f"${name}" in skill.body
    text = re.sub(r"\\(\$(?:ARGUMENTS|\d))", r"\1", text)
    if args.strip() and not had_placeholder:
        text = f"{text.rstrip()}\n\nARGUMENTS: {args}"
    return text


def shell_commands(text: str) -> list[tuple[str, str]]:
    """The (placeholder, command) pairs of !`cmd` and ```! blocks, in order."""
    found = [(m.group(0), m.group(1).strip()) for m in _BLOCK_SHELL.finditer(text)]
    found += [(m.group(0), m.group(1).strip()) for m in _INLINE_SHELL.finditer(text)]
    return found
