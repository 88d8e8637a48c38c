"""The buffers of :class:`~pi_lsp.demo.fake_editor.FakeEditor`: what a well-behaved editor holds.

No I/O with the server here, only buffer state and the rules a real editor applies (measured in
real-clients.md): LSP line rules (:mod:`pi_lsp.editor.positions`), columns in the negotiated
encoding, ``workspace/applyEdit`` all-or-nothing with VS Code's version check (a versioned edit
whose version differs from the buffer's is refused with ``applied: false``), documents the editor
had not opened loaded into held (modified, unsaved) buffers, saves that write the buffer's text
with the file's byte-order mark, reloads that never touch a modified buffer.

Units: offsets are code-point indexes into ``str``; versions are the client's integers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from pi_lsp.editor.positions import apply_text_edits

BOM = "\ufeff"


@dataclass
class Buffer:
    """One editor buffer.

    Attributes:
        uri, path: the document (``path`` ``None`` for ``untitled:`` buffers).
        text: the buffer text (no BOM).
        version: the version last sent to the server (``None`` while held and not opened).
        saved_text: the text as last loaded from or saved to disk.
        has_bom: the file on disk starts with a UTF-8 BOM (kept on save).
        opened: ``didOpen`` was sent (held buffers loaded by an edit are not opened).
    """

    uri: str
    path: Path | None
    text: str
    version: int | None
    saved_text: str
    has_bom: bool = False
    opened: bool = True

    @property
    def modified(self) -> bool:
        """The buffer differs from what was last loaded or saved."""
        return self.text != self.saved_text


class EditRefused(Exception):
    """A workspace edit the editor will not apply; ``reason`` is its ``failureReason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class StaleVersion(EditRefused):
    """A versioned edit for a buffer version other than the current one (each profile answers it
    its own way: VS Code ``applied: false``, Neovim skips it and says ``applied: true``, eglot
    replies with a JSON-RPC error; real-clients.md behaviour matrix)."""


def uri_of(path: Path) -> str:
    """The ``file:`` URI of an absolute path."""
    return from_fs_path(str(path)) or path.as_uri()


def read_file_text(path: Path) -> tuple[str, bool]:
    """A file's text as an editor loads it: strict UTF-8, BOM dropped -> (text, had BOM).

    Raises ``OSError`` when unreadable and ``UnicodeDecodeError`` when not UTF-8.
    """
    data = path.read_bytes()
    text = data.decode("utf-8")
    if text.startswith(BOM):
        return text[1:], True
    return text, False


class BufferSet:
    """All buffers of the fake editor, by URI.

    ``version_step`` is how far a version moves per change (1 like VS Code; Neovim's changedtick
    jumps, so its profile uses a larger step).
    """

    def __init__(self, encoding: str = "utf-16", version_step: int = 1) -> None:
        self.encoding = encoding
        self.version_step = version_step
        self.buffers: dict[str, Buffer] = {}

    def open(self, path: Path, text: str | None = None, version: int = 1) -> Buffer:
        """Open ``path`` (its disk text unless ``text`` is given) as an LSP-open buffer."""
        disk_text, has_bom = read_file_text(path) if path.exists() else ("", False)
        buffer = Buffer(
            uri=uri_of(path), path=path, text=disk_text if text is None else text,
            version=version, saved_text=disk_text, has_bom=has_bom,
        )
        self.buffers[buffer.uri] = buffer
        return buffer

    def get(self, uri: str) -> Buffer | None:
        """The buffer of ``uri`` or ``None``."""
        return self.buffers.get(uri)

    def bump(self, buffer: Buffer) -> int:
        """Advance the version of an opened buffer after a change; return it."""
        buffer.version = (buffer.version or 0) + self.version_step
        return buffer.version

    def apply_workspace_edit(
        self, edit: types.WorkspaceEdit, *, accept_newer: bool = False
    ) -> list[tuple[Buffer, list[Any]]]:
        """Apply ``edit`` to the buffers, all or nothing.

        Returns ``(buffer, text_edits)`` for every buffer changed, in order, so the caller can
        send ``didChange`` for the opened ones. Raises :class:`StaleVersion` for a versioned edit
        whose version is not the buffer's (with ``accept_newer``, only for an older one, as
        Neovim checks), :class:`EditRefused` (nothing changed) for resource operations,
        overlapping edits or an unreadable file.
        """
        plan: list[tuple[str, int | None, bool, Sequence[Any]]] = []
        if edit.document_changes is not None:
            for change in edit.document_changes:
                if not isinstance(change, types.TextDocumentEdit):
                    raise EditRefused(f"resource operation {type(change).__name__} not supported")
                doc = change.text_document
                plan.append((doc.uri, doc.version, True, change.edits))
        for uri, edits in (edit.changes or {}).items():
            plan.append((uri, None, False, edits))
        staged: dict[str, tuple[Buffer, str, list[Any]]] = {}
        for uri, version, versioned, edits in plan:
            buffer, text, done = staged.get(uri, (None, None, []))
            if buffer is None:
                buffer = self._buffer_for_edit(uri)
                text = buffer.text
            if (
                versioned and version is not None and buffer.opened and buffer.version is not None
                and (version < buffer.version if accept_newer else version != buffer.version)
            ):
                raise StaleVersion(
                    f"version mismatch for {uri}: edit has {version}, buffer has {buffer.version}"
                )
            try:
                text = apply_text_edits(text, list(edits), self.encoding)
            except ValueError as exc:
                raise EditRefused(str(exc)) from exc
            staged[uri] = (buffer, text, done + list(edits))
        changed = []
        for uri, (buffer, text, edits) in staged.items():
            if uri not in self.buffers:
                self.buffers[uri] = buffer
            buffer.text = text
            changed.append((buffer, edits))
        return changed

    def _buffer_for_edit(self, uri: str) -> Buffer:
        existing = self.buffers.get(uri)
        if existing is not None:
            return existing
        path_str = to_fs_path(uri) if uri.startswith("file:") else None
        if not path_str:
            raise EditRefused(f"cannot open {uri}")
        path = Path(path_str)
        try:
            text, has_bom = read_file_text(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise EditRefused(f"cannot open {path}: {exc}") from exc
        return Buffer(
            uri=uri, path=path, text=text, version=None, saved_text=text, has_bom=has_bom,
            opened=False,
        )

    def save(self, buffer: Buffer) -> None:
        """Write the buffer to disk (UTF-8, its BOM kept) and mark it saved."""
        if buffer.path is None:
            raise OSError(f"{buffer.uri} has no file")
        data = ((BOM if buffer.has_bom else "") + buffer.text).encode("utf-8")
        buffer.path.write_bytes(data)
        buffer.saved_text = buffer.text

    def reload(self, buffer: Buffer) -> bool:
        """Reload an unmodified buffer from disk; return whether its text changed.

        Raises ``ValueError`` for a modified buffer (reload never discards the user's work).
        """
        if buffer.modified:
            raise ValueError("the buffer has unsaved changes")
        if buffer.path is None:
            raise ValueError("the buffer has no file")
        text, has_bom = read_file_text(buffer.path)
        changed = text != buffer.text
        buffer.text, buffer.saved_text, buffer.has_bom = text, text, has_bom
        return changed
