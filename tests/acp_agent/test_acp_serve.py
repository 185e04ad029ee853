"""`codeloop serve` as users and programs meet it: a real server process (`--port 0`, its
first stdout line read) against the fake model server, spoken to with the official SDK's
WebSocket client and plain HTTP. Every refusal of the contract, each form of the token, a
prompt with tools to end_turn, permissions, cancel, two clients on one session, a reconnect,
and a stalled client that must not hold up another."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

from tests.needs import module

module("acp", "needs the acp extra (pip install -e '.[dev,acp]')")
module("uvicorn", "needs the serve extra (pip install -e '.[dev,serve]')")

import acp  # noqa: E402
import httpx  # noqa: E402
import websockets  # noqa: E402
from acp import RequestError  # noqa: E402
from acp.client.connection import ClientSideConnection  # noqa: E402
from acp.http.client import create_http_stream  # noqa: E402
from acp.interfaces import Client  # noqa: E402
from acp.ws.client import create_websocket_stream  # noqa: E402

from codeloop.testing.fake_server import FakeModelServer  # noqa: E402
from codeloop.testing.scenario import text, tool_use, turn  # noqa: E402
from tests.acp_agent.editor import Editor, acp_env  # noqa: E402

SERVE = [sys.executable, "-m", "codeloop", "serve"]
FIRST_LINE = re.compile(r"codeloop serve: http://127\.0\.0\.1:(\d+)/\?token=(\S+)\n")
TIMEOUT = 120.0  # generous: only a failure waits this long, and CI is a shared machine


@dataclass
class Served:
    port: int
    token: str
    process: asyncio.subprocess.Process
    stderr: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ws(self, query: str = "") -> str:
        return f"ws://127.0.0.1:{self.port}/acp{query}"


@asynccontextmanager
async def serve(env: dict[str, str], cwd: Path, *flags: str) -> AsyncIterator[Served]:
    """A real `codeloop serve --port 0`, known by its first stdout line; stopped by SIGTERM."""
    stderr = cwd.parent / "serve.stderr"
    with stderr.open("wb") as sink:
        process = await asyncio.create_subprocess_exec(
            *SERVE, "--port", "0", *flags, env=env, cwd=cwd,
            stdout=asyncio.subprocess.PIPE, stderr=sink, start_new_session=True,
        )  # fmt: skip
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), TIMEOUT)).decode()
        found = FIRST_LINE.fullmatch(line)
        assert found, (line, stderr.read_text())
        yield Served(int(found[1]), found[2], process, stderr)
    finally:
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGTERM)
        await asyncio.wait_for(process.wait(), TIMEOUT)


@asynccontextmanager
async def client(
    editor: Any, url: str, headers: dict[str, str] | None = None
) -> AsyncIterator[ClientSideConnection]:
    """The SDK's client side over the SDK's WebSocket transport, initialized."""
    transport = await create_websocket_stream(url, headers=headers)
    conn = acp.connect_to_agent(cast(Client, editor), transport)
    try:
        await asyncio.wait_for(conn.initialize(protocol_version=1), TIMEOUT)
        yield conn
    finally:
        await conn.close()


async def prompt(conn: ClientSideConnection, session_id: str, words: str) -> Any:
    return await asyncio.wait_for(
        conn.prompt(session_id=session_id, prompt=[acp.text_block(words)]), TIMEOUT
    )


def bearer(served: Served) -> dict[str, str]:
    return {"Authorization": f"Bearer {served.token}"}


def project(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


async def handshake_status(
    url: str, headers: dict[str, str] | None = None, port: int | None = None
) -> int:
    """The HTTP status a WebSocket handshake gets (101: accepted); `port`: connect to
    127.0.0.1:port whatever host the URL names (its Host header)."""
    sock = None
    if port is not None:
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setblocking(False)
    try:
        async with websockets.connect(url, additional_headers=headers, sock=sock):
            return 101
    except websockets.InvalidStatus as refused:
        return refused.response.status_code


async def test_without_the_token_everything_is_refused_and_each_form_is_accepted(
    tmp_path: Path, home: Path
) -> None:
    work = project(tmp_path)
    async with serve(acp_env(None, home), work) as served:
        async with httpx.AsyncClient(base_url=served.base, timeout=TIMEOUT) as http:
            for path in ("/", "/index.html", "/acp"):
                assert (await http.get(path)).status_code == 401, path
                wrong = {"Authorization": "Bearer not-the-token"}
                assert (await http.get(path, headers=wrong)).status_code == 401, path
            assert (await http.get("/", headers=bearer(served))).status_code == 200
            visit = await http.get("/", params={"token": served.token})
            assert visit.status_code == 200
            cookie = visit.headers["set-cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
            assert served.token not in visit.headers.get("location", "")
            # The cookie alone opens the static files (the client kept it from the visit).
            assert (await http.get("/index.html")).status_code == 200
        assert await handshake_status(served.ws()) == 401
        assert await handshake_status(served.ws("?token=wrong")) == 401
        assert await handshake_status(served.ws(f"?token={served.token}")) == 101
        assert await handshake_status(served.ws(), bearer(served)) == 101
        own = {"Origin": served.base, **bearer(served)}
        assert await handshake_status(served.ws(), own) == 101
        foreign = {"Origin": "http://evil.example", **bearer(served)}
        assert await handshake_status(served.ws(), foreign) == 403
        cookie_only = {"Cookie": f"codeloop_token_{served.port}={served.token}"}
        assert await handshake_status(served.ws(), cookie_only) == 101
    assert served.token not in served.stderr.read_text()


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1.nip.io", "127.0.0.1:1"])
async def test_a_foreign_host_is_refused(tmp_path: Path, home: Path, host: str) -> None:
    """DNS rebinding: a page of another name that resolves to 127.0.0.1."""
    work = project(tmp_path)
    async with serve(acp_env(None, home), work) as served:
        named = host if ":" in host else f"{host}:{served.port}"
        async with httpx.AsyncClient(base_url=served.base, timeout=TIMEOUT) as http:
            answer = await http.get("/", headers={"Host": named, **bearer(served)})
            assert answer.status_code in (403, 421)
        status = await handshake_status(f"ws://{named}/acp", bearer(served), served.port)
        assert status in (403, 421)
        for own in (f"localhost:{served.port}", f"127.0.0.1:{served.port}"):
            async with httpx.AsyncClient(base_url=served.base, timeout=TIMEOUT) as http:
                answer = await http.get("/", headers={"Host": own, **bearer(served)})
            assert answer.status_code == 200, own


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def nothing_listens_on(port: int) -> Iterator[None]:
    yield
    with socket.socket() as probe, pytest.raises(ConnectionRefusedError):
        probe.connect(("127.0.0.1", port))


async def test_a_program_learns_the_served_folder(tmp_path: Path, home: Path) -> None:
    """A client without Origin (a program) is served with the token; initialize names the
    folder sessions live in, which a page cannot know otherwise."""
    work = project(tmp_path)
    async with (
        serve(acp_env(None, home), work) as served,
        websockets.connect(served.ws(f"?token={served.token}")) as ws,
    ):
        params = {"protocolVersion": 1}
        await ws.send(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        )
        answer = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
    assert answer["result"]["_meta"] == {"cwd": str(work)}
    assert answer["result"]["agentCapabilities"]["sessionCapabilities"]["list"] == {}


def test_a_port_in_use_is_a_clear_error(tmp_path: Path, home: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [*SERVE, "--port", str(port)],
            capture_output=True, text=True, env=acp_env(None, home), cwd=tmp_path, timeout=TIMEOUT,
        )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_a_non_loopback_host_without_a_token_binds_nothing(
    tmp_path: Path, home: Path, host: str
) -> None:
    port = free_port()
    with nothing_listens_on(port):
        done = subprocess.run(
            [*SERVE, "--host", host, "--port", str(port)],
            capture_output=True, text=True, env=acp_env(None, home), cwd=tmp_path, timeout=TIMEOUT,
        )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert "--token" in done.stderr and "CODELOOP_SERVER_TOKEN" in done.stderr
    assert "Traceback" not in done.stderr


def test_help_answers_the_questions(tmp_path: Path, home: Path) -> None:
    done = subprocess.run(
        [*SERVE, "--help"], capture_output=True, text=True, env=acp_env(None, home), timeout=TIMEOUT
    )
    assert done.returncode == 0
    for named in ("--host", "--port", "--token", "CODELOOP_SERVER_TOKEN", "/acp", "Bearer"):
        assert named in done.stdout


async def test_the_token_can_be_chosen(tmp_path: Path, home: Path) -> None:
    work = project(tmp_path)
    env = acp_env(None, home, CODELOOP_SERVER_TOKEN="from-the-environment")
    async with serve(env, work) as served:
        assert served.token == "from-the-environment"
    async with serve(env, work, "--token", "from-the-flag") as served:
        assert served.token == "from-the-flag"


async def test_a_prompt_with_a_read_runs_to_end_turn(tmp_path: Path, home: Path) -> None:
    work = project(tmp_path)
    (work / "notes.txt").write_text("the secret is 42\n")
    script = [
        turn(tool_use("Read", {"file_path": str(work / "notes.txt")})),
        turn("The secret is 42."),
    ]
    editor = Editor()
    with FakeModelServer(script) as model:
        async with (
            serve(acp_env(model, home), work) as served,
            client(editor, served.ws(f"?token={served.token}")) as conn,
        ):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            answer = await prompt(conn, new.session_id, "Read it.")
    assert answer.stop_reason == "end_turn"
    assert editor.text() == "The secret is 42."
    (read,) = editor.calls().values()
    assert read[-1][1].status == "completed"
    assert "the secret is 42" in json.dumps(model.requests[1].body)
    assert editor.asks() == []


async def test_the_sdks_streamable_http_at_the_same_path(tmp_path: Path, home: Path) -> None:
    work = project(tmp_path)
    editor = Editor()
    with FakeModelServer([turn("Over HTTP.")]) as model:
        async with serve(acp_env(model, home), work) as served:
            transport = create_http_stream(f"{served.base}/acp", headers=bearer(served))
            conn = acp.connect_to_agent(cast(Client, editor), transport)
            try:
                await asyncio.wait_for(conn.initialize(protocol_version=1), TIMEOUT)
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
                answer = await prompt(conn, new.session_id, "Hello.")
            finally:
                await conn.close()
            refused = create_http_stream(f"{served.base}/acp")
            with pytest.raises(Exception, match="401"):
                await refused.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                    "params": {"protocolVersion": 1}})  # fmt: skip
            await refused.close()
    assert answer.stop_reason == "end_turn"
    assert editor.text() == "Over HTTP."


def test_web_opens_the_browser_with_the_url(tmp_path: Path, home: Path) -> None:
    """`codeloop web` prints the same first line and opens that URL ($BROWSER here: a
    stand-in that hands the URL to the test through a pipe)."""
    work = project(tmp_path)
    pipe = tmp_path / "opened"
    os.mkfifo(pipe)
    hand_over = f"import sys; open({str(pipe)!r}, 'w').write(sys.argv[1])"
    env = acp_env(None, home, BROWSER=f"{sys.executable} -c {shlex.quote(hand_over)} %s")
    web = subprocess.Popen(
        [*SERVE[:-1], "web", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=work,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert web.stdout is not None
        found = FIRST_LINE.fullmatch(web.stdout.readline())
        assert found
        with pipe.open() as opened:  # blocks until the stand-in browser writes
            url = opened.read()
        assert url == f"http://127.0.0.1:{found[1]}/?token={found[2]}"
    finally:
        os.killpg(web.pid, signal.SIGTERM)
        web.wait(TIMEOUT)


async def test_an_edit_asks_and_the_answer_applies(tmp_path: Path, home: Path) -> None:
    work = project(tmp_path)
    target = work / "a.txt"
    target.write_text("old\n")
    script = [
        turn(tool_use("Read", {"file_path": str(target)})),
        turn(
            tool_use("Edit", {"file_path": str(target), "old_string": "old", "new_string": "new"})
        ),
        turn("Edited."),
    ]
    editor = Editor()
    with FakeModelServer(script) as model:
        async with (
            serve(acp_env(model, home), work) as served,
            client(editor, served.ws(), bearer(served)) as conn,
        ):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            answer = await prompt(conn, new.session_id, "Edit.")
    assert answer.stop_reason == "end_turn"
    assert target.read_text() == "new\n"
    ((asked, options),) = editor.asks()
    assert asked.kind == "edit" and {o.kind for o in options} >= {"allow_once", "reject_once"}
    assert any(c.type == "diff" for c in asked.content or [])


async def test_cancel_stops_a_slow_answer(tmp_path: Path, home: Path) -> None:
    work = project(tmp_path)
    script = [turn(text("Starting", delay_after=120), text(" and never finishing.")), turn("?")]
    editor = Editor()
    with FakeModelServer(script) as model:
        async with (
            serve(acp_env(model, home), work) as served,
            client(editor, served.ws(), bearer(served)) as conn,
        ):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            running = asyncio.ensure_future(
                conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Go.")])
            )
            await asyncio.wait_for(editor.wait_for("agent_message_chunk"), TIMEOUT)
            await conn.cancel(session_id=new.session_id)
            answer = await asyncio.wait_for(running, TIMEOUT)
    assert answer.stop_reason == "cancelled"
    assert "never finishing" not in editor.text()


class Waiting(Editor):
    """A client that never answers a permission request (another one does)."""

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        self.log.append(("ask", kwargs.get("tool_call"), kwargs.get("options")))
        self.updated.set()
        await asyncio.Event().wait()


async def until(editor: Editor, holds: Callable[[], bool]) -> None:
    while not holds():
        editor.updated.clear()
        await editor.updated.wait()


async def asked(editor: Editor) -> None:
    await until(editor, lambda: bool(editor.asks()))


async def test_two_clients_on_one_session_see_one_stream(tmp_path: Path, home: Path) -> None:
    """B joins A's session: both see the same updates; a permission request goes to both,
    B's answer wins, and A sees the call go on."""
    work = project(tmp_path)
    target = work / "new.txt"
    script = [
        turn("First answer."),
        turn(tool_use("Write", {"file_path": str(target), "content": "written"})),
        turn("Second answer."),
    ]
    first, second = Waiting(), Editor()
    with FakeModelServer(script) as model:
        async with (
            serve(acp_env(model, home), work) as served,
            client(first, served.ws(), bearer(served)) as a,
            client(second, served.ws(), bearer(served)) as b,
        ):
            new = await a.new_session(cwd=str(work), mcp_servers=[])
            sid = new.session_id
            await prompt(a, sid, "One.")
            await b.load_session(cwd=str(work), session_id=sid, mcp_servers=[])
            replayed = len(second.log)
            first.log.clear()
            answer = await prompt(a, sid, "Two.")
            await asyncio.wait_for(asked(first), TIMEOUT)
    assert answer.stop_reason == "end_turn"
    assert target.read_text() == "written"
    assert len(first.asks()) == 1 and len(second.asks()) == 1

    def seen(log: list[tuple[Any, ...]]) -> list[str]:
        return [json.dumps(e[1].model_dump(mode="json")) for e in log if e[0] == "update"]

    live = [u for u in seen(second.log[replayed:]) if "available_commands" not in u]
    asked_by_a = json.dumps(acp.update_user_message_text("Two.").model_dump(mode="json"))
    assert live == [asked_by_a, *(u for u in seen(first.log) if "available_commands" not in u)]
    assert "Second answer." in "".join(live)
    (call,) = first.calls().values()
    assert call[-1][1].status == "completed"  # A saw the call B allowed run


async def test_two_prompts_at_once_one_runs(tmp_path: Path, home: Path) -> None:
    """Two clients prompt one session at the same moment: one turn runs, the other prompt is
    refused, and only the prompt that runs is shown to the other client."""
    work = project(tmp_path)
    first, second = Editor(), Editor()
    with FakeModelServer([turn("Only one.")]) as model:
        async with (
            serve(acp_env(model, home), work) as served,
            client(first, served.ws(), bearer(served)) as a,
            client(second, served.ws(), bearer(served)) as b,
        ):
            sid = (await a.new_session(cwd=str(work), mcp_servers=[])).session_id
            await b.load_session(cwd=str(work), session_id=sid, mcp_servers=[])
            answers = await asyncio.gather(
                prompt(a, sid, "From A."), prompt(b, sid, "From B."), return_exceptions=True
            )
    refused = [x for x in answers if isinstance(x, RequestError)]
    ran = [x for x in answers if not isinstance(x, BaseException)]
    assert len(refused) == 1 and "already running" in str(refused[0].data)
    assert [r.stop_reason for r in ran] == ["end_turn"]
    shown = [*first.updates("user_message_chunk"), *second.updates("user_message_chunk")]
    winner = "From A." if answers[0] is ran[0] else "From B."
    assert [u.content.text for u in shown] == [winner]
    assert first.text() == second.text() == "Only one."


async def test_a_reconnect_gets_the_transcript_once(tmp_path: Path, home: Path) -> None:
    """A client drops after a turn; a new connection loads the session: every message the
    transcript holds arrives once, and the session goes on."""
    work = project(tmp_path)
    script = [turn("First answer."), turn("Second answer.")]
    before, after = Editor(), Editor()
    with FakeModelServer(script) as model:
        async with (
            serve(acp_env(model, home), work) as served,
            client(before, served.ws(), bearer(served)) as conn,
        ):
            sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
            await prompt(conn, sid, "One.")
            async with client(after, served.ws(), bearer(served)) as conn:
                await conn.load_session(cwd=str(work), session_id=sid, mcp_servers=[])
                replay = list(after.log)
                answer = await prompt(conn, sid, "Two.")
    assert answer.stop_reason == "end_turn"
    users = [u.content.text for kind, u in replay if u.session_update == "user_message_chunk"]
    assert users == ["One."]
    said = "".join(
        u.content.text for kind, u in replay if u.session_update == "agent_message_chunk"
    )
    assert said == "First answer."
    assert after.text() == "First answer.Second answer."


async def test_a_client_that_joins_mid_turn_misses_nothing(tmp_path: Path, home: Path) -> None:
    """B loads the session while A's answer is still streaming (not yet in the transcript):
    B gets the prompt and the part already sent once, then the rest live; the turn A started
    outlives A's connection and B's answer to its permission request lets it finish."""
    work = project(tmp_path)
    target = work / "later.txt"
    script = [
        turn(text("Part one. "), tool_use("Write", {"file_path": str(target), "content": "x"})),
        turn("Part two."),
    ]
    first, second = Waiting(), Editor()
    with FakeModelServer(script) as model:
        async with serve(acp_env(model, home), work) as served:
            async with client(first, served.ws(), bearer(served)) as a:
                sid = (await a.new_session(cwd=str(work), mcp_servers=[])).session_id
                running = asyncio.ensure_future(prompt(a, sid, "Go."))
                await asyncio.wait_for(asked(first), TIMEOUT)  # the turn waits for an answer
            running.cancel()  # A's connection is gone: its answer will never come
            async with client(second, served.ws(), bearer(served)) as b:
                await b.load_session(cwd=str(work), session_id=sid, mcp_servers=[])
                await asyncio.wait_for(until(second, lambda: "Part two." in second.text()), TIMEOUT)
    assert target.read_text() == "x"
    users = [u.content.text for u in second.updates("user_message_chunk")]
    assert users == ["Go."]
    assert second.text() == "Part one. Part two."
    assert len(second.asks()) == 1


async def test_session_list_names_the_projects_sessions(tmp_path: Path, home: Path) -> None:
    work = project(tmp_path)
    with FakeModelServer([turn("Hi.")]) as model:
        async with (
            serve(acp_env(model, home), work) as served,
            client(Editor(), served.ws(), bearer(served)) as conn,
        ):
            sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
            await prompt(conn, sid, "Hello there.")
            listed = await conn.list_sessions(cwd=str(work))
            with pytest.raises(RequestError) as elsewhere:
                await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
    assert str(work) in str(elsewhere.value.data)
    (only,) = listed.sessions
    assert (only.session_id, only.cwd, only.title) == (sid, str(work), "Hello there.")


async def test_a_stalled_client_does_not_hold_up_another(tmp_path: Path, home: Path) -> None:
    """One client stops reading mid-session; the other still gets the whole answer, and the
    stalled one is dropped with a reason."""
    work = project(tmp_path)
    # 11 MB in 2,800 updates: more than the kernel's socket buffers (4 MB at most, ~1,000 of
    # these updates) and the server's queue (1,024 updates) hold for a client reading nothing.
    long_answer = "".join(f"{i:07d} " * 500 for i in range(2800))
    script = [turn("Ready."), turn(long_answer, chunk_chars=4000)]
    reader = Editor()
    with FakeModelServer(script) as model:
        async with (
            serve(acp_env(model, home), work) as served,
            client(reader, served.ws(), bearer(served)) as conn,
        ):
            sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
            await prompt(conn, sid, "Ready?")
            async with stalled_client(served, work, sid) as stalled:
                reader.log.clear()
                answer = await prompt(conn, sid, "Talk.")
                assert answer.stop_reason == "end_turn"
                assert reader.text() == long_answer
                closed = await asyncio.wait_for(stalled.wait_closed_reading(), TIMEOUT)
    assert closed.code == 1013 and "behind" in closed.reason
    assert "a client dropped" in served.stderr.read_text()


class Stalled:
    def __init__(self, connection: Any) -> None:
        self.connection = connection

    async def wait_closed_reading(self) -> Any:
        """Reads again, to the close frame the server sent when it gave up."""
        with pytest.raises(websockets.ConnectionClosed) as closed:
            while True:
                await self.connection.recv()
        return closed.value.rcvd


@asynccontextmanager
async def stalled_client(served: Served, work: Path, sid: str) -> AsyncIterator[Stalled]:
    """Joins the session over a raw WebSocket, then reads nothing (a small receive buffer,
    the client library's own buffering off, and no compression, which would shrink the
    repetitive answer a hundredfold)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", served.port))
    sock.setblocking(False)
    async with websockets.connect(
        served.ws(), sock=sock, additional_headers=bearer(served), max_queue=1, compression=None
    ) as ws:
        calls = [
            ("initialize", {"protocolVersion": 1}),
            ("session/load", {"cwd": str(work), "sessionId": sid, "mcpServers": []}),
        ]
        for number, (method, params) in enumerate(calls):
            await ws.send(
                json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
            )
            while json.loads(await ws.recv()).get("id") != number:
                pass
        yield Stalled(ws)
