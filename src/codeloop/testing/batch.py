"""A scripted batch for tests and benches: repositories, a tasks file, a conversation per task.

Twenty tasks over every kind of source a batch takes — SWE-bench lines whose `owner/name` is
found in a repos folder, a bare repository by file:// URL at a tag, a local repository by
path, a folder that is not a repository — each served its own conversation by the fake
server (the task's id is in its prompt). Every task reads OWNERS, edits it and writes a note
of its own, so each workspace's diff shows whose changes it holds. Commits are made with
fixed names and dates: the same fixture has the same commit ids wherever it is built.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from codeloop.system.valueclass import valueclass
from codeloop.testing.fake_server import RecordedRequest
from codeloop.testing.scenario import Scenario, Turn, fault, tool_use, turn

OWNERS = "owner: nobody\n"
APP = "def main():\n    return 1\n"
# What differs between two runs of the same batch, whoever runs it: left out of comparisons.
RUN_FIELDS = ("duration_s", "session_id", "transcript")

_GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "fixture",
    "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
    "GIT_COMMITTER_NAME": "fixture",
    "GIT_COMMITTER_EMAIL": "fixture@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, **_GIT_IDENTITY, "GIT_CONFIG_GLOBAL": "/dev/null"}
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


@valueclass
class Fixture:
    root: Path
    tasks: Path
    repos_dir: Path
    originals: tuple[Path, ...]  # every repository or folder a task starts from
    scenarios: dict[str, Scenario]
    ids: tuple[str, ...]
    base_commit: str  # the SWE-bench tasks' base: the first commit of acme/widgets


def model_env(base_url: str) -> dict[str, str]:
    """The environment that points the anthropic provider at a fake server."""
    return {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "test-key"}


def _repo(path: Path) -> str:
    """A repository with two commits: OWNERS and app.py, then app.py changed. Returns the
    first commit."""
    (path / "src").mkdir(parents=True)
    (path / "OWNERS").write_text(OWNERS)
    (path / "src" / "app.py").write_text(APP)
    git("init", "--quiet", "--initial-branch=main", cwd=path)
    git("add", "--all", cwd=path)
    git("commit", "--quiet", "-m", "first", cwd=path)
    first = git("rev-parse", "HEAD", cwd=path)
    git("tag", "v1", cwd=path)
    (path / "src" / "app.py").write_text(APP.replace("1", "2"))
    git("commit", "--quiet", "--all", "-m", "second", cwd=path)
    return first


def task_turns(task_id: str, *, delay: float = 0.0) -> tuple[Turn, ...]:
    note = f"notes/{task_id}.txt"
    return (
        turn(tool_use("Read", {"file_path": "OWNERS"}), delay=delay),
        turn(
            tool_use(
                "Edit", {"file_path": "OWNERS", "old_string": "nobody", "new_string": task_id}
            ),
            tool_use("Write", {"file_path": note, "content": f"{task_id} was here\n"}),
            delay=delay,
        ),
        turn(f"{task_id}: done", delay=delay),
    )


def conversations(ids: Iterable[str], *, delay: float = 0.0) -> dict[str, Scenario]:
    """What the fake server answers each task of the batch: read, edit, write, done."""
    return {task_id: Scenario(turns=task_turns(task_id, delay=delay)) for task_id in ids}


STORM_RETRY_AFTER = 1.0


def storm_conversations(ids: Sequence[str]) -> dict[str, Scenario]:
    """A 529 storm on the first task (three in a row, retry-after 1 s) while the others are
    busy with 60 quick `echo` turns each."""
    storm, *others = ids
    burst = fault("overloaded", times=3, retry_after=STORM_RETRY_AFTER)
    echoes = [turn(tool_use("Bash", {"command": f"echo {i}"}), delay=0.005) for i in range(60)]
    return {
        storm: Scenario(turns=(turn("checked", faults=[burst]),)),
        **{task_id: Scenario(turns=(*echoes, turn("done"))) for task_id in others},
    }


def task_ids(tasks: Path) -> list[str]:
    """The ids in a tasks file this module wrote."""
    return [_id(line) for line in read_jsonl(tasks)]


def _id(line: Mapping[str, Any]) -> str:
    return str(line.get("id") or line["instance_id"])


def build(root: Path, count: int = 20, *, delay: float = 0.0) -> Fixture:
    """The repositories and TASKS.jsonl under `root`. Task 13 stops at its turn limit and task
    17 names a ref that does not exist: a batch goes on past both."""
    repos_dir = root / "repos"
    widgets = repos_dir / "acme__widgets"
    base = _repo(widgets)
    local = root / "local-repo"
    _repo(local)
    bare = root / "gadgets.git"
    git("clone", "--quiet", "--bare", str(local), str(bare), cwd=root)
    plain = root / "plain"
    plain.mkdir()
    (plain / "OWNERS").write_text(OWNERS)
    lines: list[dict[str, Any]] = []
    for n in range(count):
        task_id = f"acme__widgets-{n:02d}" if n % 4 == 0 else f"task-{n:02d}"
        problem = f"Task {task_id}: OWNERS names nobody; put {task_id} there and leave a note."
        line: dict[str, Any]
        if n % 4 == 0:
            line = {
                "instance_id": task_id,
                "repo": "acme/widgets",
                "base_commit": base,
                "problem_statement": problem,
                "patch": "(the gold patch: never shown to the agent)",
                "version": "1.0",
            }
        elif n % 4 == 1:
            line = {"id": task_id, "repo": bare.as_uri(), "ref": "v1", "prompt": problem}
        elif n % 4 == 2:
            line = {"id": task_id, "repo": "local-repo", "prompt": problem}
        else:
            line = {"id": task_id, "repo": "plain", "prompt": problem}
        if n == 13:
            line["max_turns"] = 1
        if n == 17:
            line["ref"] = "no-such-ref"
        lines.append(line)
    scenarios = conversations([_id(line) for line in lines], delay=delay)
    tasks = root / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return Fixture(
        root=root,
        tasks=tasks,
        repos_dir=repos_dir,
        originals=(widgets, local, bare, plain),
        scenarios=scenarios,
        ids=tuple(scenarios),
        base_commit=base,
    )


def timing(request: RecordedRequest) -> dict[str, Any]:
    """What a storm check needs of a request, as JSON (a driver in a namespace writes it)."""
    return {
        "conversation": request.conversation,
        "arrived": request.arrived,
        "finished": request.finished,
        "status": request.status,
    }


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def comparable(results: Iterable[Mapping[str, Any]], out: Path) -> list[dict[str, Any]]:
    """Results as two runs of one batch must agree on them: by id, without what differs from
    run to run (timings, session ids), the output folder written as OUT."""
    rows = []
    for result in results:
        row = {k: v for k, v in result.items() if k not in RUN_FIELDS}
        row["workspace"] = str(row["workspace"]).replace(str(out), "OUT")
        rows.append(row)
    return sorted(rows, key=lambda r: str(r["id"]))


PREDICTION_KEYS = frozenset({"instance_id", "model_name_or_path", "model_patch"})


def prediction_problems(path: Path) -> list[str]:
    """What SWE-bench's harness would refuse in a predictions file: a line that is not a JSON
    object of exactly instance_id, model_name_or_path and model_patch (strings), or an
    instance_id given twice."""
    problems: list[str] = []
    seen: set[str] = set()
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        try:
            pred = json.loads(line)
        except ValueError as exc:
            problems.append(f"line {number}: not JSON: {exc}")
            continue
        if not isinstance(pred, dict) or set(pred) != PREDICTION_KEYS:
            problems.append(
                f"line {number}: keys {sorted(pred) if isinstance(pred, dict) else pred}"
            )
            continue
        if not all(isinstance(pred[k], str) for k in PREDICTION_KEYS):
            problems.append(f"line {number}: a value is not a string")
        if pred["instance_id"] in seen:
            problems.append(f"line {number}: {pred['instance_id']} given twice")
        seen.add(pred["instance_id"])
    return problems
