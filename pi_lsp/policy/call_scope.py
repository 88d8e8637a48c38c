"""What one tool call would touch, as the policy judges it: its command or its path.

``bash`` is judged by its ``command``; ``read``, ``edit``, ``write``, ``grep``, ``find``, ``ls`` and the
language tools (``diagnostics``, ``definition``, ``references``, ``rename``, ``symbols``, ``hover``)
by the path they name, resolved exactly as the tool resolves it (:mod:`pi_lsp.tools.file_io.paths`:
``~``, ``@``, ``file://`` URLs, relative to the working directory, ``..`` removed; ``read``'s
fallbacks for names stored in another Unicode form); ``grep``, ``find`` and ``ls`` without a path
search the working directory. Any other tool is judged by its name alone.

The scope is also what a session grant covers: exactly the tool plus the command text or the
absolute path shown in the prompt, never more (issue 9).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pi_lsp.tools.file_io.paths import (
    InvalidPathError,
    NulInPathError,
    path_of,
    resolve_read_path_text,
    resolve_to_cwd_text,
)

LANGUAGE_READ_TOOLS: frozenset[str] = frozenset({"diagnostics", "definition", "references", "symbols", "hover"})
"""The language tools that only ask (issue 17): judged by their path like ``read`` (``diagnostics``
without a path: the working directory, like ``grep``)."""

PATH_TOOLS: frozenset[str] = frozenset({"read", "edit", "write", "grep", "find", "ls", "rename", *LANGUAGE_READ_TOOLS})
"""Tools judged by a path."""

WRITE_TOOLS: frozenset[str] = frozenset({"edit", "write", "rename"})
"""Tools that change the file they name (protected paths are refused for them). ``rename`` also
changes files its arguments do not name: the tool has each of those judged the same way
(``ToolEnvironment.approve_writes``)."""

CONTENT_TOOLS: frozenset[str] = frozenset({"read", "grep", *LANGUAGE_READ_TOOLS})
"""Tools that send file contents to the model (a protected path is asked about): the language
tools show source lines, outlines and documentation of the file."""

READ_TOOLS: frozenset[str] = frozenset({"read", "grep", "find", "ls", *LANGUAGE_READ_TOOLS})
"""Path tools that only read: an approval prompt for them may preselect ``Allow once``."""


@dataclass(frozen=True)
class CallScope:
    """The part of a call the policy decides on.

    Attributes:
        tool: the tool name.
        kind: ``"command"`` (bash), ``"path"`` (file tools) or ``"tool"`` (anything else).
        command: the bash command text, else ``None``.
        path: the absolute, normalised path (symlinks not resolved), else ``None``.
        shown: what the prompt and the journal show: the command, the path relative to the
            working directory when inside it (else absolute), or the tool name.
    """

    tool: str
    kind: Literal["command", "path", "tool"]
    command: str | None = None
    path: Path | None = None
    shown: str = ""

    @property
    def grant_key(self) -> tuple[str, str, str]:
        """The exact scope a session grant covers: ``(tool, kind, command or absolute path)``."""
        value = self.command if self.command is not None else (str(self.path) if self.path else "")
        return self.tool, self.kind, value


def call_scope(tool: str, args: Any, cwd: Path) -> CallScope | None:
    """The scope of a call with validated ``args`` (an args model instance) in ``cwd``.

    Returns ``None`` when the path cannot name a file (an invalid ``file://`` URL): the tool
    itself will fail with its own error, touching nothing.
    """
    if tool == "bash":
        command = getattr(args, "command", None)
        text = command if isinstance(command, str) else ""
        return CallScope(tool, "command", command=text, shown=text)
    if tool not in PATH_TOOLS:
        return CallScope(tool, "tool", shown=tool)
    raw = getattr(args, "path", None)
    if not isinstance(raw, str):
        raw = "."
    try:
        text = resolve_read_path_text(raw, cwd) if tool == "read" else resolve_to_cwd_text(raw, cwd)
    except NulInPathError as exc:  # judged by where it points; the tool then refuses it
        text = exc.path
    except InvalidPathError:
        return None
    return CallScope(tool, "path", path=path_of(text), shown=_shown(text, _normalised(os.fspath(cwd))))


_normalised = functools.lru_cache(maxsize=16)(os.path.normpath)  # of the working directory, per call


def _shown(path: str, cwd: str) -> str:
    """``path`` relative to ``cwd`` when inside it (``.`` for ``cwd`` itself), else absolute; the
    same text as :func:`pi_lsp.tools.file_io.paths.display_path` for the normalised paths used here."""
    if path == cwd:
        return "."
    prefix = cwd.rstrip("/") + "/"
    return path[len(prefix):] if path.startswith(prefix) else path
