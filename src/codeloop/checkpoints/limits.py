"""What a snapshot stores, as the settings bound it: apart from the scanner, so that a session
holds its checkpoints' limits without loading what takes them."""

from __future__ import annotations

from codeloop.system.valueclass import valueclass


@valueclass
class Limits:
    """What a snapshot stores: bigger files, and files past the count, are skipped."""

    max_file_bytes: int = 16 * 1024 * 1024
    max_files: int = 200_000
