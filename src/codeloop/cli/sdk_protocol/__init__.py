"""codeloop as the Claude Agent SDKs' CLI: `--input-format stream-json --output-format
stream-json`, the flags the SDKs pass, and the control protocol on stdin and stdout
(../shared/design/SDK_PROTOCOL.md). serve.py runs the process; channel.py carries
codeloop's requests to the SDK; initialize.py folds the SDK's `initialize` into the options.
What this face shares with the Python API (each prompt as the SDK's messages, the SDK's
callbacks as codeloop's seams) is codeloop.protocol's.
"""

from __future__ import annotations

from codeloop.cli.sdk_protocol.serve import run_sdk

__all__ = ["run_sdk"]
