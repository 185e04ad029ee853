"""The interactive UI, driven in a real terminal (tmux) against the fake model server: what a
person sees on the screen after typing, for each of the issue's acceptance points."""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]
import pytest

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, UsageSpec, tool_use, turn
from tests.e2e.cli import provider_env, run_cli
from tests.e2e.tmux import Terminal
from tests.mcp_servers import python_server, write_mcp_json

MODEL = ["--model", "claude-sonnet-4-5"]


@contextlib.contextmanager
def ui(
    scenario: Scenario,
    tmp_path: Path,
    args: list[str] = MODEL,
    env: dict[str, str] | None = None,
    **terminal: Any,
) -> Iterator[tuple[FakeModelServer, Terminal]]:
    """A fake server and codeloop in a terminal, ready for typing."""
    with (
        FakeModelServer(scenario) as server,
        Terminal(
            args, cwd=tmp_path, env=env_for(server, tmp_path, **(env or {})), **terminal
        ) as term,
    ):
        term.ready()
        yield server, term


def env_for(server: FakeModelServer, home: Path, **extra: str) -> dict[str, str]:
    env = provider_env(server, "anthropic", home) | {"CODELOOP_HOME": str(home / "data")}
    if "PYTHONPATH" in os.environ:  # a run against another source tree tests that tree
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env | extra


def user_texts(request_body: Any) -> list[str]:
    """Every text block of the user messages a request sent."""
    texts = []
    for message in request_body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
            continue
        texts += [b.get("text", "") for b in content if b.get("type") == "text"]
    return texts


def colors(screen: str) -> list[str]:
    """The SGR codes on the screen that set a colour (not bold, dim or the default colour)."""
    found = []
    for params in re.findall(r"\x1b\[([0-9;]*)m", screen):
        for code in params.split(";"):
            if code.isdigit() and (
                30 <= int(code) <= 38 or 40 <= int(code) <= 48 or int(code) >= 90
            ):
                found.append(params)
    return found


ANSWER = """\
# Plan

The parser drops the **last** token when the input ends without a newline.

```python
def parse(text):
    return text.split()
```

1. Read the tokenizer.
2. Fix the off-by-one.

Done: every case passes now."""


def test_a_streamed_answer_is_rendered_as_markdown(tmp_path: Path) -> None:
    scenario = Scenario(turns=(turn(ANSWER, chunk_chars=6, delay=0.01),))
    with ui(scenario, tmp_path) as (_server, term):
        term.send("why does the parser fail?")
        screen = term.wait_for("Done: every case passes now.")
    assert "> why does the parser fail?" in screen
    assert "The parser drops the last token" in screen  # **bold** rendered, not shown as **
    assert "**" not in screen and "```" not in screen
    assert "def parse(text):" in screen and "Read the tokenizer." in screen
    assert screen.count("Done: every case passes now.") == 1


def test_an_edit_is_shown_as_a_diff(tmp_path: Path) -> None:
    source = "".join(f"line {i}\n" for i in range(1, 11))
    (tmp_path / "f.py").write_text(source)
    edit = {"file_path": "f.py", "old_string": "line 5\n", "new_string": "line five\n"}
    scenario = Scenario(
        turns=(
            turn(tool_use("Read", {"file_path": "f.py"})),
            turn(tool_use("Edit", edit)),
            turn("Renamed line 5."),
        )
    )
    args = [*MODEL, "--permission-mode", "acceptEdits"]
    with ui(scenario, tmp_path, args) as (_server, term):
        term.send("rename line 5")
        screen = term.wait_for("Renamed line 5.")
    assert "Edit(f.py)" in screen
    assert "Updated f.py with 1 addition and 1 removal" in screen
    assert re.search(r"5 - line 5\n", screen), screen
    assert re.search(r"5 \+ line five\n", screen), screen
    assert re.search(r"4   line 4\n", screen), screen  # context, numbered
    assert (tmp_path / "f.py").read_text() == source.replace("line 5\n", "line five\n")


def test_allow_always_is_kept_for_the_next_session(tmp_path: Path) -> None:
    call = tool_use("Bash", {"command": "touch made.txt"})
    scenario = Scenario(
        turns=(turn("Creating it.", call), turn("Created."), turn(call), turn("Again."))
    )
    with FakeModelServer(scenario) as server:
        env = env_for(server, tmp_path)
        with Terminal(MODEL, cwd=tmp_path, env=env) as term:
            term.ready()
            term.send("make a file")
            screen = term.wait_for("Do you want to proceed?")
            assert "touch made.txt" in screen
            assert "2. Yes, and don't ask again for Bash(touch made.txt)" in screen
            # The call waits for the answer; it has not started running.
            assert "waiting for your answer" in screen and "running for" not in screen
            term.write("2")
            term.wait_for("Created.")
            term.keys("C-d")
            assert term.exit_status() == 0
        saved = json.loads((tmp_path / ".codeloop" / "settings.local.json").read_text())
        assert saved["permissions"]["allow"] == ["Bash(touch made.txt)"]
        (tmp_path / "made.txt").unlink()
        with Terminal(MODEL, cwd=tmp_path, env=env) as term:
            term.ready()
            term.send("make it again")
            screen = term.wait_for("Again.")
            assert "Do you want to proceed?" not in term.history()
    assert (tmp_path / "made.txt").exists()


def _running(marker: str) -> bool:
    """Whether a process with `marker` (a unique word) in its command line runs."""
    for proc in psutil.process_iter(["cmdline"]):
        if any(marker in part for part in proc.info["cmdline"] or ()):
            return True
    return False


def _wait(condition: Callable[[], bool], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)  # polling interval


def test_escape_stops_a_long_command_and_the_next_prompt_works(tmp_path: Path) -> None:
    marker = f"120.{uuid.uuid4().int % 10**6:06d}"  # the sleep's own argument: unique
    scenario = Scenario(
        turns=(
            turn("Waiting.", tool_use("Bash", {"command": f"sleep {marker}; echo never"})),
            turn("The second answer."),
        )
    )
    args = [*MODEL, "--allowedTools", "Bash(sleep:*)"]
    with ui(scenario, tmp_path, args) as (server, term):
        term.send("wait for a while")
        term.wait_for("running for")
        _wait(lambda: _running(marker))
        term.write("typed meanwhile")
        term.keys("Escape")
        screen = term.wait_for("Interrupted")
        term.wait_until_gone("esc to interrupt")
        assert not _running(marker)  # the command was killed, not left behind
        # The prompt came back with what was typed, and the next prompt is answered.
        assert "❯ typed meanwhile" in term.screen()
        term.keys("C-u")
        term.send("and now?")
        screen = term.wait_for("The second answer.")
        requests = server.requests
    assert "Interrupted by user" in screen and len(requests) == 2
    # The interrupted call got its result: the next request pairs every tool_use.
    last = requests[-1].body["messages"]
    results = [
        b
        for m in last
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert len(results) == 1 and results[0].get("is_error") is True


def test_compact_cost_and_context(tmp_path: Path) -> None:
    scenario = Scenario(
        turns=(
            turn("First answer."),
            turn("<summary>The user said hello; the assistant answered.</summary>"),
            turn("From the other model."),
        )
    )
    with ui(scenario, tmp_path) as (server, term):
        term.send("hello")
        term.wait_for("First answer.")
        term.send("/cost")
        screen = term.wait_for("Total cost:")
        assert "claude-sonnet-4-5:" in screen and " in, " in screen
        term.send("/context")
        screen = term.wait_for("Messages (")
        assert "System prompt" in screen and "Tools" in screen and "Free" in screen
        assert re.search(r"Context: [\d,]+ of 200,000 tokens", screen), screen
        term.send("/compact")
        screen = term.wait_for("Compacted the conversation")
        assert re.search(r"[\d,]+ → [\d,]+ tokens", screen), screen
        term.send("/model claude-haiku-4-5")
        term.wait_for("Model: claude-haiku-4-5 (was claude-sonnet-4-5)")
        term.send("and now?")
        term.wait_for("From the other model.")
        requests = server.requests
    assert len(requests) == 3  # the answer, the summary, the answer after the switch
    assert requests[2].body["model"] == "claude-haiku-4-5"
    # The same conversation went on: the summary is in the request after the switch.
    assert any("The user said hello" in t for t in user_texts(requests[2].body))


def test_resume_an_earlier_session_from_the_picker(tmp_path: Path) -> None:
    scenario = Scenario(turns=(turn("Noted."), turn("It was PINEAPPLE.")))
    with FakeModelServer(scenario) as server:
        env = env_for(server, tmp_path)
        with Terminal(MODEL, cwd=tmp_path, env=env) as term:
            term.ready()
            term.send("remember the word PINEAPPLE")
            term.wait_for("Noted.")
            term.keys("C-d")
            assert term.exit_status() == 0
        with Terminal(MODEL, cwd=tmp_path, env=env) as term:
            term.ready()
            term.send("/resume")
            screen = term.wait_for("Resume which session?")
            assert "remember the word PINEAPPLE" in screen
            term.keys("Enter")
            term.wait_for("Resumed session")
            term.send("which word was it?")
            term.wait_for("It was PINEAPPLE.")
        last = server.requests[-1].body
    assert any("remember the word PINEAPPLE" in t for t in user_texts(last))


def _greet_command(project: Path) -> None:
    folder = project / ".claude" / "commands"
    folder.mkdir(parents=True)
    (folder / "greet.md").write_text(
        "---\n"
        "description: Greet someone by name\n"
        "argument-hint: NAME\n"
        "allowed-tools: Bash(echo:*)\n"
        "---\n"
        "Say hello to $ARGUMENTS.\n"
        "The shell says: !`echo from-the-shell`\n"
    )


def test_a_custom_command_with_arguments_and_a_shell_line(tmp_path: Path) -> None:
    _greet_command(tmp_path)
    scenario = Scenario(turns=(turn("Hello, Bob!"),))
    with ui(scenario, tmp_path) as (server, term):
        term.write("/gre")
        screen = term.wait_for("Greet someone by name")  # the completion menu
        assert "/greet NAME" in screen
        term.keys("C-u")
        term.send("/greet Bob")
        term.wait_for("Hello, Bob!")
        sent = user_texts(server.requests[-1].body)
    assert any("Say hello to Bob." in t and "The shell says: from-the-shell" in t for t in sent)


def test_a_slash_command_runs_headless_too(tmp_path: Path) -> None:
    _greet_command(tmp_path)
    scenario = Scenario(turns=(turn("Hello, x!"),))
    with FakeModelServer(scenario) as server:
        env = env_for(server, tmp_path)
        done = run_cli(["-p", "/greet x", *MODEL], cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "Hello, x!"
        sent = user_texts(server.requests[-1].body)
        cost = run_cli(["-p", "/cost", *MODEL, "--continue"], cwd=tmp_path, env=env)
    assert any("Say hello to x." in t and "from-the-shell" in t for t in sent)
    assert cost.returncode == 0, cost.stderr
    assert "Total cost:" in cost.stdout
    listed = run_cli(
        ["-p", "/nope", *MODEL, "--output-format", "stream-json"], cwd=tmp_path, env=env
    )
    assert "/nope is no command: sent as text" in listed.stderr
    init = json.loads(listed.stdout.splitlines()[0])
    assert {"greet", "compact", "cost", "resume"} <= set(init["slash_commands"])


def test_streaming_redraws_only_the_live_region(tmp_path: Path) -> None:
    """About 2,000 tokens streamed in small pieces: the bytes written to the terminal stay a
    small multiple of the answer plus, for each frame drawn, about the rows that changed (the
    tail's last line, the spinner). A UI that redraws everything would write its square: every
    frame the whole answer so far, or the whole screen. How many frames there are depends on
    the machine's pace (a loaded one draws the stream in more, smaller steps): counted, not
    assumed."""
    paragraphs = [
        f"Paragraph {i}: " + " ".join(f"word{i}x{j}" for j in range(60)) for i in range(14)
    ]
    answer = "\n\n".join(paragraphs)
    assert 7_000 < len(answer) < 10_000  # ≈ 2,000 tokens at 4 characters a token
    width = 100
    scenario = Scenario(turns=(turn(answer, chunk_chars=8, delay=0.002),))
    record = tmp_path / "terminal.bytes"
    with ui(scenario, tmp_path, width=width, height=40, record=record) as (_server, term):
        before = record.stat().st_size
        term.send("write a lot")
        term.wait_for("word13x59")
        term.wait_until_gone("esc to interrupt")
        stream = record.read_bytes()[before:]
        scrollback = term.history()
    # Each paragraph is in the scrollback once, whole, in order.
    assert [scrollback.count(f"Paragraph {i}:") for i in range(14)] == [1] * 14
    assert scrollback.index("Paragraph 3:") < scrollback.index("Paragraph 4:")
    written = len(stream)
    frames = stream.count(b"\x1b[?25l")  # prompt_toolkit hides the cursor for each frame
    print(
        f"answer {len(answer)} chars, written {written} bytes ({written / len(answer):.2f}x) "
        f"in {frames} frames"
    )
    budget = 3 * len(answer) + frames * 2 * width  # the text once; two rows a frame
    assert written < budget, f"{written} bytes in {frames} frames for {len(answer)} characters"


def test_no_color_and_a_narrow_resized_terminal(tmp_path: Path) -> None:
    scenario = Scenario(turns=(turn("Short answer with **bold** text."), turn("Second.")))
    with ui(scenario, tmp_path, env={"NO_COLOR": "1"}, width=100) as (_server, term):
        term.send("hi")
        term.wait_for("Short answer with bold text.")
        assert colors(term.screen(escapes=True)) == []
        term.resize(40, 20)
        term.send("again")
        screen = term.wait_for("Second.")
    footer = [line for line in screen.splitlines() if "context " in line]
    assert footer and all(len(line) <= 40 for line in footer), screen


def test_without_a_terminal_it_reads_and_writes_plain_lines(tmp_path: Path) -> None:
    scenario = Scenario(turns=(turn("Plain **answer**."),))
    with FakeModelServer(scenario) as server:
        done = run_cli(MODEL, cwd=tmp_path, env=env_for(server, tmp_path), stdin="hello\n/cost\n")
    assert done.returncode == 0, done.stderr
    assert "Plain answer." in done.stdout and "Total cost:" in done.stdout
    assert "\x1b" not in done.stdout
    assert "Session saved" in done.stdout


@pytest.mark.parametrize("flag", ["-c", "--continue"])
def test_continue_starts_the_ui_in_the_latest_session(tmp_path: Path, flag: str) -> None:
    scenario = Scenario(turns=(turn("First."), turn("Second.")))
    with FakeModelServer(scenario) as server:
        env = env_for(server, tmp_path)
        first = run_cli(["-p", "remember ORANGE", *MODEL], cwd=tmp_path, env=env)
        assert first.returncode == 0, first.stderr
        with Terminal([*MODEL, flag, "what was it?"], cwd=tmp_path, env=env) as term:
            term.wait_for("Second.")
        last = server.requests[-1].body
    assert any("remember ORANGE" in t for t in user_texts(last))


def test_keys_mode_cycle_queue_status_line_and_exit(tmp_path: Path) -> None:
    """Shift+Tab cycles the permission mode (the statusLine command sees it), a message typed
    while the model works waits in the queue and is sent next, Ctrl+C twice exits."""
    (tmp_path / ".codeloop").mkdir()
    status = (
        "import json,sys; d=json.load(sys.stdin); "
        "print('STATUS', d['permission_mode'], d['model']['id'])"
    )
    (tmp_path / ".codeloop" / "settings.json").write_text(
        json.dumps(
            {"statusLine": {"type": "command", "command": f"python3 -c {json.dumps(status)}"}}
        )
    )
    scenario = Scenario(
        turns=(
            turn("Slow answer.", chunk_chars=2, delay=0.05),
            turn("Queued one answered."),
        )
    )
    with ui(scenario, tmp_path) as (server, term):
        term.wait_for("STATUS default claude-sonnet-4-5")
        term.keys("BTab")
        term.wait_for("STATUS acceptEdits")
        term.keys("BTab")
        term.wait_for("STATUS plan")
        term.send("first")
        term.wait_for("esc to interrupt")
        term.send("second, typed meanwhile")
        term.wait_for("queued: second, typed meanwhile")
        term.wait_for("Queued one answered.")
        assert "> second, typed meanwhile" in term.history()
        term.write("some text")
        term.keys("C-c")
        term.wait_until_gone("some text")
        term.keys("C-c")
        term.wait_for("Press Ctrl+C again to exit")
        term.keys("C-c")
        assert term.exit_status() == 0
        sent = user_texts(server.requests[-1].body)
    assert "second, typed meanwhile" in sent


def test_nothing_typed_as_it_starts_is_lost(tmp_path: Path) -> None:
    """Typing begins at launch, before codeloop even runs (the terminal's own line editing
    holds those keys), goes on while the prompt is drawn but the UI still loads, and after:
    every key reaches the input in order, Backspace and Enter included."""
    scenario = Scenario(turns=(turn("First answer."), turn("Second answer.")))
    with (
        FakeModelServer(scenario) as server,
        Terminal(MODEL, cwd=tmp_path, env=env_for(server, tmp_path)) as term,
    ):
        term.write("typed at once")
        term.keys("Enter")
        term.write("then ")
        term.wait_for("❯")
        term.write("while it loads, fixd")
        term.keys("BSpace")
        term.write("ed")
        term.wait_for("❯ then while it loads, fixed")
        term.ready()
        term.wait_for("First answer.")
        term.send(" and after")
        term.wait_for("Second answer.")
    prompts = [user_texts(request.body)[-1] for request in server.requests]
    assert prompts == ["typed at once", "then while it loads, fixed and after"]


def test_a_usage_error_takes_the_first_frame_away(tmp_path: Path) -> None:
    """The prompt is drawn before the flags' values are checked: a mistake in them still
    reads as one line, with nothing of the UI left on the screen."""
    env = {k: v for k, v in os.environ.items() if k == "PYTHONPATH"}  # the tree under test
    with Terminal([*MODEL, "--setting-sources", "bogus"], cwd=tmp_path, env=env) as term:
        assert term.exit_status() == 2
        screen = term.screen()
    assert "codeloop: --setting-sources: bogus: use user, project, local" in screen
    assert "❯" not in screen and "starting" not in screen


def test_escape_twice_rewinds_the_files_and_the_conversation(tmp_path: Path) -> None:
    """Esc Esc on an empty input opens /rewind: a picker of the checkpoints, then what to
    restore; the Write and the shell command are both undone, and the next prompt goes on
    from the conversation as it was."""
    (tmp_path / "notes.txt").write_text("original\n")
    write = tool_use("Write", {"file_path": "new.txt", "content": "new\n"})
    scenario = Scenario(
        turns=(
            turn("Rewriting.", write),
            turn("And the notes.", tool_use("Bash", {"command": "rm notes.txt"})),
            turn("Done both."),
            turn("Fresh start."),
        )
    )
    args = [*MODEL, "--permission-mode", "bypassPermissions"]
    with ui(scenario, tmp_path, args) as (server, term):
        term.send("fix the notes")
        term.wait_for("Done both.")
        assert (tmp_path / "new.txt").exists() and not (tmp_path / "notes.txt").exists()
        term.keys("Escape")
        term.wait_for("Press Esc again to rewind")
        term.keys("Escape")
        screen = term.wait_for("Rewind to before which change?")
        (oldest,) = re.findall(r"(\d+)\. +1 .*before Write: new\.txt", screen)
        term.write(oldest)
        screen = term.wait_for("path(s) to set back")
        assert "1. Restore the code and the conversation" in screen
        term.write("1")
        screen = term.wait_for("To undo this rewind: /rewind")
        assert "Rewinding to checkpoint 1" in screen
        assert (tmp_path / "notes.txt").read_text() == "original\n"
        assert not (tmp_path / "new.txt").exists()
        term.send("what now?")
        term.wait_for("Fresh start.")
        sent = server.requests[-1].body
    said = json.dumps(sent["messages"])
    assert "fix the notes" in said and "what now?" in said
    assert "Rewriting." not in said and "Done both." not in said


def test_rewind_runs_headless_on_a_continued_session(tmp_path: Path) -> None:
    scenario = Scenario(turns=(turn(tool_use("Bash", {"command": "touch made.txt"})), turn("Ok.")))
    with FakeModelServer(scenario) as server:
        env = env_for(server, tmp_path)
        args = [*MODEL, "--permission-mode", "bypassPermissions"]
        made = run_cli(["-p", "make it", *args], cwd=tmp_path, env=env)
        assert made.returncode == 0, made.stderr
        assert (tmp_path / "made.txt").exists()
        picked = run_cli(["-p", "/rewind", *args, "--continue"], cwd=tmp_path, env=env)
        done = run_cli(["-p", "/rewind 1 files", *args, "--continue"], cwd=tmp_path, env=env)
    assert picked.returncode == 2 and "/rewind N" in picked.stderr
    assert done.returncode == 0, done.stderr
    assert "Rewinding to checkpoint 1" in done.stdout and "remove   made.txt" in done.stdout
    assert not (tmp_path / "made.txt").exists()


def test_a_project_mcp_server_is_asked_about_once_and_shown_by_mcp(tmp_path: Path) -> None:
    """The first session in a project whose .mcp.json brings servers asks about each before
    starting it; the answers are kept, so the next session asks nothing; /mcp lists the
    servers with their status and tools, and reconnects one."""
    started = tmp_path / "started"
    write_mcp_json(
        tmp_path,
        {
            "demo": python_server("--name", "demo", "--pid-file", str(started)),
            "shady": python_server("--name", "shady", "--pid-file", str(tmp_path / "shady")),
        },
    )
    with FakeModelServer(Scenario(turns=())) as server:
        env = env_for(server, tmp_path)
        with Terminal(MODEL, cwd=tmp_path, env=env) as term:
            screen = term.wait_for("you have not approved yet: demo")
            assert "1. Yes, use this server" in screen
            term.write("1")
            term.wait_for("you have not approved yet: shady")
            term.write("3")
            term.ready()
            term.send("/mcp")
            screen = term.wait_for("Reconnect one with /mcp reconnect")
            assert re.search(r"demo \(project\): ✓ connected \(\d+ tools\)", screen), screen
            assert "tools: echo, add" in screen and "shady" not in screen.split("MCP servers:")[1]
            pids = started.read_text().split()
            term.send("/mcp reconnect demo")
            term.wait_for("demo: ✓ connected")
            assert len(started.read_text().split()) == len(pids) + 1  # started again
            term.keys("C-d")
            assert term.exit_status() == 0
        saved = json.loads((tmp_path / ".codeloop" / "settings.local.json").read_text())
        assert saved["enabledMcpjsonServers"] == ["demo"]
        assert saved["disabledMcpjsonServers"] == ["shady"]
        assert not (tmp_path / "shady").exists()
        with Terminal(MODEL, cwd=tmp_path, env=env) as term:
            term.ready()
            assert "not approved yet" not in term.history()


def test_usage_shows_where_the_tokens_went_and_the_footer_the_cache_rate(tmp_path: Path) -> None:
    cached = UsageSpec(input_tokens=100, cache_read_input_tokens=300, output_tokens=20)
    # A result big enough for a whole token of the 400 the request reports, shared out in
    # proportion beside ~4,500 tokens of tool definitions.
    echo = "echo " + " ".join(["hi"] * 300)
    scenario = Scenario(
        turns=(
            turn("Listing.", tool_use("Bash", {"command": echo}), usage=cached),
            turn("Listed.", usage=cached),
        )
    )
    args = [*MODEL, "--allowedTools", "Bash(echo:*)"]
    with ui(scenario, tmp_path, args, height=50) as (_server, term):  # the report whole
        term.send("list")
        term.wait_for("Listed.")
        screen = term.wait_for("cache 75%")  # 600 of 800 prompt tokens read from the cache
        term.send("/usage")
        screen = term.wait_for("cache hit rate: 75%")
        assert "for 2 model requests" in screen
        assert re.search(r"claude-sonnet-4-5\s*│\s*2", screen), screen  # by model: 2 requests
        assert "Bash" in screen.split("cache hit rate")[1]  # by tool
        term.send("/usage nonsense")
        term.wait_for("/usage: /usage [turn|tool|subagent|model|file ...], not nonsense")


EXPANSION_HOOK = """\
import json, sys
data = json.load(sys.stdin)
with open("expansions.jsonl", "a") as log:
    log.write(json.dumps(data) + "\\n")
if "Eve" in data["command_args"]:
    print(json.dumps({"decision": "block", "reason": "no greetings for Eve"}))
else:
    print("Greeting day: Tuesday")
"""


def test_a_command_expansion_runs_the_user_prompt_expansion_hooks(tmp_path: Path) -> None:
    """A command that expands into a prompt goes through UserPromptExpansion hooks (matched
    by its name): one can refuse it, or add context the model reads; -p and the UI alike."""
    _greet_command(tmp_path)
    (tmp_path / "hook.py").write_text(EXPANSION_HOOK)
    hook = {"type": "command", "command": f"python3 {tmp_path / 'hook.py'}"}
    settings = {"hooks": {"UserPromptExpansion": [{"matcher": "greet", "hooks": [hook]}]}}
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(settings))
    scenario = Scenario(turns=(turn("Hello, Bob!"), turn("Hello, Ann!")))
    with FakeModelServer(scenario) as server:
        env = env_for(server, tmp_path)
        refused = run_cli(["-p", "/greet Eve", *MODEL], cwd=tmp_path, env=env)
        done = run_cli(["-p", "/greet Bob", *MODEL], cwd=tmp_path, env=env)
        sent = json.dumps(server.requests[-1].body["messages"])
        with Terminal(MODEL, cwd=tmp_path, env=env) as term:
            term.ready()
            term.send("/greet Eve")
            term.wait_for("refused it: no greetings for Eve")
            term.send("/greet Ann")
            term.wait_for("Hello, Ann!")
        requests = len(server.requests)
    assert refused.returncode != 0 and "no greetings for Eve" in refused.stderr
    assert done.returncode == 0, done.stderr
    assert "Say hello to Bob." in sent and "Greeting day: Tuesday" in sent
    assert requests == 2  # the refused ones never reached the model
    seen = [json.loads(line) for line in (tmp_path / "expansions.jsonl").read_text().splitlines()]
    assert [s["command_args"] for s in seen] == ["Eve", "Bob", "Eve", "Ann"]
    first = seen[1]
    assert first["hook_event_name"] == "UserPromptExpansion"
    assert first["expansion_type"] == "slash_command" and first["command_name"] == "greet"
    assert first["prompt"].startswith("Say hello to Bob.")


def test_a_message_typed_while_a_tool_runs_goes_with_its_result(tmp_path: Path) -> None:
    """Typed while the model works, it waits in the queue, then reaches the model inside the
    next tool results: no turn of its own, nothing interrupted."""
    scenario = Scenario(turns=(turn(tool_use("Bash", {"command": "echo built"})), turn("Both.")))
    with ui(scenario, tmp_path, [*MODEL, "--allowedTools", "Bash"]) as (server, term):
        held = server.hold(0)
        term.send("build it")
        server.wait_for_requests(1, timeout=60)
        term.send("and test it")
        term.wait_for("queued: and test it")  # taken while the answer is held
        held.set()
        term.wait_for("Both.")
        term.wait_until_gone("queued: and test it")
        assert "> and test it" in term.history()
        requests = server.requests
    assert len(requests) == 2
    reminder = "The user sent a new message while you were working:\nand test it"
    assert any(reminder in text for text in user_texts(requests[1].body))


def test_memory_opens_the_auto_memory_index_too(tmp_path: Path) -> None:
    """/memory offers the project's auto-memory index beside CLAUDE.md files; the editor
    opens it (creating the folder), and the next session's first request carries it."""
    from codeloop.store.data_paths import project_slug

    editor = 'sh -c \'echo "- the tests run with make check" >> "$0"\''
    index = tmp_path / "data" / "projects" / project_slug(tmp_path) / "memory" / "MEMORY.md"
    scenario = Scenario(turns=(turn("Noted."),))
    with ui(scenario, tmp_path, env={"EDITOR": editor, "VISUAL": ""}) as (_, term):
        term.send("/memory")
        screen = term.wait_for("Edit which memory file?")
        assert "3. auto memory (the model's notes): /" in screen
        term.keys("3")
        term.wait_for("Saved")
    assert index.read_text() == "- the tests run with make check\n"
    with FakeModelServer(scenario) as server:
        done = run_cli(
            ["-p", "what do you know?", *MODEL], cwd=tmp_path, env=env_for(server, tmp_path)
        )
        assert done.returncode == 0, done.stderr
        body = server.requests[0].body
    assert any("the tests run with make check" in t for t in user_texts(body))
