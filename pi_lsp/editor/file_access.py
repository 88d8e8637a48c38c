"""``EditorFileAccess``: the ``FileAccess`` seam when an editor is connected (design.md 3 and 4).

Reads return the editor's buffer for files it holds; writes become ``workspace/applyEdit`` so the
editor owns the change, its undo history and the user's unsaved work. Which way a call goes
depends on the file's state (design.md section 3 table):

============================  ========================  ======================================
state                         read                      edit / write
============================  ========================  ======================================
not open                      disk                      ``pi.edit.route``: disk, or editor + save
open, clean                   buffer                    editor (+ ``pi/saveDocuments``)
open, clean, disk newer       disk                      edit: reload, then editor (else disk +
                                                        notice); write: disk, then reload
open, dirty                   buffer + unsaved notice   editor, unsaved (write: only if read)
open, dirty, disk newer       buffer + unsaved notice   error: conflict
============================  ========================  ======================================

A client without ``workspace.applyEdit`` gets everything on disk (Pi's behaviour). The editor
route itself (apply, verify, save; design.md section 4 steps 3 to 6) lives in
:mod:`pi_lsp.editor.edit_session`. Notices are whole bracketed lines appended to the tool result.
"""

from __future__ import annotations

import asyncio
import enum
import os
from pathlib import Path

from pygls.uris import from_fs_path

from pi_lsp.agent.tool import ToolContext, ToolError
from pi_lsp.editor.connection import EditorConnection, EditorSettings
from pi_lsp.editor.documents import Document, DocumentStore, decode_disk_text, read_disk
from pi_lsp.editor.edit_session import EditRequest, run_editor_edit
from pi_lsp.editor.workspace_edit_session import run_workspace_edit
from pi_lsp.editor.reloads import has_mixed_or_cr_line_endings, reload_from_disk
from pi_lsp.tools.file_io.file_access import FileAccess, FileSnapshot, FileWrite, WriteReport

UNSAVED_NOTICE = "[Unsaved changes in the editor: this is the editor's buffer, not the file on disk.]"
"""Appended to a read of a dirty buffer (design.md section 3)."""


class DocState(enum.Enum):
    """The rows of design.md section 3's table."""

    NOT_OPEN = "not open"
    CLEAN = "open, clean"
    CLEAN_DISK_NEWER = "open, clean, disk newer"
    DIRTY = "open, dirty"
    DIRTY_DISK_NEWER = "open, dirty, disk newer"


class EditorFileAccess:
    """:class:`~pi_lsp.tools.file_io.file_access.FileAccess` through the editor (see the module docstring).

    Args:
        store: the daemon's open documents.
        connection: the editor (``features`` decide what it can do).
        settings: ``pi.edit.*`` (route, apply and verify timeouts). Replace the attribute when
            the settings change; each call reads it once.
        disk: the filesystem access (``LocalFileAccess()``) for everything not done in the editor.

    Errors: ``OSError`` from the disk, :class:`~pi_lsp.agent.tool.ToolError` for editor refusals,
    timeouts, conflicts and verification failures; a refused edit is never written to disk instead.
    """

    def __init__(
        self,
        store: DocumentStore,
        connection: EditorConnection,
        settings: EditorSettings,
        disk: FileAccess,
    ) -> None:
        self.store = store
        self.connection = connection
        self.settings = settings
        self.disk = disk
        self._seen: dict[tuple[str, Path], int | None] = {}
        self.held: dict[Path, tuple[str, bytes]] = {}
        """Files the editor had not opened that an edit left in an unsaved editor buffer:
        real path -> (URI, the bytes a save would write)."""

    # -- state --------------------------------------------------------------------------------

    def _document(self, path: Path, real_path: str | None = None) -> Document | None:
        """The open document of ``path`` (whose real path is ``real_path`` when known) when the
        editor route is possible at all."""
        if not self.connection.features.apply_edit:
            return None
        return self.store.get(path, real_path)

    async def state_of(self, path: Path) -> tuple[DocState, Document | None]:
        """The design.md section 3 row of ``path`` (checking the disk fingerprint in a thread)."""
        document = self._document(path)
        if document is None:
            return DocState.NOT_OPEN, None
        if _disk_unchanged(document):  # the usual case, one inline stat: no thread hop per call
            newer = False
        else:
            newer = await asyncio.to_thread(self.store.check_disk, document)
        dirty = document.dirty
        if dirty:
            return (DocState.DIRTY_DISK_NEWER if newer else DocState.DIRTY), document
        return (DocState.CLEAN_DISK_NEWER if newer else DocState.CLEAN), document

    # -- FileAccess ---------------------------------------------------------------------------

    async def access(self, path: Path, *, write: bool = False) -> None:
        """Node's ``fs.access`` on disk (``OSError``), except that an open buffer always exists.

        The disk is asked first: a file the system grants (one ``access(2)`` call, the one Node's
        ``fs.access`` makes) passes whether or not the editor holds it, and that is cheaper than
        finding the open document by real path, which the ``read`` that follows does anyway
        (issue 21). A file the system refuses (a buffer not saved yet, a file deleted or made
        unreadable since it was opened) passes when it is open; otherwise ``disk.access`` raises
        the error the tools report.
        """
        if os.access(path, os.R_OK | os.W_OK if write else os.R_OK):
            return
        if self._document(path) is not None:
            return
        await self.disk.access(path, write=write)

    async def read(
        self, path: Path, ctx: ToolContext | None = None, *, remember: bool = True, real_path: str | None = None
    ) -> FileSnapshot:
        """The buffer (with the file's BOM, UTF-8 bytes) or the disk, per the state table.

        A dirty buffer carries :data:`UNSAVED_NOTICE`. The buffer version read is remembered for
        ``ctx.session_id`` (a later ``write`` to a dirty buffer needs it) unless ``remember`` is
        false (a read on the host's behalf, such as the change journal's, is not the model's).
        """
        # state_of's rows inline: one document lookup, one stat, no coroutine (issue 21)
        document = self._document(path, real_path)
        if document is None:
            return await self.disk.read(path, ctx)
        if not _disk_unchanged(document):
            newer = await asyncio.to_thread(self.store.check_disk, document)
            if newer and not document.dirty:  # open, clean, disk newer: the disk is the truth
                return await self.disk.read(path, ctx)
        data = document.data()
        notices = (UNSAVED_NOTICE,) if document.dirty else ()
        real = document.real_path or Path(os.path.realpath(path))  # store.get matched it by real path
        if remember:
            self._seen[(ctx.session_id if ctx else "external", real)] = document.version
        return FileSnapshot(
            path=path,
            real_path=real,
            data=data,
            source="buffer",
            version=document.version,
            notices=notices,
        )

    async def write(
        self,
        path: Path,
        data: bytes,
        *,
        previous: FileSnapshot | None,
        label: str,
        ctx: ToolContext | None = None,
        confirm: str | None = None,
        confirm_timeout_seconds: float | None = None,
    ) -> WriteReport:
        """Replace ``path``'s content with ``data`` through the editor or on disk (see the table).

        ``confirm`` (issue 18, review before apply): for a file open in the editor, send the edit
        for the user to confirm, with this description; ``WriteReport.landed`` then holds the
        bytes the user accepted (waiting up to ``confirm_timeout_seconds`` for the editor's answer).
        Other files are written as usual with a notice that the change
        was not reviewed (``landed`` stays ``None``).
        """
        if confirm is not None and (not self.connection.features.apply_edit or self._document(path) is None):
            report = await self.write(path, data, previous=previous, label=label, ctx=ctx)
            report.notices.append(
                f"[Not reviewed: {path} is not open in the editor, which can only confirm changes to open files; "
                "the change was applied at once.]"
            )
            return report
        if not self.connection.features.apply_edit:
            report = await self.disk.write(path, data, previous=previous, label=label, ctx=ctx)
            await self._reload(self.store.get(path), path, report)
            return report
        state, document = await self.state_of(path)
        if document is None:
            return await self._write_unopened(path, data, previous, label, ctx)
        if state is DocState.DIRTY_DISK_NEWER:
            raise ToolError(
                f"Conflict: {path} has unsaved changes in the editor and the file on disk changed too. "
                "Nothing was written; the user must save or revert it in the editor first."
            )
        if state is DocState.CLEAN_DISK_NEWER and previous is not None:
            # edit: bring the buffer up to date first, then edit it (previous was read from disk)
            problems = await reload_from_disk([document], self.store, self.connection, self.settings)
            if problems:
                report = await self.disk.write(path, data, previous=previous, label=label, ctx=ctx)
                report.notices.append(
                    f"[Edited on disk: the editor's buffer of {path} was older than the file and could not be "
                    f"reloaded first ({problems[document.uri]}); the buffer stays outdated until the editor reloads it.]"
                )
                return report
            state, document = await self.state_of(path)
            if document is None or state is not DocState.CLEAN:
                raise ToolError(
                    f"{path} changed in the editor while it was being reloaded. Nothing was written; "
                    "read the file again and retry."
                )
        if state is DocState.CLEAN_DISK_NEWER:
            report = await self.disk.write(path, data, previous=previous, label=label, ctx=ctx)
            await self._reload(document, path, report)
            return report
        session = ctx.session_id if ctx else "external"
        if previous is None and state is DocState.DIRTY:
            if self._seen.get((session, document.real_path)) != document.version:
                raise ToolError(
                    f"{path} has unsaved changes in the editor that you have not seen. "
                    "Read the file first (you will get the editor's buffer), then write it again."
                )
        if previous is not None and _text_of(previous.data) != document.text:
            raise ToolError(
                f"The editor's buffer of {path} changed while the edit was being prepared. "
                "Nothing was written; read the file again and retry."
            )
        new = _text_of(data)
        if new is None:
            raise ToolError(f"Could not put {path} in the editor's buffer: the new content is not valid UTF-8.")
        request = EditRequest(
            path=path,
            real_path=document.real_path or Path(os.path.realpath(path)),
            uri=document.uri,
            old=document.text,
            new=new,
            version=document.version,
            is_open=True,
            clean_before=state is DocState.CLEAN,
            has_bom=document.has_bom,
            label=label,
            confirm=confirm,
            confirm_timeout_seconds=confirm_timeout_seconds,
        )
        return await run_editor_edit(request, self.store, self.connection, self.settings)

    async def write_files(
        self, writes: list[FileWrite], *, label: str, annotation: str, ctx: ToolContext | None = None,
        confirm: str | None = None, confirm_timeout_seconds: float | None = None,
    ) -> list[WriteReport]:
        """Change several files as ONE ``workspace/applyEdit`` (issue 17, a rename): the open
        documents and, with the ``editor`` route, the unopened ones; unopened files on the
        ``openDocuments`` route (and files applyEdit cannot hold: not UTF-8, mixed line endings
        for a normalising client) are written on disk after the editor applied the rest. One
        report per write, in order.

        Checked before anything is sent (a ToolError, nothing changed): a file whose buffer or
        disk moved on since ``previous`` was read, or whose buffer and disk both changed
        (conflict), or whose clean buffer is older than the disk (it must be reloaded first).

        ``confirm``: the user confirms the edit in the editor (review before apply, see
        :func:`~pi_lsp.editor.workspace_edit_session.run_workspace_edit`); give only open files.
        """
        if not self.connection.features.apply_edit:
            return [await self.write(w.path, w.data, previous=w.previous, label=label, ctx=ctx) for w in writes]
        features = self.connection.features
        route = self.settings.route or (
            "editor" if features.edit_closed_files and features.save_documents else "openDocuments"
        )
        requests: list[EditRequest] = []
        plan: list[tuple[FileWrite, EditRequest | None]] = []
        for write in writes:
            new = _text_of(write.data)
            state, document = await self.state_of(write.path)
            if state in (DocState.DIRTY_DISK_NEWER, DocState.CLEAN_DISK_NEWER):
                raise ToolError(
                    f"{write.path} changed on disk and the editor's buffer is older. Nothing was changed; "
                    "read the file (or let the editor reload it) and retry."
                )
            if document is not None:
                if new is None or _text_of(write.previous.data) != document.text:
                    raise ToolError(
                        f"The editor's buffer of {write.path} changed while the change was being prepared. "
                        "Nothing was changed; retry."
                    )
                request: EditRequest | None = EditRequest(
                    path=write.path, real_path=document.real_path or Path(os.path.realpath(write.path)),
                    uri=document.uri, old=document.text, new=new, version=document.version, is_open=True,
                    clean_before=state is DocState.CLEAN, has_bom=document.has_bom, label=label,
                )
            else:
                real_path = Path(os.path.realpath(write.path))
                disk = await asyncio.to_thread(read_disk, real_path)
                if disk is None or disk[0] != write.previous.data:
                    raise ToolError(f"{write.path} changed on disk while the change was being prepared. Nothing was changed; retry.")
                decoded = decode_disk_text(disk[0])
                request = None
                if route == "editor" and decoded is not None and new is not None and not (
                    features.normalizes_line_endings and has_mixed_or_cr_line_endings(decoded[0])
                ):
                    request = EditRequest(
                        path=write.path, real_path=real_path, uri=from_fs_path(str(real_path)) or real_path.as_uri(),
                        old=decoded[0], new=new, version=None, is_open=False, clean_before=True,
                        has_bom=decoded[1], label=label,
                    )
            if request is not None:
                requests.append(request)
            plan.append((write, request))
        editor_reports = await run_workspace_edit(
            requests, label, annotation, self.store, self.connection, self.settings,
            confirm=confirm, confirm_timeout_seconds=confirm_timeout_seconds,
        )
        by_request = {id(r): report for r, report in zip(requests, editor_reports)}
        reports: list[WriteReport] = []
        for write, request in plan:
            if request is None:
                reports.append(await self.disk.write(write.path, write.data, previous=write.previous, label=label, ctx=ctx))
                continue
            if not request.is_open:
                expected = (b"\xef\xbb\xbf" if request.has_bom else b"") + request.new.encode("utf-8", "surrogatepass")
                disk_now = await asyncio.to_thread(read_disk, request.real_path)
                if disk_now is None or disk_now[0] != expected:
                    self.held[request.real_path] = (request.uri, expected)
                else:
                    self.held.pop(request.real_path, None)
            reports.append(by_request[id(request)])
        return reports

    # -- helpers ------------------------------------------------------------------------------

    async def _write_unopened(
        self, path: Path, data: bytes, previous: FileSnapshot | None, label: str, ctx: ToolContext | None
    ) -> WriteReport:
        """``pi.edit.route`` for a file the editor has not opened (design.md section 3)."""
        features = self.connection.features
        route = self.settings.route or (
            "editor" if features.edit_closed_files and features.save_documents else "openDocuments"
        )
        if route != "editor":
            return await self.disk.write(path, data, previous=previous, label=label, ctx=ctx)
        real_path = Path(os.path.realpath(path))
        disk = await asyncio.to_thread(read_disk, real_path)
        decoded_old = decode_disk_text(disk[0]) if disk is not None else None
        new = _text_of(data)
        if (
            decoded_old is None  # a new file (applyEdit cannot create one safely) or not UTF-8
            or new is None
            or (features.normalizes_line_endings and has_mixed_or_cr_line_endings(decoded_old[0]))
        ):
            return await self.disk.write(path, data, previous=previous, label=label, ctx=ctx)
        request = EditRequest(
            path=path,
            real_path=real_path,
            uri=from_fs_path(str(real_path)) or real_path.as_uri(),
            old=decoded_old[0],
            new=new,
            version=None,
            is_open=False,
            clean_before=True,
            has_bom=decoded_old[1],
            label=label,
        )
        report = await run_editor_edit(request, self.store, self.connection, self.settings)
        expected = (b"\xef\xbb\xbf" if decoded_old[1] else b"") + new.encode("utf-8", "surrogatepass")
        disk_now = await asyncio.to_thread(read_disk, real_path)
        if disk_now is None or disk_now[0] != expected:
            self.held[real_path] = (request.uri, expected)
        else:
            self.held.pop(real_path, None)
        return report

    async def _reload(self, document: Document | None, path: Path, report: WriteReport) -> None:
        """After a disk write to a file the editor holds: reload its buffer, or say it is outdated."""
        if document is None:
            return
        if document.dirty:  # never reload over the user's unsaved work
            report.notices.append(
                f"[Written to disk; the editor's buffer of {path} has unsaved changes, so it is outdated "
                "until it reloads it.]"
            )
            return
        problems = await reload_from_disk([document], self.store, self.connection, self.settings)
        if document.uri in problems:
            report.notices.append(
                f"[Written to disk; the editor's buffer of {path} is outdated until it reloads it: "
                f"{problems[document.uri]}.]"
            )

    async def unsaved_files(self) -> list[Path]:
        """The files the editor holds whose buffer differs from disk (design.md section 4 step 7).

        Open documents that are dirty, and files the editor had not opened that an edit left in
        an unsaved buffer (until their disk holds the edited bytes). Paths as the editor named
        them, in opening order, then the held ones; no duplicates.
        """
        found: list[Path] = []
        seen: set[Path] = set()
        for document in self.store.documents():
            if document.path is not None and document.real_path not in seen and document.dirty:
                seen.add(document.real_path)  # type: ignore[arg-type]
                found.append(document.path)
        for real_path, (_, expected) in list(self.held.items()):
            if real_path in seen or self.store.get(real_path) is not None:
                continue
            disk = await asyncio.to_thread(read_disk, real_path)
            if disk is not None and disk[0] == expected:
                del self.held[real_path]  # saved since
                continue
            found.append(real_path)
        return found

    async def reload_changed(self) -> dict[str, str]:
        """Reload every open clean document whose file changed on disk (after ``bash``).

        Returns the problems of :func:`~pi_lsp.editor.reloads.reload_from_disk` by URI.
        """
        stale = []
        for document in self.store.documents():
            if document.real_path is None:
                continue
            if _disk_unchanged(document):
                continue
            newer = await asyncio.to_thread(self.store.check_disk, document)
            if newer and not document.dirty:
                stale.append(document)
        if not stale:
            return {}
        return await reload_from_disk(stale, self.store, self.connection, self.settings)

def _disk_unchanged(document: Document) -> bool:
    """True when ``DocumentStore.check_disk`` would answer "not newer" without reading the file:
    no path or fingerprint, or the file still has the recorded ``mtime_ns`` and size (one
    ``stat``, cheap enough to run inline). ``False`` means "ask ``check_disk``" (it may hash or
    read the file, so it runs in a worker thread)."""
    fingerprint = document.fingerprint
    if document.real_path is None or fingerprint is None:
        return True
    try:
        stat = os.stat(document.real_path)
    except OSError:
        return False
    return stat.st_mtime_ns == fingerprint.mtime_ns and stat.st_size == fingerprint.size


def _text_of(data: bytes) -> str | None:
    """Strict UTF-8 text of ``data`` without its BOM, ``None`` if not valid UTF-8."""
    decoded = decode_disk_text(data)
    return decoded[0] if decoded is not None else None
