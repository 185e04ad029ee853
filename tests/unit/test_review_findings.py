"""The findings' shape: the schema the StructuredOutput tool checks, paths made
repository-relative, and the text people read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest

from codeloop.review.findings import SCHEMA, Review, as_text, relative

FINDING: dict[str, Any] = {
    "path": "a.py",
    "line": 3,
    "severity": "medium",
    "title": "T",
    "body": "B\nmore",
}
GOOD: dict[str, Any] = {"summary": "One bug.", "findings": [FINDING]}


def test_the_schema_takes_the_contract_shape_and_nothing_else() -> None:
    jsonschema.validate(GOOD, SCHEMA)
    bad_severity = {**GOOD, "findings": [{**FINDING, "severity": "critical"}]}
    line_zero = {**GOOD, "findings": [{**FINDING, "line": 0}]}
    for wrong in (bad_severity, line_zero, {"summary": "x"}, {**GOOD, "extra": 1}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(wrong, SCHEMA)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("./src/x.py", "src/x.py"),
        ("/repo/src/x.py", "src/x.py"),
        ("/elsewhere/x.py", "/elsewhere/x.py"),
    ],
)
def test_paths_become_repository_relative(given: str, expected: str) -> None:
    assert relative(given, Path("/repo")) == expected


def test_text_lists_each_finding_under_its_place() -> None:
    text = as_text(Review.from_output(GOOD, Path("/repo")))
    assert text == "One bug.\n\n[medium] a.py:3  T\n    B\n    more\n"
    assert "No findings." in as_text(Review("Fine.", ()))
