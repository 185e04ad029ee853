"""`codeloop batch TASKS.jsonl --out DIR`: flags, checks before anything starts, the run.

Everything that can be checked before a model is called is: the tasks file line by line, and
where each repository is. Then the tasks run (locally, or on Ray), the summary is printed, and
the exit status says whether every task completed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from codeloop.frontdoor.flags import Parser, add_permission_flags, positive_amount, positive_int

DESCRIPTION = """\
Run many tasks, each headless in its own workspace (a clone of its repository at its ref),
on this machine (--workers N) or on a Ray cluster (--ray ADDRESS, or auto).

TASKS.jsonl holds one JSON object a line, either codeloop's:
  {"id": "fix-1", "repo": "../app", "ref": "main", "prompt": "fix the failing test",
   "model": "claude-sonnet-4-5", "allowed_tools": ["Edit", "Bash(pytest:*)"],
   "permission_mode": "acceptEdits", "max_turns": 30, "max_budget_usd": 2}
  (only repo and prompt are required; a path is relative to the tasks file, a git URL is
  cloned once and shared by its tasks)
or SWE-bench's, as the dataset has it:
  {"instance_id": "astropy__astropy-12907", "repo": "astropy/astropy",
   "base_commit": "d16bfe05a7...", "problem_statement": "..."}
  (owner/name is found in --repos-dir, or filled into --repo-url)

DIR gets results.jsonl (a line per task as it finishes: status, end reason, turns, tokens,
cost, duration, final text, the diff of its workspace), predictions.jsonl (SWE-bench's
format: instance_id, model_name_or_path, model_patch) and workspaces/ID. Run the same command
again to go on: finished tasks are skipped, with no new model request.
"""

EPILOG = """\
Rate limits are shared: a 429 or 529 met by one task holds back every task's requests for as
long as that task waits (on Ray, across the cluster). Each task's session is saved like any
other (codeloop sessions, in its workspace); results.jsonl names its transcript.

With --ray, the driver's ANTHROPIC_*, OPENAI_* and CODELOOP_* variables are passed to the
tasks on the cluster, and each worker makes its workspaces under the same --workspaces path
on its own node. Ray is an optional extra: pip install 'codeloop[ray]'.

Exit status: 0 when every task completed, 1 when one failed or the batch budget left tasks
unstarted, 2 on a usage error or a bad tasks file, 130 when interrupted.
"""

FORWARDED_ENV = ("ANTHROPIC_", "OPENAI_", "CODELOOP_")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="codeloop batch",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("tasks", metavar="TASKS.jsonl", help="the tasks, one JSON object a line")
    parser.add_argument("--out", required=True, metavar="DIR", help="where results go")
    parser.add_argument(
        "--workers",
        type=positive_int,
        metavar="N",
        help="tasks running at once (default 1; with --ray, the cluster's CPUs)",
    )
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="run each task as a Ray task on the cluster at ADDRESS (or auto)",
    )
    parser.add_argument(
        "--max-budget-usd",
        type=positive_amount,
        metavar="USD",
        help="for the whole batch, earlier runs included: once spent, no new task starts "
        "(running ones finish)",
    )
    parser.add_argument(
        "--retry-failed",
        action="store_true",
        help="run again the tasks whose earlier result is a failure (default: skip them)",
    )
    where = parser.add_argument_group("repositories")
    where.add_argument(
        "--repos-dir",
        metavar="DIR",
        help="where repositories named owner/name are: DIR/owner__name, DIR/owner/name or DIR/name",
    )
    where.add_argument(
        "--repo-url",
        metavar="TEMPLATE",
        help="URL for a repository named owner/name, with {repo}, {owner} and {name}, e.g. "
        "https://github.com/{repo}.git",
    )
    where.add_argument(
        "--workspaces",
        metavar="DIR",
        help="where the workspaces are made (default: DIR/workspaces of --out)",
    )
    where.add_argument(
        "--remove-workspaces",
        action="store_true",
        help="delete each workspace once its diff is in the results (default: keep them)",
    )
    each = parser.add_argument_group("for every task that does not set its own")
    each.add_argument("--model", help="model to use, e.g. anthropic:claude-sonnet-4-5")
    add_permission_flags(each)
    each.add_argument("--max-turns", type=positive_int, help="stop a task after this many turns")
    each.add_argument(
        "--task-budget-usd",
        type=positive_amount,
        metavar="USD",
        help="stop a task once its model calls have cost this much",
    )
    return parser


def run_batch(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    started = time.monotonic()
    from codeloop.batch.progress import summary
    from codeloop.batch.results import ResultsFile
    from codeloop.batch.runner import RunConfig
    from codeloop.batch.schedule import Batch, run_local
    from codeloop.batch.tasks import Defaults, RepoLocator, TaskFileError, load_tasks, locate_all

    tasks_path = Path(args.tasks)
    out = Path(args.out).resolve()
    defaults = Defaults(
        model=args.model,
        allowed_tools=tuple(args.allowed_tools),
        disallowed_tools=tuple(args.disallowed_tools),
        permission_mode=args.permission_mode,
        max_turns=args.max_turns,
        max_budget_usd=args.task_budget_usd,
    )
    locator = RepoLocator(
        base=tasks_path.resolve().parent,
        repos_dir=Path(args.repos_dir).expanduser().resolve() if args.repos_dir else None,
        url_template=args.repo_url,
    )
    try:
        tasks = load_tasks(tasks_path, defaults)
        sources = locate_all(tasks, locator)
    except TaskFileError as exc:
        print(f"codeloop batch: {exc}", file=sys.stderr)
        return 2
    if out.exists() and not out.is_dir():
        print(f"codeloop batch: --out {out} is a file, not a folder", file=sys.stderr)
        return 2
    results = ResultsFile(out)
    try:
        results.open(retry_failed=args.retry_failed)
    except OSError as exc:
        print(f"codeloop batch: cannot write to {out}: {exc.strerror}", file=sys.stderr)
        return 1
    config = RunConfig(
        workspaces=Path(args.workspaces).resolve() if args.workspaces else out / "workspaces",
        cache=out / "repos",
        env={k: v for k, v in os.environ.items() if k.startswith(FORWARDED_ENV)}
        if args.ray
        else {},
        settings=args.settings,
        sandbox=args.sandbox,
        keep_workspaces=not args.remove_workspaces,
    )
    batch = Batch(tasks, results, budget_usd=args.max_budget_usd)
    progress = batch.progress
    if batch.skipped:
        print(
            f"codeloop batch: {batch.skipped} of {len(tasks)} tasks finished in an earlier run; "
            "skipping them",
            file=sys.stderr,
        )
    try:
        if args.ray:
            from codeloop.batch.ray_pool import RayUnavailable, run_on_ray

            try:
                run_on_ray(batch, sources, config, args.ray, args.workers)
            except RayUnavailable as exc:
                print(f"codeloop batch: {exc}", file=sys.stderr)
                return 1
        else:
            asyncio.run(run_local(batch, sources, config, args.workers or 1))
    except KeyboardInterrupt:
        batch.interrupted = True
    progress.close()
    if batch.interrupted:
        print(
            f"codeloop batch: interrupted; {batch.counts.done} of {len(tasks)} tasks are "
            "finished, run the same command again to go on",
            file=sys.stderr,
        )
        return 130
    ours = [results.finished[t.id] for t in tasks if t.id in results.finished]
    print(summary(ours, time.monotonic() - started, batch.ran), file=sys.stderr)
    if batch.budget_stopped:
        print(
            f"codeloop batch: the batch budget of ${args.max_budget_usd:g} is spent; "
            f"{batch.not_started} tasks were not started",
            file=sys.stderr,
        )
    print(f"codeloop batch: results in {results.path}", file=sys.stderr)
    failed = any(r["status"] != "completed" for r in ours)
    return 1 if failed or batch.not_started else 0
