"""Review before apply (issue 18, ``pi.edit.review: before``): an edit or write is a proposal first.

:class:`ReviewingFileAccess` wraps the ``FileAccess`` the tools write through. For a tool call's
write it asks its :class:`EditReviewer` which way the editor can review:

- ``"after"``: no review (the default setting): the write goes through as before;
- ``"request"``: the change is split into hunks (lines 0-based, as in ``pi/changes``) and proposed
  with :meth:`EditReviewer.ask`; only the hunks the user accepts are applied, through the same
  write path (versioned edit, dirty buffers respected). A hunk without a decision is rejected.
  No hunk accepted, no answer within the timeout, or an abort: nothing is written and the tool
  fails with a message saying so (a timeout or abort also withdraws the proposal);
- ``"annotation"``: the write is sent as an edit the editor must confirm (LSP change annotations
  with ``needsConfirmation``); the editor reports the bytes that landed (``WriteReport.landed``)
  and the result says which hunks the user left out;
- ``"unsupported"``: the setting asks for a review the editor cannot show: the write goes through
  with a notice saying it was not reviewed.

The result's notices tell the model which hunks were rejected and the user's reasons, and
``WriteReport.landed`` carries the bytes actually written so the change journal records them.
Files whose old or new content is not UTF-8 are not reviewed (a notice says so).
A change of several files at once (``rename``, ``write_files``) is reviewed the same ways, as
one change: :mod:`pi_lsp.changes.review_files`.
"""

from __future__ import annotations

import asyncio
import errno
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from pi_lsp.agent.tool import ABORTED_MESSAGE, ToolContext, ToolError
from pi_lsp.changes.change_set import Hunk, decode, diff_hunks, split_lines
from pi_lsp.changes.journaling_files import peek, tool_of
from pi_lsp.tools.file_io.file_access import FileAccess, FileSnapshot, FileWrite, WriteReport

ReviewMode = Literal["after", "request", "annotation", "unsupported"]

NOT_REVIEWED = (
    "[Not reviewed: pi.edit.review is \"before\" but this editor can show neither a review (pi/reviewEdit) "
    "nor an edit to confirm (change annotations); the change was applied at once.]"
)


@dataclass(frozen=True)
class ReviewProposal:
    """One proposed change: ``hunks`` turn the file's current text into the proposed one.

    ``timeout_seconds`` is how long the user has; ``review_id`` names it on the wire.
    """

    review_id: str
    session_id: str
    tool_call_id: str
    tool_name: str
    path: Path
    hunks: list[Hunk]
    timeout_seconds: float

    def hunks_to_wire(self) -> list[dict[str, Any]]:
        """``[{id, oldStart, oldLines, newStart, newLines, oldText, newText}]`` (0-based lines)."""
        wire = []
        for hunk in self.hunks:
            item = hunk.to_wire()
            item.pop("status", None)
            item.pop("currentStart", None)
            wire.append(item)
        return wire


@dataclass(frozen=True)
class Decision:
    """The user's answer for one hunk: ``accept`` or ``reject``, with an optional reason."""

    accept: bool
    reason: str | None = None


class EditReviewer(Protocol):
    """The editor side of a review (the daemon implements it over ``pi/reviewEdit``)."""

    def mode(self) -> ReviewMode:
        """How the next write is reviewed (setting and client capabilities)."""
        ...

    @property
    def timeout_seconds(self) -> float:
        """How long to wait for the user's decisions (``pi.edit.reviewTimeoutSeconds``)."""
        ...

    async def ask(self, proposal: ReviewProposal) -> dict[str, Decision]:
        """Show the proposal; return the decisions by hunk id (missing ids are rejections).

        May be cancelled (timeout, abort); must not raise for a dismissed review (return ``{}``).
        """
        ...

    def withdraw(self, proposal: ReviewProposal, reason: Literal["timeout", "aborted"]) -> None:
        """Tell the editor to close the proposal's review; must not raise."""
        ...


def apply_hunks(before: list[str], hunks: list[Hunk], accepted: set[str]) -> str:
    """``before`` (lines with endings) with the ``accepted`` hunks (by id) applied.

    ``hunks`` come from :func:`diff_hunks` over ``before``: ordered, not overlapping.
    """
    out: list[str] = []
    position = 0
    for hunk in hunks:
        if hunk.id not in accepted:
            continue
        out.extend(before[position:hunk.old_start])
        out.extend(hunk.new_lines)
        position = hunk.old_start + len(hunk.old_lines)
    out.extend(before[position:])
    return "".join(out)


def describe(hunk: Hunk, index: int, total: int) -> str:
    """``hunk 2 of 3 (old lines 5-6, new lines 5-7)``: 1-based lines, as a model reads them."""
    def span(start: int, count: int) -> str:
        if count == 0:
            return f"none, at {start + 1}"
        return f"{start + 1}" if count == 1 else f"{start + 1}-{start + count}"
    return f"hunk {index} of {total} (old lines {span(hunk.old_start, len(hunk.old_lines))}, " \
           f"new lines {span(hunk.new_start, len(hunk.new_lines))})"


def rejection_lines(path: Path, hunks: list[Hunk], decisions: dict[str, Decision]) -> list[str]:
    """One line per rejected hunk, with the user's reason when given."""
    lines = []
    for index, hunk in enumerate(hunks, 1):
        decision = decisions.get(hunk.id)
        if decision is not None and decision.accept:
            continue
        reason = decision.reason if decision is not None and decision.reason else None
        lines.append(f"- {describe(hunk, index, len(hunks))}" + (f": the user said: {reason}" if reason else ""))
    return lines


class ReviewingFileAccess:
    """A :class:`FileAccess` that has the user review a tool call's writes first (module docstring).

    Every other attribute is the wrapped one's.
    """

    def __init__(self, inner: FileAccess, reviewer: EditReviewer | None) -> None:
        self.inner = inner
        self.reviewer = reviewer

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
        if not remember:
            return peek(self.inner, path)
        return self.inner.read(path, ctx, real_path=real_path)

    async def write_files(
        self, writes: list[FileWrite], *, label: str, annotation: str, ctx: ToolContext | None = None
    ) -> list[WriteReport]:
        """Several files as one change (``rename``), reviewed first: :mod:`pi_lsp.changes.review_files`."""
        from pi_lsp.changes.review_files import review_write_files  # it builds on this module

        return await review_write_files(self, writes, label, annotation, ctx)

    async def write(
        self, path: Path, data: bytes, *, previous: FileSnapshot | None, label: str,
        ctx: ToolContext | None = None,
    ) -> WriteReport:
        mode: ReviewMode = self.reviewer.mode() if ctx is not None and self.reviewer is not None else "after"
        if mode == "after":
            return await self.inner.write(path, data, previous=previous, label=label, ctx=ctx)
        if mode == "unsupported":
            report = await self.inner.write(path, data, previous=previous, label=label, ctx=ctx)
            report.notices.append(NOT_REVIEWED)
            return report
        assert ctx is not None and self.reviewer is not None
        before = previous.data if previous is not None else await self._current(path)
        before_text = "" if before is None else decode(before)
        new_text = decode(data)
        if before_text is None or new_text is None:
            report = await self.inner.write(path, data, previous=previous, label=label, ctx=ctx)
            report.notices.append(f"[Not reviewed: {path} is not UTF-8 text; the change was applied at once.]")
            return report
        old_lines = split_lines(before_text)
        hunks = diff_hunks(str(path), old_lines, split_lines(new_text))
        if not hunks:
            return await self.inner.write(path, data, previous=previous, label=label, ctx=ctx)
        tool = tool_of(label)
        if mode == "annotation":
            return await self._confirm_in_editor(path, data, previous, label, ctx, old_lines, hunks)
        proposal = ReviewProposal(
            uuid.uuid4().hex, ctx.session_id, ctx.tool_call_id, tool, path, hunks, self.reviewer.timeout_seconds
        )
        decisions = await self._decide(proposal, ctx)
        accepted = {h.id for h in hunks if (d := decisions.get(h.id)) is not None and d.accept}
        rejected = rejection_lines(path, hunks, decisions)
        if not accepted:
            raise ToolError(
                f"The user rejected the {tool} of {path}: no hunk was accepted, nothing was written.\n"
                + "\n".join(rejected)
            )
        if await self._current(path) != before:
            raise ToolError(
                f"{path} changed while the user reviewed the {tool}. Nothing was written; read the file again and retry."
            )
        composed = data if len(accepted) == len(hunks) else apply_hunks(old_lines, hunks, accepted).encode("utf-8")
        report = await self.inner.write(path, composed, previous=previous, label=label, ctx=ctx)
        if composed != data:
            report.landed = composed
            report.notices.append(
                f"[Reviewed: the user accepted {len(accepted)} of {len(hunks)} hunks; {path} holds only those. "
                "Rejected (not applied):\n" + "\n".join(rejected) + "\nRead the file before changing it again.]"
            )
        return report

    async def _current(self, path: Path) -> bytes | None:
        try:
            return (await peek(self.inner, path)).data
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                raise
            return None

    async def _decide(self, proposal: ReviewProposal, ctx: ToolContext) -> dict[str, Decision]:
        """The user's decisions; a timeout or an abort withdraws the proposal and raises ToolError."""
        assert self.reviewer is not None
        asking = asyncio.ensure_future(self.reviewer.ask(proposal))
        aborted = asyncio.ensure_future(ctx.signal.wait())
        try:
            done, _ = await asyncio.wait({asking, aborted}, timeout=proposal.timeout_seconds,
                                         return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            asking.cancel()
            self.reviewer.withdraw(proposal, "aborted")
            raise
        finally:
            aborted.cancel()
        if asking in done:
            return asking.result()
        asking.cancel()
        if aborted in done:
            self.reviewer.withdraw(proposal, "aborted")
            raise ToolError(f"{ABORTED_MESSAGE}. The {proposal.tool_name} of {proposal.path} was under review; nothing was written.")
        self.reviewer.withdraw(proposal, "timeout")
        raise ToolError(
            f"The user did not review the {proposal.tool_name} of {proposal.path} within "
            f"{proposal.timeout_seconds:g} s. Nothing was written."
        )

    async def _confirm_in_editor(
        self, path: Path, data: bytes, previous: FileSnapshot | None, label: str, ctx: ToolContext,
        old_lines: list[str], hunks: list[Hunk],
    ) -> WriteReport:
        """The change-annotation path: the editor shows it for confirmation and reports what landed."""
        report = await self.inner.write(  # type: ignore[call-arg]
            path, data, previous=previous, label=label, ctx=ctx, confirm="Proposed by the agent: review the change",
            confirm_timeout_seconds=self.reviewer.timeout_seconds if self.reviewer is not None else None,
        )
        if report.landed is None:
            return report  # not confirmable there (a file not open in the editor); the notice says so
        landed_text = decode(report.landed)
        landed_ids = {h.id for h in diff_hunks(str(path), old_lines, split_lines(landed_text or ""))}
        kept = [h for h in hunks if h.id in landed_ids]
        if len(kept) == len(hunks) and report.landed == data:
            report.landed = None
            return report
        decisions = {h.id: Decision(True) for h in kept}
        rejected = rejection_lines(path, hunks, decisions)
        if not kept and landed_text is not None and landed_text == "".join(old_lines):
            raise ToolError(
                f"The user rejected the change of {path} in the editor's preview: nothing was written.\n"
                + "\n".join(rejected)
            )
        report.notices.append(
            f"[Reviewed in the editor: {len(kept)} of {len(hunks)} hunks landed in {path}. Not applied:\n"
            + "\n".join(rejected) + "\nRead the file before changing it again.]"
        )
        return report
