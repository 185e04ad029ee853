"""Reading a batch's tasks: both shapes, the defaults, every mistake named with its line;
finding repositories; the results file across a crash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codeloop.batch.results import ResultsFile
from codeloop.batch.tasks import (
    SWE_BENCH_PROMPT,
    Defaults,
    RepoLocator,
    TaskFileError,
    load_tasks,
    locate_all,
)


def write(tmp: Path, *lines: Any) -> Path:
    path = tmp / "tasks.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def test_codeloop_lines_with_defaults_filled_in(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {"id": "a", "repo": "r", "prompt": "p", "model": "m1", "max_turns": 3},
        "",
        {"id": "b", "repo": "r", "prompt": "q", "allowed_tools": "Edit,Bash(ls:*)"},
    )
    defaults = Defaults(model="m0", permission_mode="acceptEdits", max_budget_usd=1.5)
    a, b = load_tasks(path, defaults)
    assert (a.id, a.model, a.max_turns, a.permission_mode, a.line) == (
        "a",
        "m1",
        3,
        "acceptEdits",
        1,
    )
    assert (b.model, b.allowed_tools, b.max_budget_usd, b.line) == (
        "m0",
        ("Edit,Bash(ls:*)",),
        1.5,
        3,
    )


def test_a_swe_bench_line_is_taken_as_it_is(tmp_path: Path) -> None:
    line = {
        "instance_id": "astropy__astropy-12907",
        "repo": "astropy/astropy",
        "base_commit": "d16bfe05a744909de4b27f5875fe0d4ed41ce607",
        "problem_statement": "Modeling's separability_matrix is wrong for nested models",
        "patch": "diff --git a/x b/x",
        "test_patch": "...",
        "FAIL_TO_PASS": "[]",
        "max_turns": 50,
    }
    (task,) = load_tasks(write(tmp_path, line))
    assert task.id == "astropy__astropy-12907" and task.repo == "astropy/astropy"
    assert task.ref == line["base_commit"] and task.max_turns == 50
    assert task.prompt == SWE_BENCH_PROMPT.format(problem_statement=line["problem_statement"])
    assert "diff --git" not in task.prompt  # the gold patch is never given to the agent


def test_every_mistake_is_named_with_its_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {"id": "ok", "repo": "r", "prompt": "p"},
        "{not json",
        {"repo": "r", "promt": "typo"},
        {"id": "ok", "repo": "r", "prompt": "p"},
        {"id": "has space", "repo": "r", "prompt": "p"},
        {"repo": "r", "prompt": "p", "max_turns": 0, "permission_mode": "yolo"},
        {"instance_id": "x", "problem_statement": "p", "repo": "o/n"},
        [1, 2],
    )
    with pytest.raises(TaskFileError) as caught:
        load_tasks(path)
    message = str(caught.value)
    assert "line 2: not JSON" in message
    assert "line 3: unknown key 'promt'" in message
    assert "line 4: id 'ok' is already used on line 1" in message
    assert "line 5: id 'has space'" in message
    assert "line 6: 'max_turns'" in message and "line 6: permission_mode 'yolo'" in message
    assert "line 7: a SWE-bench line needs base_commit" in message
    assert "line 8: not a JSON object" in message


def test_an_empty_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TaskFileError, match="no tasks"):
        load_tasks(write(tmp_path, ""))


def test_ids_given_by_nobody_are_stable_when_lines_move(tmp_path: Path) -> None:
    one, two = {"repo": "r", "prompt": "first"}, {"repo": "r", "prompt": "second"}
    before = [t.id for t in load_tasks(write(tmp_path, one, two))]
    after = [t.id for t in load_tasks(write(tmp_path, {"repo": "r", "prompt": "new"}, two, one))]
    assert after[1:] == before[::-1] and len(set(after)) == 3


def test_repositories_by_path_url_folder_or_template(tmp_path: Path) -> None:
    (tmp_path / "here").mkdir()
    (tmp_path / "repos" / "astropy__astropy").mkdir(parents=True)
    (tmp_path / "repos" / "django").mkdir(parents=True)
    locator = RepoLocator(tmp_path, repos_dir=tmp_path / "repos")
    assert locator.locate("here") == str(tmp_path / "here")
    assert locator.locate("file:///srv/x.git") == "file:///srv/x.git"
    assert locator.locate("git@example.invalid:o/n.git") == "git@example.invalid:o/n.git"
    assert locator.locate("astropy/astropy") == str(tmp_path / "repos" / "astropy__astropy")
    assert locator.locate("django/django") == str(tmp_path / "repos" / "django")
    templated = RepoLocator(tmp_path, url_template="file:///mirror/{owner}/{name}.git")
    assert templated.locate("psf/requests") == "file:///mirror/psf/requests.git"


def test_a_repository_that_cannot_be_found_says_what_to_pass(tmp_path: Path) -> None:
    tasks = load_tasks(
        write(
            tmp_path,
            {"id": "a", "repo": "psf/requests", "prompt": "p"},
            {"id": "b", "repo": "missing-folder", "prompt": "p"},
        )
    )
    with pytest.raises(TaskFileError) as caught:
        locate_all(tasks, RepoLocator(tmp_path))
    message = str(caught.value)
    assert "line 1: repo 'psf/requests'" in message and "--repos-dir" in message
    assert "--repo-url" in message
    assert "line 2: repo 'missing-folder'" in message


def result(task_id: str, status: str = "completed", diff: str = "") -> dict[str, Any]:
    return {"id": task_id, "status": status, "model": "m", "diff": diff, "cost_usd": 0.1}


def test_results_survive_a_torn_line_and_predictions_follow(tmp_path: Path) -> None:
    first = ResultsFile(tmp_path)
    first.open()
    first.add(result("a", diff="diff --git a/x b/x\n"))
    first.add(result("b", status="failed"))
    with open(first.path, "a") as handle:
        handle.write('{"id": "c", "status": "compl')  # killed mid-write
    again = ResultsFile(tmp_path)
    again.open()
    assert sorted(again.finished) == ["a", "b"]
    assert first.path.read_text().count("\n") == 2  # the torn line is gone from the file
    again.add(result("c"))
    lines = [json.loads(x) for x in again.predictions_path.read_text().splitlines()]
    assert lines[0] == {
        "instance_id": "a",
        "model_name_or_path": "m",
        "model_patch": "diff --git a/x b/x\n",
    }
    assert [p["instance_id"] for p in lines] == ["a", "b", "c"]


def test_retry_failed_forgets_the_failures(tmp_path: Path) -> None:
    first = ResultsFile(tmp_path)
    first.open()
    first.add(result("a"))
    first.add(result("b", status="failed"))
    again = ResultsFile(tmp_path)
    again.open(retry_failed=True)
    assert list(again.finished) == ["a"]
    assert [json.loads(x)["id"] for x in again.path.read_text().splitlines()] == ["a"]
    assert "b" not in again.predictions_path.read_text()
