"""The window a GGUF file was trained with, read from its header: files written here in the
format's own layout (gguf.h), and the bundled model when it is installed."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from codeloop.models.gguf_header import gguf_context_length
from tests import needs


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def _pair(key: str, kind: int, value: bytes) -> bytes:
    return _string(key) + struct.pack("<I", kind) + value


def write_gguf(path: Path, pairs: list[bytes], *, version: int = 3) -> Path:
    header = b"GGUF" + struct.pack("<I", version) + struct.pack("<QQ", 0, len(pairs))
    path.write_bytes(header + b"".join(pairs))
    return path


STRING, UINT32, UINT64, ARRAY, FLOAT32 = 8, 4, 10, 9, 6
VOCAB = struct.pack("<IQ", STRING, 3) + b"".join(_string(t) for t in ("<s>", "a", "b"))
SCORES = struct.pack("<IQ", FLOAT32, 3) + struct.pack("<3f", 0.0, -1.0, -2.0)


def test_the_architectures_context_length(tmp_path: Path) -> None:
    path = write_gguf(
        tmp_path / "m.gguf",
        [
            _pair("general.name", STRING, _string("tiny")),
            _pair("tokenizer.ggml.tokens", ARRAY, VOCAB),  # skipped, however it is laid out
            _pair("tokenizer.ggml.scores", ARRAY, SCORES),
            # Another family's key is not this model's window.
            _pair("llama.context_length", UINT32, struct.pack("<I", 4_096)),
            _pair("general.architecture", STRING, _string("qwen2")),
            _pair("qwen2.context_length", UINT64, struct.pack("<Q", 32_768)),
        ],
    )
    assert gguf_context_length(path) == 32_768


@pytest.mark.parametrize(
    "content",
    [b"", b"not a gguf file at all", b"GGUF" + struct.pack("<I", 1) + b"\0" * 16],
    ids=["empty", "other", "version-1"],
)
def test_not_a_readable_gguf_says_nothing(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "x.gguf").write_bytes(content)
    assert gguf_context_length(tmp_path / "x.gguf") is None


def test_a_header_cut_short_or_silent_says_nothing(tmp_path: Path) -> None:
    pairs = [_pair("general.architecture", STRING, _string("llama"))]
    silent = write_gguf(tmp_path / "silent.gguf", pairs)
    assert gguf_context_length(silent) is None
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(silent.read_bytes()[:-3])
    assert gguf_context_length(cut) is None
    assert gguf_context_length(tmp_path / "missing.gguf") is None


def test_the_bundled_model() -> None:
    gguf = needs.local_model()
    assert gguf_context_length(gguf) == 8_192  # SmolLM2-135M's trained window
