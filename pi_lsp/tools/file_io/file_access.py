"""The ``FileAccess`` seam: how read, edit and write reach file contents (design.md section 1).

Tools never open files for read/edit/write themselves; they call a :class:`FileAccess`. The
filesystem implementation (:class:`pi_lsp.tools.file_io.local_files.LocalFileAccess`) is used by
``pi-lsp exec``; the editor bridge provides ``EditorFileAccess``, which reads open buffers and turns
writes into ``workspace/applyEdit``. No tool knows which one it has.

Units: ``data`` is always bytes. For a buffer, it is the buffer's text encoded as UTF-8, with the
byte-order mark the file has on disk put back in front, so byte-level rules (BOM kept, each line's
ending kept) apply alike to disk and editor.

Errors: methods raise :class:`OSError` with ``errno`` and ``filename`` set for OS failures (the tools
turn them into Pi's ``ENOENT``/``EACCES`` wording) and :class:`pi_lsp.agent.tool.ToolError` for
failures the model should read verbatim (an editor that refused an edit, a conflict).
"""

from __future__ import annotations

import os
from dataclasses import FrozenInstanceError, dataclass, field
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from pi_lsp.agent.tool import ToolContext


class FileSnapshot:
    """The true content of a file at one moment (immutable).

    Attributes:
        path: absolute path as resolved from the model's string (symlinks not resolved).
        real_path: ``os.path.realpath(path)``: the key of the per-file mutation queue and of the
            editor's document store. A :class:`FileAccess` may pass ``None`` when it has not
            resolved it: it is then resolved when first asked for (most reads never need it and
            it costs a ``lstat`` per path component, issue 21).
        data: raw bytes (see the module docstring for buffers).
        source: ``"disk"`` or ``"buffer"`` (an editor buffer).
        version: the buffer's document version when ``source == "buffer"``, else ``None``.
        notices: lines the tool shows the model with its result (for a dirty buffer:
            ``[Unsaved changes in the editor: ...]``), in order.

    Snapshots compare and hash by these six values, like the frozen dataclass they were.
    """

    __slots__ = ("path", "_real_path", "data", "source", "version", "notices")

    path: Path
    data: bytes
    source: Literal["disk", "buffer"]
    version: int | None
    notices: tuple[str, ...]

    def __init__(
        self,
        path: Path,
        real_path: Path | None,
        data: bytes,
        source: Literal["disk", "buffer"] = "disk",
        version: int | None = None,
        notices: tuple[str, ...] = (),
    ) -> None:
        _set_path(self, path)
        _set_real_path(self, real_path)
        _set_data(self, data)
        _set_source(self, source)
        _set_version(self, version)
        _set_notices(self, notices)

    @property
    def real_path(self) -> Path:
        """``os.path.realpath(path)`` (see the class docstring)."""
        real = self._real_path
        if real is None:
            real = Path(os.path.realpath(self.path))
            object.__setattr__(self, "_real_path", real)
        return real

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def _values(self) -> tuple[object, ...]:
        return (self.path, self.real_path, self.data, self.source, self.version, self.notices)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return (
            f"FileSnapshot(path={self.path!r}, real_path={self.real_path!r}, data={self.data!r}, "
            f"source={self.source!r}, version={self.version!r}, notices={self.notices!r})"
        )


_set_path, _set_real_path, _set_data, _set_source, _set_version, _set_notices = (
    FileSnapshot.__dict__[name].__set__ for name in ("path", "_real_path", "data", "source", "version", "notices")
)
"""The slots' own setters (``__setattr__`` refuses): a snapshot is built per read (issue 21)."""


@dataclass
class WriteReport:
    """What a write did, beyond succeeding.

    ``notices`` are lines appended to the tool's result text (``applied by the editor, not yet
    confirmed``, ``saved bytes differ: a formatter ran``, ``file left unsaved: ...``).
    ``via`` says where the bytes went: ``"disk"`` or ``"editor"``. ``landed`` is set when the
    bytes that landed differ from those asked for because the user reviewed the change (issue 18,
    ``pi.edit.review: before``): the change journal records them instead.
    """

    via: Literal["disk", "editor"] = "disk"
    notices: list[str] = field(default_factory=list)
    landed: bytes | None = None


@dataclass(frozen=True)
class FileWrite:
    """One file of a multi-file change (``rename``): ``path`` gets ``data``, computed from
    ``previous`` (the snapshot read before; the write is refused if the file moved on since)."""

    path: Path
    data: bytes
    previous: FileSnapshot


@runtime_checkable
class FileAccess(Protocol):
    """Read and write file contents for the file tools.

    Every method takes absolute paths (the tools resolve the model's path first, pi-behaviour.md
    1.2) and is a coroutine; blocking filesystem calls run in a worker thread.
    """

    async def access(self, path: Path, *, write: bool = False) -> None:
        """Check the file exists and is readable (and writable when ``write``).

        Raises ``OSError`` (``ENOENT``, ``EACCES``, ``EISDIR`` ...) like Node's ``fs.access``.
        """
        ...

    async def read(self, path: Path, ctx: ToolContext | None = None, *, real_path: str | None = None) -> FileSnapshot:
        """Return the true content of ``path`` (buffer or disk, design.md section 3).

        ``ctx`` identifies the session that reads (the editor records which buffer versions a
        session has seen, so a later ``write`` to a dirty buffer can be allowed). ``real_path``:
        the real path of ``path`` when the caller found it moments ago in this call (the policy
        judged it), so an editor need not resolve it again to find the open document; ``None``:
        resolved here. Raises ``OSError`` when the file cannot be read (``EISDIR`` for a directory).
        """
        ...

    async def write(
        self,
        path: Path,
        data: bytes,
        *,
        previous: FileSnapshot | None,
        label: str,
        ctx: ToolContext | None = None,
    ) -> WriteReport:
        """Replace the content of ``path`` with ``data``, creating parent directories.

        ``previous`` is the snapshot the new bytes were computed from (``None`` for a blind
        ``write``): the editor uses it to compute minimal ``TextEdit``\\ s and to refuse when the
        buffer moved on. ``label`` names the change for the editor's undo history
        (``pi: edit src/a.py``). A failed write leaves the old file byte-identical. Raises
        ``OSError`` or :class:`~pi_lsp.agent.tool.ToolError`.
        """
        ...

    # Optional (issue 17): ``async write_files(writes: list[FileWrite], *, label, annotation, ctx)
    # -> list[WriteReport]`` changes several files as one change (the editor's one WorkspaceEdit);
    # a FileAccess without it gets one ``write`` per file.
