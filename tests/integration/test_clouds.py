"""Claude on Bedrock and Vertex against the fake server playing each endpoint: URLs, bodies,
SigV4 signatures (checked by re-signing with botocore), AWS's binary event-stream framing
(decoded by botocore too, as an oracle), and Google application-default credentials whose
token endpoint is the fake server. Nothing here reaches AWS or Google."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest

from codeloop.models.anthropic import AnthropicClient
from codeloop.models.assembler import MessageAssembler, collect
from codeloop.models.base import (
    ModelClient,
    ModelError,
    ModelRequest,
    Overloaded,
    PromptTooLong,
    RateLimited,
    StreamErrorEvent,
    ToolSpec,
    Transient,
)
from codeloop.models.bedrock import BedrockClient, bedrock_model_id
from codeloop.models.eventstream import EventStreamDecoder
from codeloop.models.vertex import VertexClient
from codeloop.testing.cloud_wire import ACCESS_TOKEN, bedrock_chunks, frame
from codeloop.testing.fake_server import FakeModelServer, _anthropic_event
from codeloop.testing.scenario import fault, render_turn, text, thinking, tool_use, turn
from codeloop.types import Message
from tests.e2e.cli import service_account

HELLO = (Message.user("hi"),)
TOOL = ToolSpec("Read", "Read a file.", {"type": "object"})
RICH = turn(
    thinking("Look first.", "sig-1"),
    text("Reading."),
    tool_use("Read", {"file_path": "a.py"}, id="toolu_a"),
    chunk_chars=4,
)
AWS = {
    "AWS_ACCESS_KEY_ID": "AKIDEXAMPLEFAKE",
    "AWS_SECRET_ACCESS_KEY": "fake-secret-key",
    "AWS_SESSION_TOKEN": "",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": "/nonexistent",
    "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
}


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in AWS.items():
        if value:
            monkeypatch.setenv(key, value)
        else:
            monkeypatch.delenv(key, raising=False)


@pytest.fixture
def adc(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """Application-default credentials whose token endpoint is the fake server's."""

    def point_at(server: FakeModelServer) -> None:
        path = service_account(tmp_path, server.url + "/token")
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
        monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))

    return point_at


async def _ours(client: ModelClient, request: ModelRequest) -> MessageAssembler:
    try:
        return await collect(client.stream(request))
    finally:
        await client.aclose()


def _anthropic(server: FakeModelServer) -> AnthropicClient:
    return AnthropicClient(base_url=server.anthropic_base_url, api_key="k")


# --- Bedrock --------------------------------------------------------------------------------


def test_our_event_stream_decoder_reads_what_botocore_reads() -> None:
    from botocore.eventstream import EventStreamBuffer

    events = render_turn(RICH, 0, model="m")
    wire = b"".join(bedrock_chunks(_anthropic_event(p.event)) for p in events)
    wire += frame({":message-type": "exception", ":exception-type": "throttlingException"}, b"{}")
    theirs = EventStreamBuffer()
    theirs.add_data(wire)
    expected = [(m.headers, m.payload) for m in theirs]
    ours = EventStreamDecoder("u")
    got = []
    for i in range(0, len(wire), 7):  # frames split anywhere across chunks
        got += [(f.headers, f.payload) for f in ours.feed(wire[i : i + 7])]
    assert got == expected and len(got) > 10 and not ours.pending


def test_a_corrupt_frame_is_a_broken_stream() -> None:
    data = bytearray(frame({":event-type": "chunk"}, b'{"bytes":"e30="}'))
    data[-6] ^= 0xFF
    with pytest.raises(Transient, match="corrupt"):
        EventStreamDecoder("u").feed(bytes(data))


@pytest.mark.usefixtures("aws")
@pytest.mark.parametrize("stream", [True, False])
async def test_bedrock_request_is_signed_and_answered_like_the_messages_api(
    stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import botocore.auth
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    request = ModelRequest(
        "claude-sonnet-4-5", HELLO, tools=(TOOL,), betas=("context-1m-2025-08-07",), stream=stream
    )
    with FakeModelServer([RICH, RICH]) as server:
        client = BedrockClient(region="us-east-1", base_url=server.url)
        got = await _ours(client, request)
        expected = await _ours(_anthropic(server), ModelRequest("m", HELLO))
        sent, url = server.requests[0], server.url

    assert got.blocks == expected.blocks and got.stop_reason == "tool_use"
    action = "invoke-with-response-stream" if stream else "invoke"
    assert sent.path == f"/model/anthropic.claude-sonnet-4-5/{action}"
    assert "model" not in sent.body and "stream" not in sent.body
    assert sent.body["anthropic_version"] == "bedrock-2023-05-31"
    assert sent.body["anthropic_beta"] == ["context-1m-2025-08-07"]
    # The signature is valid: botocore, signing the same request at the same time, agrees.
    check = AWSRequest(
        "POST",
        url + sent.path,
        data=json.dumps(sent.body).encode(),
        headers={k: v for k, v in sent.headers.items() if k in _signed(sent.headers) - {"host"}},
    )
    # Signed at the time the request was: botocore reads the clock through this function.
    when = datetime.datetime.strptime(sent.headers["x-amz-date"], "%Y%m%dT%H%M%SZ")
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: when)
    credentials = Credentials(AWS["AWS_ACCESS_KEY_ID"], AWS["AWS_SECRET_ACCESS_KEY"])
    SigV4Auth(credentials, "bedrock", "us-east-1").add_auth(check)
    authorization = sent.headers["authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLEFAKE/")
    assert "/us-east-1/bedrock/aws4_request, " in authorization
    assert sent.headers["authorization"] == check.headers["Authorization"]


def _signed(headers: dict[str, str]) -> set[str]:
    """The header names a SigV4 authorization header says it signed."""
    part = next(p for p in headers["authorization"].split(", ") if p.startswith("SignedHeaders="))
    return set(part.removeprefix("SignedHeaders=").split(";"))


async def test_bedrock_api_keys_are_bearer_tokens() -> None:
    with FakeModelServer([turn("ok")]) as server:
        client = BedrockClient(region="eu-west-1", base_url=server.url, bearer_token="bedrock-key")
        await _ours(client, ModelRequest("us.anthropic.claude-haiku-4-5-20251001-v1:0", HELLO))
        (sent,) = server.requests
    assert sent.headers["authorization"] == "Bearer bedrock-key"
    assert (
        sent.path
        == "/model/us.anthropic.claude-haiku-4-5-20251001-v1%3A0/invoke-with-response-stream"
    )


def test_bedrock_model_ids() -> None:
    assert bedrock_model_id("claude-sonnet-5-5") == "anthropic.claude-sonnet-5-5"
    assert (
        bedrock_model_id("global.anthropic.claude-opus-5-5") == "global.anthropic.claude-opus-5-5"
    )
    arn = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc"
    assert bedrock_model_id(arn) == arn


@pytest.mark.usefixtures("aws")
@pytest.mark.parametrize(
    ("kind", "fields", "expected"),
    [
        ("sse_error", {"after": 3}, Overloaded),
        ("sse_error", {"after": 3, "error_type": "api_error"}, StreamErrorEvent),
        ("rate_limited", {"retry_after": 2}, RateLimited),
        ("prompt_too_long", {"actual": 1_200_000, "limit": 1_000_000}, PromptTooLong),
        ("cut", {"after": 3}, Transient),
    ],
)
async def test_bedrock_failures_map_to_the_taxonomy(
    kind: Any, fields: dict[str, Any], expected: type[ModelError]
) -> None:
    scenario = [turn("never seen", faults=[fault(kind, **fields)], chunk_chars=2)]
    with FakeModelServer(scenario) as server, pytest.raises(ModelError) as caught:
        await _ours(
            BedrockClient(region="us-east-1", base_url=server.url), ModelRequest("m", HELLO)
        )
    assert type(caught.value) is expected, caught.value


# --- Vertex ---------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
async def test_vertex_request_carries_an_adc_token_and_the_model_in_the_url(
    adc: Any, stream: bool
) -> None:
    with FakeModelServer([RICH, RICH]) as server:
        adc(server)
        client = VertexClient(region="us-east5", project="my-project", base_url=server.url)
        got = await _ours(client, ModelRequest("claude-opus-5-5", HELLO, stream=stream))
        expected = await _ours(_anthropic(server), ModelRequest("m", HELLO))
        token, sent = server.requests[0], server.requests[1]

    assert got.blocks == expected.blocks
    assert token.path == "/token" and sent.headers["authorization"] == f"Bearer {ACCESS_TOKEN}"
    action = "streamRawPredict" if stream else "rawPredict"
    assert sent.path == (
        f"/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/"
        f"claude-opus-5-5:{action}"
    )
    assert "model" not in sent.body and sent.body["anthropic_version"] == "vertex-2023-10-16"
    assert sent.body.get("stream", False) is stream


async def test_vertex_reuses_its_token_until_it_expires(adc: Any) -> None:
    with FakeModelServer([turn("one"), turn("two")]) as server:
        adc(server)
        client = VertexClient(region="global", project="p", base_url=server.url)
        try:
            for _ in range(2):
                await collect(client.stream(ModelRequest("claude-haiku-5-5", HELLO)))
        finally:
            await client.aclose()
        paths = [r.path.split(":")[0].rsplit("/", 1)[-1] for r in server.requests]
    assert paths == ["token", "claude-haiku-5-5", "claude-haiku-5-5"]


def test_the_cloud_libraries_load_only_when_a_cloud_is_configured() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from codeloop.models.factory import resolve_model\n"
        "resolve_model('sonnet', {'ANTHROPIC_API_KEY': 'k'})\n"
        "resolve_model('sonnet', {'CLAUDE_CODE_USE_BEDROCK': '1', 'AWS_REGION': 'us-east-1'})\n"
        "resolve_model('sonnet', {'CLAUDE_CODE_USE_VERTEX': '1',"
        " 'ANTHROPIC_VERTEX_PROJECT_ID': 'p'})\n"
        "assert not any(m.startswith(('botocore', 'google')) for m in sys.modules), 'eager'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
