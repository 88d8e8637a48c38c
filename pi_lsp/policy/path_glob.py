"""Path globs of the policy: approval rules' ``path`` patterns and the extra protected paths.

One dialect for both, the ``find`` tool's glob syntax (:func:`pi_lsp.tools.search.glob_pattern.glob_to_regex`:
``*`` and ``?`` stay inside one component, ``**`` as a whole component spans any number of them,
``[a-z]`` classes, ``{a,b}`` alternatives, ``\\`` escapes) with gitignore's anchoring rule:

- a pattern without ``/`` is matched against the **base name** (``*.pem``, ``.env.*``);
- a pattern starting with ``/`` or ``~/`` is matched against the **absolute** path (``~`` is the
  home directory);
- any other pattern with ``/`` is matched against the path **relative to a workspace folder**
  (``src/**``, ``secrets/*.json``); a path outside every folder never matches it.

Matching is case-sensitive (file systems here are) and always against the whole subject.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pi_lsp.tools.search.glob_pattern import GlobError, glob_to_regex

__all__ = ["GlobError", "PathGlob"]


@dataclass(frozen=True)
class PathGlob:
    """A compiled path pattern (see the module docstring).

    ``target`` is what it is matched against: ``"name"``, ``"relative"`` or ``"absolute"``.
    """

    pattern: str
    regex: re.Pattern[str]
    target: Literal["name", "relative", "absolute"]

    @classmethod
    def compile(cls, pattern: str) -> "PathGlob":
        """Compile ``pattern``; raises :class:`GlobError` (a ``ValueError``) for an empty or
        malformed pattern (an unclosed ``[`` or ``{``, a dangling ``\\``)."""
        if not pattern or not pattern.strip():
            raise GlobError("empty pattern")
        text = pattern
        if text.startswith("~/"):
            text = Path.home().as_posix().rstrip("/") + text[1:]
        text = text.rstrip("/") or "/"
        if "/" not in text:
            return cls(pattern, re.compile(glob_to_regex(text), re.DOTALL), "name")
        if text.startswith("/"):
            return cls(pattern, re.compile(glob_to_regex(text), re.DOTALL), "absolute")
        return cls(pattern, re.compile(glob_to_regex(text), re.DOTALL), "relative")

    def matches(self, path: Path, folders: list[Path]) -> bool:
        """True when the absolute, normalised ``path`` matches (relative targets: relative to any
        of ``folders``, which are absolute and normalised too)."""
        if self.target == "name":
            return self.regex.fullmatch(path.name) is not None
        if self.target == "absolute":
            return self.regex.fullmatch(path.as_posix()) is not None
        for folder in folders:
            relative = _relative(path, folder)
            if relative is not None and self.regex.fullmatch(relative) is not None:
                return True
        return False


def _relative(path: Path, folder: Path) -> str | None:
    """``path`` relative to ``folder`` with ``/`` separators, or ``None`` when outside it."""
    try:
        text = os.path.relpath(path, folder)
    except ValueError:
        return None
    if text == os.curdir:
        return ""
    if text == os.pardir or text.startswith(os.pardir + os.sep):
        return None
    return Path(text).as_posix()
