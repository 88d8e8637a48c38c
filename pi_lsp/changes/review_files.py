"""Review before apply for a change of several files at once (``rename``; issue 18, ``pi.edit.review: before``).

:meth:`ReviewingFileAccess.write_files <pi_lsp.changes.review_before.ReviewingFileAccess.write_files>`
runs :func:`review_write_files`. The change stays ONE write of all its files (one
``workspace/applyEdit`` in the daemon) wherever the editor's way of reviewing allows it:

- ``"after"``: no review; ``"unsupported"``: written at once with the not-reviewed notice;
- ``"request"``: each file's hunks (lines 0-based) are proposed in turn, one ``pi/reviewEdit``
  per file under the same tool call; then the accepted hunks of every file are written as one
  change, and files with no accepted hunk are left out (their report's ``landed`` is their old
  bytes, so the change journal records nothing for them). Nothing accepted in any file, a file
  that changed while the user reviewed, a timeout or an abort: nothing is written and the tool
  fails (a timeout or abort also withdraws the proposal under review);
- ``"annotation"``: the files open in the editor are sent as one edit whose change annotation
  needs confirmation (VS Code's refactor preview); what landed in each is read back from its
  buffer (``WriteReport.landed``). Files the editor has not opened cannot be confirmed there (no
  ``didChange`` would show what the user kept): they are written after the confirmed edit
  landed, with a notice saying they were not reviewed, and not at all when the user declined it
  (if they cannot be written then, :class:`~pi_lsp.changes.journaling_files.PartialWrite` says
  what landed, so the journal still records it).

Files whose old or new content is not UTF-8 are not reviewed; they are written with the others,
with a notice. Notices tell the model, per file, which hunks were rejected and why.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from pi_lsp.agent.tool import ToolContext, ToolError
from pi_lsp.changes.change_set import Hunk, decode, diff_hunks, split_lines
from pi_lsp.changes.journaling_files import PartialWrite, tool_of
from pi_lsp.changes.review_before import (
    NOT_REVIEWED, Decision, ReviewingFileAccess, ReviewProposal, apply_hunks, rejection_lines,
)
from pi_lsp.tools.file_io.file_access import FileWrite, WriteReport

CONFIRM_DESCRIPTION = "Proposed by the agent: review the change"
"""The ``ChangeAnnotation.description`` of an edit the user confirms in the editor."""


@dataclass
class FilePlan:
    """One file of the change: its hunks against the old text (``old_lines`` is ``None`` when
    the old or new content is not UTF-8: the file is not reviewed)."""

    write: FileWrite
    old_lines: list[str] | None
    hunks: list[Hunk]

    @property
    def reviewed(self) -> bool:
        return self.old_lines is not None and bool(self.hunks)


def plan_file(write: FileWrite) -> FilePlan:
    """Split ``write`` into hunks against ``write.previous`` (the bytes the tool computed from)."""
    old_text, new_text = decode(write.previous.data), decode(write.data)
    if old_text is None or new_text is None:
        return FilePlan(write, None, [])
    old_lines = split_lines(old_text)
    return FilePlan(write, old_lines, diff_hunks(str(write.path), old_lines, split_lines(new_text)))


def not_utf8_notice(plan: FilePlan) -> str:
    """The notice of a file that was written without review because it is not UTF-8 text."""
    return f"[Not reviewed: {plan.write.path} is not UTF-8 text; its change was applied as proposed.]"


async def write_all(
    inner: Any, writes: list[FileWrite], label: str, annotation: str, ctx: ToolContext | None, **confirm: Any
) -> list[WriteReport]:
    """``inner.write_files`` (one change), or one ``inner.write`` per file when it has none."""
    if not writes:
        return []
    write_files = getattr(inner, "write_files", None)
    if write_files is not None:
        return await write_files(writes, label=label, annotation=annotation, ctx=ctx, **confirm)
    return [await inner.write(w.path, w.data, previous=w.previous, label=label, ctx=ctx) for w in writes]


async def review_write_files(
    access: ReviewingFileAccess, writes: list[FileWrite], label: str, annotation: str, ctx: ToolContext | None
) -> list[WriteReport]:
    """The module docstring's rules; one report per write, in order. Raises ToolError when
    nothing was written because of the review (and whatever the inner write raises)."""
    reviewer = access.reviewer
    mode = reviewer.mode() if ctx is not None and reviewer is not None else "after"
    if mode == "after":
        return await write_all(access.inner, writes, label, annotation, ctx)
    if mode == "unsupported":
        reports = await write_all(access.inner, writes, label, annotation, ctx)
        if reports:
            reports[-1].notices.append(NOT_REVIEWED)
        return reports
    assert ctx is not None
    plans = [plan_file(w) for w in writes]
    if not any(p.reviewed for p in plans):
        reports = await write_all(access.inner, writes, label, annotation, ctx)
        for plan, report in zip(plans, reports):
            if plan.old_lines is None:
                report.notices.append(not_utf8_notice(plan))
        return reports
    if mode == "annotation":
        return await _confirm_in_editor(access, plans, label, annotation, ctx)
    return await _request(access, plans, label, annotation, ctx)


def _rejections(plans: list[FilePlan], decisions: list[dict[str, Decision]]) -> str:
    parts = []
    for plan, decided in zip(plans, decisions):
        if plan.reviewed:
            lines = rejection_lines(plan.write.path, plan.hunks, decided)
            if lines:
                parts.append(f"{plan.write.path}:\n" + "\n".join(lines))
    return "\n".join(parts)


async def _request(
    access: ReviewingFileAccess, plans: list[FilePlan], label: str, annotation: str, ctx: ToolContext
) -> list[WriteReport]:
    """``pi/reviewEdit`` per file, then one write of every accepted hunk."""
    assert access.reviewer is not None
    tool = tool_of(label)
    decisions: list[dict[str, Decision]] = []
    for plan in plans:
        if not plan.reviewed:
            decisions.append({})
            continue
        proposal = ReviewProposal(
            uuid.uuid4().hex, ctx.session_id, ctx.tool_call_id, tool, plan.write.path, plan.hunks,
            access.reviewer.timeout_seconds,
        )
        decisions.append(await access._decide(proposal, ctx))
    accepted = [
        {h.id for h in plan.hunks if (d := decided.get(h.id)) is not None and d.accept}
        for plan, decided in zip(plans, decisions)
    ]
    if not any(accepted):
        raise ToolError(
            f"The user rejected the {tool}: no hunk was accepted in any file, nothing was written.\n"
            + _rejections(plans, decisions)
        )
    writing: list[tuple[int, FileWrite]] = []
    for index, (plan, kept) in enumerate(zip(plans, accepted)):
        if plan.reviewed and not kept:
            continue
        if await access._current(plan.write.path) != plan.write.previous.data:
            raise ToolError(
                f"{plan.write.path} changed while the user reviewed the {tool}. Nothing was written; "
                "read the file again and retry."
            )
        data = plan.write.data
        if plan.reviewed and len(kept) < len(plan.hunks):
            assert plan.old_lines is not None
            data = apply_hunks(plan.old_lines, plan.hunks, kept).encode("utf-8", "surrogatepass")
        writing.append((index, FileWrite(path=plan.write.path, data=data, previous=plan.write.previous)))
    written = await write_all(access.inner, [w for _, w in writing], label, annotation, ctx)
    by_index = {index: (write, report) for (index, write), report in zip(writing, written)}
    reports: list[WriteReport] = []
    for index, (plan, kept, decided) in enumerate(zip(plans, accepted, decisions)):
        path = plan.write.path
        if index not in by_index:  # every hunk rejected: left out, unchanged
            reports.append(WriteReport(landed=plan.write.previous.data, notices=[
                f"[Reviewed: the user rejected every hunk of the {tool} in {path}; it was not changed. Rejected:\n"
                + "\n".join(rejection_lines(path, plan.hunks, decided)) + "]"
            ]))
            continue
        write, report = by_index[index]
        if plan.old_lines is None:
            report.notices.append(not_utf8_notice(plan))
        elif write.data != plan.write.data:
            report.landed = write.data
            report.notices.append(
                f"[Reviewed: the user accepted {len(kept)} of {len(plan.hunks)} hunks; {path} holds only those. "
                "Rejected (not applied):\n" + "\n".join(rejection_lines(path, plan.hunks, decided))
                + "\nRead the file before changing it again.]"
            )
        reports.append(report)
    return reports


async def _confirm_in_editor(
    access: ReviewingFileAccess, plans: list[FilePlan], label: str, annotation: str, ctx: ToolContext
) -> list[WriteReport]:
    """One edit to confirm for the open files, then the others (module docstring)."""
    assert access.reviewer is not None
    tool = tool_of(label)
    state_of = getattr(access.inner, "state_of", None)
    confirmable: list[int] = []
    if state_of is not None and getattr(access.inner, "write_files", None) is not None:
        for index, plan in enumerate(plans):
            if plan.reviewed and (await state_of(plan.write.path))[1] is not None:
                confirmable.append(index)
    others = [i for i in range(len(plans)) if i not in confirmable]
    reports: dict[int, WriteReport] = {}
    if confirmable:
        confirmed = await write_all(
            access.inner, [plans[i].write for i in confirmable], label, annotation, ctx,
            confirm=CONFIRM_DESCRIPTION, confirm_timeout_seconds=access.reviewer.timeout_seconds,
        )
        decisions: list[dict[str, Decision]] = []
        landed_any = False
        for index, report in zip(confirmable, confirmed):
            plan = plans[index]
            assert plan.old_lines is not None
            landed = plan.write.data if report.landed is None else report.landed
            landed_text = decode(landed)
            landed_ids = {h.id for h in diff_hunks(str(plan.write.path), plan.old_lines, split_lines(landed_text or ""))}
            kept = [h for h in plan.hunks if h.id in landed_ids]
            decisions.append({h.id: Decision(True) for h in kept})
            landed_any = landed_any or landed != plan.write.previous.data
            if len(kept) == len(plan.hunks) and landed == plan.write.data:
                report.landed = None
            else:
                report.notices.append(
                    f"[Reviewed in the editor: {len(kept)} of {len(plan.hunks)} hunks landed in {plan.write.path}. "
                    "Not applied:\n" + "\n".join(rejection_lines(plan.write.path, plan.hunks, decisions[-1]))
                    + "\nRead the file before changing it again.]"
                )
            reports[index] = report
        if not landed_any:
            raise ToolError(
                f"The user rejected the {tool} in the editor's preview: nothing was written.\n"
                + _rejections([plans[i] for i in confirmable], decisions)
            )
    try:
        written = await write_all(access.inner, [plans[i].write for i in others], label, annotation, ctx)
    except (ToolError, OSError) as exc:
        if not confirmable:
            raise
        now = {i: plans[i].write.data if reports[i].landed is None else reports[i].landed for i in confirmable}
        changed = ", ".join(str(plans[i].write.path) for i, data in now.items() if data != plans[i].write.previous.data)
        message = exc.message if isinstance(exc, ToolError) else str(exc)
        raise PartialWrite(
            f"The {tool} landed in {changed} as the user confirmed it, but the files not open in the editor were "
            f"not changed: {message} Read them before retrying.",
            now,
        ) from None
    for index, report in zip(others, written):
        plan = plans[index]
        if plan.old_lines is None:
            report.notices.append(not_utf8_notice(plan))
        elif plan.hunks:
            report.notices.append(
                f"[Not reviewed: {plan.write.path} is not open in the editor, which can only confirm changes to "
                f"open files; it was changed at once{' with the confirmed rest' if confirmable else ''}.]"
            )
        reports[index] = report
    return [reports[i] for i in range(len(plans))]
