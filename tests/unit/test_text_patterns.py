"""`compiled`: a regular expression compiled when first asked for, once."""

from __future__ import annotations

import re

import pytest

from codeloop.text import compiled


def test_a_pattern_is_compiled_on_first_use_not_when_declared() -> None:
    broken = compiled(r"(unclosed")  # declared at import: nothing compiled, nothing raised
    with pytest.raises(re.error):
        broken()


def test_it_is_compiled_once_with_its_flags() -> None:
    word = compiled(r"think", re.IGNORECASE)
    assert word() is word()
    assert word().search("Ultra THINK") is not None
