"""Git object names: the one check of a commit SHA, whichever form a caller accepts.

The report, the plan block and the event payloads hold SHA-1 names in git's own spelling
(``contracts.SHA40_PATTERN``: 40 lowercase hex digits). git itself writes 40 digits, or 64 in
a SHA-256 repository, always lowercase; a name a user or a provider hands in may be in either
case. Each caller says which of these it takes; the digits are checked here only.
"""

from __future__ import annotations

import re

from .. import contracts as c

__all__ = ["is_object_id", "is_sha40"]

_LOWER_SHA1 = re.compile(c.SHA40_PATTERN)
_LOWER_ANY = re.compile(f"{c.SHA40_PATTERN}|{c.HEX64_PATTERN}")
# ASCII, so that no other letter folds onto a-f.
_SHA1_EITHER_CASE = re.compile(c.SHA40_PATTERN, re.IGNORECASE | re.ASCII)
_ANY_EITHER_CASE = re.compile(_LOWER_ANY.pattern, re.IGNORECASE | re.ASCII)


def is_object_id(text: str, *, sha1_only: bool = False, lowercase: bool = False) -> bool:
    """Whether ``text`` is a full object name: 40 hex digits, or 64 unless ``sha1_only``; upper
    case is accepted unless ``lowercase`` (git writes lowercase only)."""
    if sha1_only:
        pattern = _LOWER_SHA1 if lowercase else _SHA1_EITHER_CASE
    else:
        pattern = _LOWER_ANY if lowercase else _ANY_EITHER_CASE
    return pattern.fullmatch(text) is not None


def is_sha40(text: str) -> bool:
    """Whether ``text`` is a SHA as reports, plan blocks and events hold it: 40 lowercase hex
    digits (``contracts.SHA40_PATTERN``)."""
    return _LOWER_SHA1.fullmatch(text) is not None
