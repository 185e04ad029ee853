"""codeloop as the Claude Agent SDKs' CLI: `--input-format stream-json --output-format
stream-json`, the flags the SDKs pass, and the control protocol on stdin and stdout
(../shared/design/SDK_PROTOCOL.md). serve.py runs the process; channel.py carries
codeloop's requests to the SDK; callbacks.py turns the SDK's callbacks into the policy's and
the hooks' seams; turns.py runs each prompt and renders it (shared with api.py).
"""

from __future__ import annotations

from codeloop.cli.sdk_protocol.serve import run_sdk

__all__ = ["run_sdk"]
