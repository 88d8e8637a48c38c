"""``JournalingFileAccess``: the ``FileAccess`` seam that records every write in the change journal.

It wraps the real ``FileAccess`` (the editor's or the filesystem's): a write by ``edit`` or ``write``
is recorded with the bytes it started from (the snapshot the tool read, or the current content for
a blind ``write``; nothing when the file did not exist) and the bytes written, under the tool
call's session and the session's current turn (when the user reviewed the change, the bytes that
landed, ``WriteReport.landed``). Reads and access checks pass through unchanged.
A failed write records nothing, except what a :class:`PartialWrite` says landed.
"""

from __future__ import annotations

import errno
import inspect
from collections.abc import Awaitable
from pathlib import Path

from pi_lsp.agent.tool import ToolContext, ToolError
from pi_lsp.changes.journal import ChangeJournal
from pi_lsp.tools.file_io.file_access import FileAccess, FileSnapshot, FileWrite, WriteReport


async def peek(files: FileAccess, path: Path) -> FileSnapshot:
    """Read ``path`` without the side effect of a model's read (the editor's ``remember=False``)."""
    if "remember" in inspect.signature(files.read).parameters:
        return await files.read(path, remember=False)  # type: ignore[call-arg]
    return await files.read(path)  # a FileAccess without such state (the filesystem's)


def tool_of(label: str) -> str:
    """The tool's name in a write label (``pi: rename a to b`` -> ``rename``; ``write`` when the
    label names none)."""
    return label.split(":", 1)[-1].strip().split(" ", 1)[0] or "write"


class PartialWrite(ToolError):
    """A multi-file write that failed after part of it landed (a rename the user confirmed in the
    editor whose other files could not be written): ``landed`` maps indexes into the writes to
    the bytes now in those files, so the journal records them before the error reaches the tool."""

    def __init__(self, message: str, landed: dict[int, bytes]) -> None:
        super().__init__(message)
        self.landed = landed


class JournalingFileAccess:
    """A :class:`FileAccess` that journals writes; every other attribute is the wrapped one's."""

    def __init__(self, inner: FileAccess, journal: ChangeJournal) -> None:
        self.inner = inner
        self.journal = journal

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def access(self, path: Path, *, write: bool = False) -> Awaitable[None]:
        """The wrapped ``access`` (its awaitable, handed on without a coroutine of its own: a tool
        call awaits one layer, not three; issue 21)."""
        return self.inner.access(path, write=write)

    def read(
        self, path: Path, ctx: ToolContext | None = None, *, remember: bool = True, real_path: str | None = None
    ) -> Awaitable[FileSnapshot]:
        """The wrapped ``read`` (its awaitable, as :meth:`access`); ``remember=False``: :func:`peek`."""
        if not remember:  # on a tool's behalf (the language tools' lookups), not the model's read
            return peek(self.inner, path)
        return self.inner.read(path, ctx, real_path=real_path)

    async def write_files(
        self, writes: list[FileWrite], *, label: str, annotation: str, ctx: ToolContext | None = None
    ) -> list[WriteReport]:
        """Several files as one change (``rename``); each file journaled as the tool call's change,
        with the bytes that landed (a review may have kept less, or nothing: then no entry).
        A FileAccess without ``write_files`` gets one ``write`` per file (each journaled)."""
        write_files = getattr(self.inner, "write_files", None)
        if write_files is None:
            return [await self.write(w.path, w.data, previous=w.previous, label=label, ctx=ctx) for w in writes]
        befores = [self.journal.digest(w.previous.data) for w in writes]
        try:
            reports = await write_files(writes, label=label, annotation=annotation, ctx=ctx)
        except PartialWrite as exc:
            self._record_landed(writes, befores, exc.landed, label, ctx)
            raise
        landed = {i: w.data if r.landed is None else r.landed for i, (w, r) in enumerate(zip(writes, reports))}
        self._record_landed(writes, befores, landed, label, ctx)
        return reports

    def _record_landed(
        self, writes: list[FileWrite], befores: list[str | None], landed: dict[int, bytes], label: str,
        ctx: ToolContext | None,
    ) -> None:
        """Journal each file whose landed bytes differ from those it had (by index into ``writes``)."""
        if ctx is None:
            return
        tool = tool_of(label)
        for index, data in sorted(landed.items()):
            write = writes[index]
            if data != write.previous.data:
                self.journal.record(
                    ctx.session_id, ctx.tool_call_id, tool, write.path, befores[index], self.journal.digest(data)
                )

    async def write(
        self, path: Path, data: bytes, *, previous: FileSnapshot | None, label: str,
        ctx: ToolContext | None = None,
    ) -> WriteReport:
        if ctx is None:  # not a tool call (a revert): nothing to journal
            return await self.inner.write(path, data, previous=previous, label=label, ctx=ctx)
        before: bytes | None
        if previous is not None:
            before = previous.data
        else:
            try:
                # no ctx: journaling must not count as the session having read the buffer (a write
                # to a dirty buffer is refused until the session read it, design.md section 4)
                before = (await peek(self.inner, path)).data
            except OSError as exc:
                if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                    raise
                before = None
        before_digest = self.journal.digest(before)
        report = await self.inner.write(path, data, previous=previous, label=label, ctx=ctx)
        tool = tool_of(label)
        landed = data if report.landed is None else report.landed  # a review may have kept less
        if landed != before:
            self.journal.record(
                ctx.session_id, ctx.tool_call_id, tool, path, before_digest, self.journal.digest(landed)
            )
        return report
