"""`codeloop acp`'s standard streams as editors and registries use them: nothing but ACP on
stdout, a line of garbage survived, a clean exit when stdin closes (or was never there), and
stdout redirected to a file (which the SDK's own stdio refuses)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.needs import module

module("acp", "needs the acp extra (pip install -e '.[dev,acp]')")

from tests.acp_agent.editor import ACP, acp_env  # noqa: E402


def request(id: int, method: str, params: dict[str, object]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\n"


def run_acp(tmp_path: Path, *args: str, **streams: Any) -> subprocess.CompletedProcess[str]:
    """`codeloop acp ARGS` to its end; `streams`: stdin (or input=...) and stdout as given,
    else captured."""
    streams.setdefault("stdout", subprocess.PIPE)
    if "input" not in streams:
        streams.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run(
        [*ACP, *args],
        stderr=subprocess.PIPE,
        text=True,
        env=acp_env(None, tmp_path),
        cwd=tmp_path,
        timeout=120,
        **streams,
    )


def test_stdout_carries_only_answers_and_eof_ends_the_process(tmp_path: Path) -> None:
    lines = [
        "this is not json\n",
        request(1, "initialize", {"protocolVersion": 1}),
        request(2, "no/such/method", {}),
    ]
    done = run_acp(tmp_path, input="".join(lines))
    assert done.returncode == 0, done.stderr
    messages = [json.loads(line) for line in done.stdout.splitlines()]
    assert all(m["jsonrpc"] == "2.0" for m in messages)
    answers = {m["id"]: m for m in messages if "id" in m}
    assert answers[1]["result"]["protocolVersion"] == 1
    assert answers[2]["error"]["code"] == -32601
    assert "Error parsing JSON-RPC message" in done.stderr
    assert "Traceback" not in done.stderr


def test_no_stdin_is_a_clean_exit(tmp_path: Path) -> None:
    """The ACP registry's check starts the agent with stdin from /dev/null."""
    done = run_acp(tmp_path)
    assert (done.returncode, done.stdout) == (0, "")


def test_stdout_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    with out.open("w") as sink:
        done = run_acp(
            tmp_path, input=request(1, "initialize", {"protocolVersion": 1}), stdout=sink
        )
    assert done.returncode == 0, done.stderr
    (answer,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert answer["result"]["protocolVersion"] == 1


def test_a_prompt_argument_is_refused(tmp_path: Path) -> None:
    done = run_acp(tmp_path, "do something")
    assert done.returncode == 2 and done.stdout == ""
    assert "codeloop acp takes flags only" in done.stderr
