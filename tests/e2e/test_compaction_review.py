"""Issue 16: compaction a user can review. Through the real CLI on a small window: the summary
is shown on stderr, a PostCompact hook receives it, stream-json's compact_boundary says what
was kept, summarized and folded, and `codeloop sessions show` lists each compaction with the
tool results it took out of view."""

from __future__ import annotations

import json
import random
import shlex
import sys
from pathlib import Path

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.long_session import SUMMARY, summary_turns
from codeloop.testing.reading import reading_turns, write_file
from codeloop.testing.scenario import Scenario
from tests.e2e.cli import PROVIDER_MODELS, provider_env, run_cli


def test_a_compaction_can_be_reviewed_and_its_hooks_see_the_summary(tmp_path: Path) -> None:
    rng = random.Random(16)
    (tmp_path / "data").mkdir()
    for i in range(14):
        write_file(tmp_path / "data" / f"f{i:03d}.py", i, 6_000, rng)
    hooks = tmp_path / ".claude"
    hooks.mkdir()
    log = tmp_path / "hooks.jsonl"
    record = f"{shlex.quote(sys.executable)} -c " + shlex.quote(
        f"import sys; open({str(log)!r}, 'a').write(sys.stdin.read().strip() + '\\n')"
    )
    entry = [{"hooks": [{"type": "command", "command": record}]}]
    settings = {"hooks": {"PreCompact": entry, "PostCompact": entry}}
    (hooks / "settings.json").write_text(json.dumps(settings))
    turns = reading_turns(14, rng)
    with FakeModelServer(
        Scenario(turns=tuple(turns)), max_prompt_tokens=18_000, summaries=summary_turns(20)
    ) as server:
        env = provider_env(server, "anthropic", tmp_path) | {
            "CODELOOP_HOME": str(tmp_path / "home"),
            # Small enough to compact after a fold, with room for the ~4,500 tokens of the
            # built-in tools' specs (the full set: --compact-profile off).
            "CODELOOP_CONTEXT_WINDOW": "18000",
        }
        args = ["-p", "Read the files in data/.", "--model", PROVIDER_MODELS["anthropic"]]
        args += ["--compact-profile", "off"]
        run = run_cli([*args, "--output-format", "stream-json"], cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr[-3000:]

    # stream-json: each boundary carries what it did
    events = run.json_lines()
    boundaries = [e for e in events if e.get("subtype") == "compact_boundary"]
    assert boundaries
    meta = boundaries[0]["compact_metadata"]
    assert meta["summary"] == SUMMARY and meta["kept"] and meta["messages_summarized"] > 0
    assert meta["pre_tokens"] > meta["post_tokens"]
    # Claude Code's status lines around each: "compacting" while the summary is made, then null
    statuses = [e["status"] for e in events if e.get("subtype") == "status"]
    assert statuses == ["compacting", None] * len(boundaries)
    first = events.index(boundaries[0])
    assert [e.get("status") for e in events[first - 2 : first]] == ["compacting", None]
    reads = [r for r in meta["tool_results"] if r["tool"] == "Read"]
    assert reads and all(r["target"].startswith("data/f") and r["tokens"] > 500 for r in reads)
    assert {r["fate"] for r in reads} <= {"folded", "summarized"} and "folded" in {
        r["fate"] for r in reads
    }

    # stderr, for the person running -p: what happened, and the summary itself
    assert "compacted the conversation (auto)" in run.stderr
    assert "  1. User requests and intent: audit the modules" in run.stderr

    # the hooks: PreCompact before, PostCompact after, with the summary
    fired = [json.loads(line) for line in log.read_text().splitlines()]
    names = [f["hook_event_name"] for f in fired]
    assert names[:2] == ["PreCompact", "PostCompact"] and len(names) == 2 * len(boundaries)
    assert fired[1]["trigger"] == "auto" and fired[1]["compact_summary"] == SUMMARY

    # sessions show: the timeline, each compaction with what it took out of view
    session = events[-1]["session_id"]
    show = run_cli(["sessions", "show", session[:8]], cwd=tmp_path, env=env)
    assert show.returncode == 0, show.stderr
    out = show.stdout
    assert f"session {session}" in out
    assert f"{len(boundaries)} compactions" in out
    compaction = next(line for line in out.splitlines() if "  compaction  auto" in line)
    assert f"{meta['pre_tokens']:,} → {meta['post_tokens']:,} tokens" in compaction
    assert "word for word" in compaction
    assert "folded      Read data/f000.py (" in out
    assert "1. User requests and intent: audit the modules" in out
    assert "user        Read the files in data/." in out
    assert "results     Read data/f000.py → " in out
    only = run_cli(["sessions", "show", session, "--compactions"], cwd=tmp_path, env=env)
    assert only.returncode == 0 and "compaction" in only.stdout
    assert "user        Read the files" not in only.stdout
    missing = run_cli(["sessions", "show", "ffffffff"], cwd=tmp_path, env=env)
    assert missing.returncode != 0 and "ffffffff" in missing.stderr
    assert "Traceback" not in missing.stderr
