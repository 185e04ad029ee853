"""What a review reports, one shape for every face: `{"summary", "findings": [{path, line,
severity, title, body}]}` (the StructuredOutput tool's input for `codeloop review`, a JSON
block for `/review` and `/security-review`), and the prompts that ask for it."""

from __future__ import annotations

import json
import posixpath
from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal

from codeloop.review.actions import redacted
from codeloop.review.changes import Changes, look, prompt_diff, prompt_stat
from codeloop.system.procs import GitError
from codeloop.system.valueclass import valueclass

SEVERITIES = ("high", "medium", "low")
Kind = Literal["review", "security"]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "summary": {"type": "string", "description": "the review in a few sentences"},
        "findings": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "repository-relative path"},
                    "line": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "1-based line number in the head version of the file",
                    },
                    "severity": {"type": "string", "enum": list(SEVERITIES)},
                    "title": {"type": "string"},
                    "body": {"type": "string"},
                },
                "required": ["path", "line", "severity", "title", "body"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["summary", "findings"],
    "additionalProperties": False,
}


@valueclass
class Finding:
    path: str
    line: int
    severity: str
    title: str
    body: str


@valueclass
class Review:
    summary: str
    findings: tuple[Finding, ...]

    @classmethod
    def from_output(cls, value: dict[str, Any], root: Path) -> Review:
        """The StructuredOutput tool's input (already checked against `SCHEMA`), each path
        made repository-relative (a model may write `./src/x.py` or the absolute path)."""
        findings = tuple(
            Finding(**{**item, "path": relative(item["path"], root)}) for item in value["findings"]
        )
        return cls(str(value["summary"]), findings)

    def redacted(self, secrets: tuple[str, ...]) -> Review:
        """This review with every secret in it replaced by `***`."""
        return Review.from_json(redacted(self.to_json(), secrets))

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Review:
        return cls(value["summary"], tuple(Finding(**item) for item in value["findings"]))

    def to_json(self) -> dict[str, Any]:
        return {"summary": self.summary, "findings": [asdict(f) for f in self.findings]}


def misplaced(value: dict[str, Any], changes: Changes) -> list[str]:
    """What is wrong with the findings' places: a path outside the repository or not a file
    of the head version, a line past the file's end. (The StructuredOutput check: the model
    is told, and places them again.)"""
    problems: list[str] = []
    for n, item in enumerate(value["findings"]):
        path = relative(item["path"], changes.root)
        where = f"findings/{n}: {item['path']}"
        if Path(path).is_absolute() or posixpath.normpath(path).startswith("../"):
            problems.append(f"{where} is outside the repository: give a repository-relative path")
            continue
        text = head_text(changes, posixpath.normpath(path))
        if text is None:
            problems.append(
                f"{where} is not a file of {changes.head_label}: name a file of the head version"
            )
        elif item["line"] > (count := len(text.splitlines()) or 1):
            problems.append(
                f"{where}: line {item['line']} is past the end of the file ({count} lines in "
                f"{changes.head_label})"
            )
    return problems


def head_text(changes: Changes, path: str) -> str | None:
    """A file's text in the head version (the working tree when the head is); None when the
    head has no such file."""
    if changes.head is None:
        try:
            return (changes.root / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    try:
        return look("show", f"{changes.head}:{path}", cwd=changes.root)
    except GitError:
        return None


def relative(path: str, root: Path) -> str:
    """`path` relative to the repository's root, with `/` separators."""
    given = Path(path)
    if given.is_absolute():
        try:
            given = given.relative_to(root)
        except ValueError:
            return path  # outside the repository: said as it was given
    return given.as_posix().removeprefix("./")


def as_text(review: Review) -> str:
    """The review for people: the summary, then each finding under its place."""
    lines = [review.summary.strip(), ""]
    if not review.findings:
        lines.append("No findings.")
    for finding in review.findings:
        lines.append(f"[{finding.severity}] {finding.path}:{finding.line}  {finding.title}")
        lines += [f"    {text}" for text in finding.body.strip().splitlines()]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


_FOCUS: dict[Kind, str] = {
    "review": """\
Review this change as a demanding senior engineer would before approving it. Look for:
- bugs: wrong logic, off-by-one errors, unhandled cases and errors, races, resource leaks;
- changes that break callers, tests, documentation or a public interface;
- security problems the change brings;
- code that is much harder to read or maintain than it needs to be.
Report what matters, not style nits a formatter or linter would catch.""",
    "security": """\
Do a security review of this change, as a security engineer would. Look for vulnerabilities
the change introduces or makes reachable:
- injection: SQL, NoSQL, OS command, template, LDAP, XPath, header and log injection;
  cross-site scripting and unescaped output;
- authentication and authorization: missing or bypassable checks, privilege escalation,
  insecure direct object references, broken session handling, CSRF;
- secrets: credentials, tokens or keys in code, logs or errors; weak randomness or crypto;
- unsafe deserialization (pickle, yaml.load, eval of data) and code execution;
- path traversal and unsafe file handling (user input in paths, archives, symlinks);
- server-side request forgery (SSRF) and open redirects;
- missing input validation at trust boundaries; exposure of sensitive data; denial of
  service through unbounded work.
Report only issues with a concrete path to exploitation and a real impact; say how an
attacker would reach each one. Leave out theoretical issues, style and hardening wishes.""",
}

_ANSWER = {
    "tool": (
        "End by calling the StructuredOutput tool once with the review: a short summary and "
        "every finding."
    ),
    "text": (
        "End your answer with the review as one JSON object in a ```json block, exactly of "
        "this shape:\n"
        '{"summary": "…", "findings": [{"path": "…", "line": 1, "severity": "high|medium|low",'
        ' "title": "…", "body": "…"}]}'
    ),
}


def review_prompt(changes: Changes, kind: Kind, answer: Literal["tool", "text"]) -> str:
    """The first request's prompt: what to look for, the diff, and how to answer."""
    return f"""\
{_FOCUS[kind]}

The change goes from {changes.base_label} ({changes.base[:12]}) to {changes.head_label}. Its \
diff is below; the repository is yours to read (Read, Grep, Glob, and commands that change \
nothing) for the context a finding needs.{_elsewhere(changes)} This review is read-only: do \
not change any file.

Each finding names the file by its repository-relative path and the 1-based line in the head \
version (prefer a line the diff adds or changes), a severity (high: must be fixed before \
merging; medium: should be fixed; low: worth a look), a one-line title and a body that says \
what goes wrong and how to fix it. No findings is a fine answer when the change is sound.
{_ANSWER[answer]}

Files changed:
{prompt_stat(changes)}

```diff
{prompt_diff(changes).rstrip()}
```"""


def _elsewhere(changes: Changes) -> str:
    """Where the head's files are when it is not what is checked out."""
    if changes.head in (None, "HEAD"):
        return ""
    return (
        f" The files on disk may differ from the head: read its version of a file with "
        f"`git show {changes.head}:PATH`."
    )


def dumps(review: Review) -> str:
    """`--format json`: one object, one line."""
    return json.dumps(review.to_json(), ensure_ascii=False)
