"""The fake server's Bedrock and Vertex shapes: their URLs (the model is in the path), AWS's
binary event-stream framing of the Messages API events, and a Google OAuth token endpoint for
application-default credentials whose `token_uri` points at the fake server.
"""

from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from urllib.parse import unquote

TOKEN_PATH = "/token"
ACCESS_TOKEN = "ya29.fake-access-token"
_BEDROCK = re.compile(r"/model/(?P<model>[^/]+)/(?P<action>invoke-with-response-stream|invoke)")
_VERTEX = re.compile(
    r"/v1/projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/publishers/anthropic/models/"
    r"(?P<model>[^:/]+):(?P<action>streamRawPredict|rawPredict)"
)


def cloud_route(path: str) -> tuple[str, str, bool] | None:
    """(cloud, model, streams) for a Bedrock or Vertex path, else None."""
    if match := _BEDROCK.fullmatch(path):
        return "bedrock", unquote(match["model"]), match["action"] != "invoke"
    if match := _VERTEX.fullmatch(path):
        return "vertex", unquote(match["model"]), match["action"] == "streamRawPredict"
    return None


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream frame with string headers, CRCs included."""
    raw_headers = b"".join(
        bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(value.encode()))
        + value.encode()
        for name, value in headers.items()
    )  # fmt: skip
    total = 16 + len(raw_headers) + len(payload)
    prelude = struct.pack(">II", total, len(raw_headers))
    head = prelude + struct.pack(">I", zlib.crc32(prelude)) + raw_headers + payload
    return head + struct.pack(">I", zlib.crc32(head))


def bedrock_chunks(sse: bytes) -> bytes:
    """Messages API SSE events as Bedrock's chunk frames (pings are not sent there)."""
    out = b""
    for block in sse.split(b"\n\n"):
        data = next((line[6:] for line in block.split(b"\n") if line.startswith(b"data: ")), None)
        if data is None or json.loads(data).get("type") == "ping":
            continue
        payload = json.dumps({"bytes": base64.b64encode(data).decode()}).encode()
        headers = {
            ":event-type": "chunk",
            ":content-type": "application/json",
            ":message-type": "event",
        }
        out += frame(headers, payload)
    return out


def bedrock_exception(name: str, message: str) -> bytes:
    headers = {
        ":exception-type": name,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return frame(headers, json.dumps({"message": message}).encode())


def token_response() -> bytes:
    body = {"access_token": ACCESS_TOKEN, "expires_in": 3600, "token_type": "Bearer"}
    return json.dumps(body).encode()
