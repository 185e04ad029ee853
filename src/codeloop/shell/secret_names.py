"""Which variable names mark a secret: a read-only command must not print one (`printenv`,
awk's `ENVIRON`), nor a line expand one. Apart from the readers that ask, so that the first
Bash call loads this pattern without the sed and awk readers (scripts.py).
"""

from __future__ import annotations

import re

from codeloop.system.lazy_pattern import LazyPattern

__all__ = ["SECRET_NAME"]

SECRET_NAME = LazyPattern(
    r".*(TOKEN|SECRET|PASSW(OR)?D|PASSPHRASE|CREDENTIAL|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|"
    r"COOKIE|(^|_)AUTH($|_)|_KEY$|^KEY$|_PASS$|^PASS$|_PAT$).*",
    re.IGNORECASE,
)
"""Variable names that mark a secret: GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, DB_PASSWORD, ..."""
