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
from dataclasses import FrozenInstanceError
from pathlib import Path
from typing import Any, Literal

from pi_lsp.tools.file_io.paths import (
    InvalidPathError,
    NulInPathError,
    path_of,
    read_path_variant,
    resolve_to_cwd_text,
)
from pi_lsp.tools.file_io.real_paths import existing_real_path

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


class CallScope:
    """The part of a call the policy decides on (immutable).

    Attributes:
        tool: the tool name.
        kind: ``"command"`` (bash), ``"path"`` (file tools) or ``"tool"`` (anything else).
        command: the bash command text, else ``None``.
        path: the absolute, normalised path (symlinks not resolved), else ``None``.
        shown: what the prompt and the journal show: the command, the path relative to the
            working directory when inside it (else absolute), or the tool name.
        real: ``os.path.realpath(path)`` when it was found while resolving the path (``read``'s
            existence check gives it: issue 21), else ``None`` (the policy resolves it). Not
            part of the scope's identity (equality, hash, ``repr``).

    Scopes compare and hash by the first five values, like the frozen dataclass they were; a
    class with slots set through their own setters is built in about half the time, and one is
    built per call (issue 21).
    """

    __slots__ = ("tool", "kind", "command", "path", "shown", "real")

    tool: str
    kind: Literal["command", "path", "tool"]
    command: str | None
    path: Path | None
    shown: str
    real: str | None

    def __init__(
        self,
        tool: str,
        kind: Literal["command", "path", "tool"],
        command: str | None = None,
        path: Path | None = None,
        shown: str = "",
        real: str | None = None,
    ) -> None:
        _set_tool(self, tool)
        _set_kind(self, kind)
        _set_command(self, command)
        _set_path(self, path)
        _set_shown(self, shown)
        _set_real(self, real)

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def _values(self) -> tuple[object, ...]:
        return (self.tool, self.kind, self.command, self.path, self.shown)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return (
            f"CallScope(tool={self.tool!r}, kind={self.kind!r}, command={self.command!r}, "
            f"path={self.path!r}, shown={self.shown!r})"
        )

    @property
    def grant_key(self) -> tuple[str, str, str]:
        """The exact scope a session grant covers: ``(tool, kind, command or absolute path)``."""
        value = self.command if self.command is not None else (str(self.path) if self.path else "")
        return self.tool, self.kind, value


_set_tool, _set_kind, _set_command, _set_path, _set_shown, _set_real = (
    CallScope.__dict__[name].__set__ for name in ("tool", "kind", "command", "path", "shown", "real")
)
"""The slots' own setters (``__setattr__`` refuses)."""


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
    cwd_text = os.fspath(cwd)
    try:
        if "~" in raw:  # the home folder may change: resolved anew
            text = resolve_to_cwd_text(raw, cwd_text)
            path, shown = path_of(text), _shown(text, _normalised(cwd_text))
        else:
            text, path, shown = _plain_parts(raw, cwd_text)
    except NulInPathError as exc:  # judged by where it points; the tool then refuses it
        return CallScope(tool, "path", None, path_of(exc.path), _shown(exc.path, _normalised(cwd_text)))
    except InvalidPathError:
        return None
    if tool != "read":
        return CallScope(tool, "path", None, path, shown)
    found, real = existing_real_path(text)
    if found:
        return CallScope(tool, "path", None, path, shown, real)
    variant, real = read_path_variant(text)  # read's fallbacks for names stored in another form
    if variant == text:
        return CallScope(tool, "path", None, path, shown)
    return CallScope(tool, "path", None, path_of(variant), _shown(variant, _normalised(cwd_text)), real)


@functools.lru_cache(maxsize=512)
def _plain_parts(raw: str, cwd: str) -> tuple[str, Path, str]:
    """The resolved text of ``raw`` in ``cwd`` (no ``~`` in it), its ``Path`` and how it is shown:
    one cache look-up for what every call of a path tool computes from its strings, a pure
    function of them (issue 21). Raises like :func:`resolve_to_cwd_text` (errors are not
    remembered)."""
    text = resolve_to_cwd_text(raw, cwd)
    return text, path_of(text), _shown(text, _normalised(cwd))


_normalised = functools.lru_cache(maxsize=16)(os.path.normpath)  # of the working directory, per call


@functools.lru_cache(maxsize=16)
def _folder_prefix(cwd: str) -> str:
    return cwd.rstrip("/") + "/"


def _shown(path: str, cwd: str) -> str:
    """``path`` relative to ``cwd`` when inside it (``.`` for ``cwd`` itself), else absolute; the
    same text as :func:`pi_lsp.tools.file_io.paths.display_path` for the normalised paths used here."""
    if path == cwd:
        return "."
    prefix = _folder_prefix(cwd)
    return path[len(prefix):] if path.startswith(prefix) else path
