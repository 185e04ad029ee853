"""Output styles: instructions added to the end of the system prompt that change how the model
responds (`outputStyle` in the settings). Built in: Default, Explanatory, Learning, Concise,
Proactive. Custom ones are markdown files in .claude/output-styles/ (from the working
directory up to the repository root, the closest winning), ~/.claude/output-styles/, the
managed folder and plugins; frontmatter `name`, `description`, `keep-coding-instructions`
(without it a custom style replaces codeloop's software-engineering instructions) and, in a
plugin, `force-for-plugin`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from codeloop.system.valueclass import valueclass

DEFAULT = "default"


@valueclass
class OutputStyle:
    name: str
    description: str
    instructions: str
    keep_coding_instructions: bool = True
    source: str = "built-in"
    forced: bool = False


BUILT_IN = (
    OutputStyle(
        "Explanatory",
        "Explains implementation choices and codebase patterns while it works",
        "Between steps of the work, add short educational insights, each marked with a line "
        "'★ Insight' and set off from the rest: why this implementation choice, what pattern "
        "the codebase follows here, what a reader should notice. Keep doing the engineering "
        "work as thoroughly as usual; the insights are in addition to it.",
    ),
    OutputStyle(
        "Learning",
        "Learn by doing: asks you to write small, strategic pieces of code yourself",
        "Work collaboratively so the user learns by doing. Share short insights about the "
        "choices you make, and for small, meaningful pieces of the work (a function body, a "
        "decision between approaches) leave a TODO(human) marker in the code and ask the user "
        "to write it, explaining what it should do and why it matters. Do the rest yourself.",
    ),
    OutputStyle(
        "Concise",
        "Leads with the result and keeps answers short",
        "Lead with the result. Skip preamble and narration, keep answers short by default, and "
        "answer in full only when asked for an explanation or detail. Never shorten error "
        "reports, security warnings or confirmations of destructive actions.",
    ),
    OutputStyle(
        "Proactive",
        "Acts at once, makes reasonable assumptions instead of pausing",
        "Act immediately. Make reasonable assumptions instead of stopping for routine "
        "decisions, prefer doing over planning, and state the assumptions you made in your "
        "report. The permission mode still decides what runs without asking.",
    ),
)


def style_dirs(
    cwd: Path, repo_root: Path | None, user_dirs: Sequence[Path], managed: Path
) -> list[Path]:
    """Output-style folders, lowest priority first (the closest project folder last)."""
    top = repo_root or cwd
    chain, current = [cwd], cwd
    while current != top and top in current.parents:
        current = current.parent
        chain.append(current)
    project = [
        d / sub / "output-styles" for d in reversed(chain) for sub in (".claude", ".codeloop")
    ]
    return [
        *(d / "output-styles" for d in user_dirs),
        *project,
        managed / ".claude" / "output-styles",
    ]


def load_styles(
    dirs: Sequence[Path], plugins: Iterable[tuple[str, Path]] = ()
) -> tuple[dict[str, OutputStyle], list[str]]:
    """Every style by name (case-insensitive lookups use `find`), and notes on skipped files."""
    notes: list[str] = []
    styles = {style.name: style for style in BUILT_IN}
    for plugin, folder in plugins:
        for style in _folder(folder, notes, plugin=plugin):
            styles[style.name] = style
    for folder in dirs:
        for style in _folder(folder, notes):
            styles[style.name] = style
    return styles, notes


def find(styles: dict[str, OutputStyle], name: str | None) -> OutputStyle | None:
    """The style a setting names (None or "default": codeloop's own prompt); a plugin style
    with force-for-plugin applies whatever the setting says."""
    forced = next((s for s in styles.values() if s.forced), None)
    if forced is not None:
        return forced
    if name is None or name.lower() == DEFAULT:
        return None
    return styles.get(name) or next(
        (s for key, s in styles.items() if key.lower() == name.lower()), None
    )


def _folder(folder: Path, notes: list[str], *, plugin: str | None = None) -> list[OutputStyle]:
    if not folder.is_dir():
        return []
    from codeloop.extensions import frontmatter  # the parser loads where there are files to parse

    found = []
    for path in sorted(folder.glob("*.md")):
        try:
            doc = frontmatter.read(path)
        except OSError as exc:
            notes.append(f"{path}: cannot read: {exc}")
            continue
        meta = doc.meta
        name = frontmatter.text_field(meta, "name") or path.stem
        found.append(
            OutputStyle(
                f"{plugin}:{name}" if plugin else name,
                frontmatter.text_field(meta, "description") or "",
                doc.body.strip(),
                keep_coding_instructions=frontmatter.flag(meta, "keep-coding-instructions"),
                source=str(path),
                forced=plugin is not None and frontmatter.flag(meta, "force-for-plugin"),
            )
        )
    return found


def style_section(style: OutputStyle) -> str:
    return (
        f"# Output style: {style.name}\n\n{style.instructions}\n\n"
        "Keep to this output style throughout the conversation."
    )
