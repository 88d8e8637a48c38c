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

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from pi_lsp.agent.tool import ToolContext


@dataclass(frozen=True)
class FileSnapshot:
    """The true content of a file at one moment.

    Attributes:
        path: absolute path as resolved from the model's string (symlinks not resolved).
        real_path: ``os.path.realpath(path)``: the key of the per-file mutation queue and of the
            editor's document store.
        data: raw bytes (see the module docstring for buffers).
        source: ``"disk"`` or ``"buffer"`` (an editor buffer).
        version: the buffer's document version when ``source == "buffer"``, else ``None``.
        notices: lines the tool shows the model with its result (for a dirty buffer:
            ``[Unsaved changes in the editor: ...]``), in order.
    """

    path: Path
    real_path: Path
    data: bytes
    source: Literal["disk", "buffer"] = "disk"
    version: int | None = None
    notices: tuple[str, ...] = ()


@dataclass
class WriteReport:
    """What a write did, beyond succeeding.

    ``notices`` are lines appended to the tool's result text (``applied by the editor, not yet
    confirmed``, ``saved bytes differ: a formatter ran``, ``file left unsaved: ...``).
    ``via`` says where the bytes went: ``"disk"`` or ``"editor"``.
    """

    via: Literal["disk", "editor"] = "disk"
    notices: list[str] = field(default_factory=list)


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

    async def read(self, path: Path, ctx: ToolContext | None = None) -> FileSnapshot:
        """Return the true content of ``path`` (buffer or disk, design.md section 3).

        ``ctx`` identifies the session that reads (the editor records which buffer versions a
        session has seen, so a later ``write`` to a dirty buffer can be allowed). Raises
        ``OSError`` when the file cannot be read (``EISDIR`` for a directory).
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
