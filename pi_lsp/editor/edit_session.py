"""One edit through the editor: apply, verify, save (design.md section 4 steps 2 to 6).

:func:`run_editor_edit` computes minimal ``TextEdit``\\ s, sends ``workspace/applyEdit`` with a
``label``, waits for the ``didChange`` that shows the change (open documents), and asks the editor
to save (``pi/saveDocuments``) when it can and the buffer was clean before the edit. The whole
apply-verify-save section is shielded from cancellation: a cancel waits for it and then reports
what happened (design.md section 2, "Cancellation").

Outcomes, as the model reads them (notices are whole bracketed lines):

* ``applied: false`` or a JSON-RPC error reply: :class:`ToolError` with the editor's reason;
  nothing is written instead (style.md: no capability-gated fallback to disk after a refusal);
* no reply within ``apply_timeout_seconds``: :class:`ToolError` saying the editor may still apply
  it and the file must be read again before retrying;
* the buffer shows the change: success; with other changes too (the user typed): a warning;
* ``didChange``\\ s arrived but none shows the change: :class:`ToolError`;
* no ``didChange`` at all: success with ``applied by the editor, not yet confirmed``;
* a skipped or impossible save: a notice, never an error; saved bytes that differ from the
  expected ones (a formatter, EOL normalisation): a notice.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from pathlib import Path

from lsprotocol.types import (
    AnnotatedTextEdit,
    ApplyWorkspaceEditParams,
    ChangeAnnotation,
    ApplyWorkspaceEditResult,
    OptionalVersionedTextDocumentIdentifier,
    TextDocumentEdit,
    TextEdit,
    WorkspaceEdit,
)

from pi_lsp.agent.tool import ABORTED_MESSAGE, ToolError
from pi_lsp.editor import save_notices
from pi_lsp.editor.connection import EditorConnection, EditorRequestError, EditorSettings
from pi_lsp.editor.documents import UTF8_BOM, Document, DocumentStore, WaitOutcome, Waiter, read_disk
from pi_lsp.editor.text_edits import edit_spans, minimal_text_edits
from pi_lsp.tools.file_io.file_access import WriteReport
from pi_lsp.tools.file_io.local_files import INLINE_READ_BYTES

CONTEXT = 40
"""Code points of unchanged text on each side of a change that must surround it in the buffer."""

NOT_CONFIRMED = "[Edit applied by the editor, not yet confirmed.]"
OTHER_CHANGES = (
    "[Warning: the editor's buffer also has other changes made meanwhile (the user is typing); "
    "read the file again before the next edit.]"
)


@dataclass(frozen=True)
class EditRequest:
    """Everything one editor edit needs.

    Attributes:
        path: the path as resolved from the model's string (for messages).
        real_path: the resolved real path (store key).
        uri: the document URI to edit (the open document's, or the real path's ``file:`` URI).
        old: the text the edit is computed against (buffer, or disk text without BOM).
        new: the wanted text (no BOM).
        version: the store's version of the open document; ``None`` for an unopened file.
        is_open: the editor has the document open (verification by ``didChange``).
        clean_before: the buffer had no unsaved changes (an unopened file counts as clean).
        has_bom: the file on disk has a UTF-8 BOM (the editor keeps it when saving).
        label: the ``workspace/applyEdit`` label (``pi: edit src/a.py``).
        confirm: when set, the edit is one the user must confirm (issue 18, review before apply):
            its text edits carry a ``ChangeAnnotation`` with ``needsConfirmation`` and this
            description, and whatever part the user accepts is what lands (and is saved).
        confirm_timeout_seconds: with ``confirm``, how long the user may take (the editor answers
            the ``applyEdit`` only once they confirm or discard it); else the apply timeout.
    """

    path: Path
    real_path: Path
    uri: str
    old: str
    new: str
    version: int | None
    is_open: bool
    clean_before: bool
    has_bom: bool
    label: str
    confirm: str | None = None
    confirm_timeout_seconds: float | None = None


def contains_change(old: str, new: str):
    """A predicate: does a buffer text contain the change ``old`` -> ``new``?

    True when the buffer equals ``new``, or when every changed hunk shows in the buffer even though
    the user typed elsewhere: the hunk's new text with up to :data:`CONTEXT` code points of ``new``
    on both sides, or (when the hunk inserts text) on one side only, as the user may have typed
    right next to the other side, occurs in the buffer more often than in ``old``. The hunks and
    their counts in ``old`` are computed on the first call that needs them, not before the edit
    is sent: a buffer equal to ``new`` (the usual case) never needs them, and each count is a pass
    over the whole document.
    """
    hunks: list[list[tuple[str, int]]] = []
    found = False

    def find_hunks() -> None:
        nonlocal found
        found = True
        for _, _, ns, ne in edit_spans(old, new):
            left, right = max(0, ns - CONTEXT), ne + CONTEXT
            one_sided = (new[left:ne], new[ns:right]) if ne > ns else ()  # a deletion has no text of its own
            windows = [w for w in (new[left:right], *one_sided) if w]
            hunks.append([(window, old.count(window)) for window in windows])

    def predicate(document: Document) -> bool:
        text = document.text
        if text == new:
            return True
        if text == old:
            return False
        if not found:
            find_hunks()
        return all(any(text.count(window) > before for window, before in hunk) for hunk in hunks)

    return predicate


REVIEW_ANNOTATION = "pi.review"
"""The ``ChangeAnnotationIdentifier`` of an edit the user must confirm."""


def build_params(request: EditRequest, edits: list[TextEdit], versioned: bool) -> ApplyWorkspaceEditParams:
    """``workspace/applyEdit`` params: a versioned ``TextDocumentEdit`` or the ``changes`` map."""
    if request.confirm is not None:  # annotated edits exist only inside documentChanges
        identifier = OptionalVersionedTextDocumentIdentifier(uri=request.uri, version=request.version)
        annotated: list[TextEdit | AnnotatedTextEdit] = [
            AnnotatedTextEdit(range=e.range, new_text=e.new_text, annotation_id=REVIEW_ANNOTATION) for e in edits
        ]
        edit = WorkspaceEdit(
            document_changes=[TextDocumentEdit(text_document=identifier, edits=annotated)],
            change_annotations={REVIEW_ANNOTATION: ChangeAnnotation(
                label=request.label, needs_confirmation=True, description=request.confirm
            )},
        )
        return ApplyWorkspaceEditParams(edit=edit, label=request.label)
    if versioned:
        identifier = OptionalVersionedTextDocumentIdentifier(uri=request.uri, version=request.version)
        edit = WorkspaceEdit(document_changes=[TextDocumentEdit(text_document=identifier, edits=edits)])
    else:
        edit = WorkspaceEdit(changes={request.uri: edits})
    return ApplyWorkspaceEditParams(edit=edit, label=request.label)


async def run_editor_edit(
    request: EditRequest, store: DocumentStore, connection: EditorConnection, settings: EditorSettings
) -> WriteReport:
    """Apply, verify and save one edit (see the module docstring); shielded from cancellation.

    Raises :class:`ToolError` for refusals, timeouts and failed verification; on a cancel that
    arrives meanwhile, waits for the section and raises ``ToolError`` starting with
    ``Operation aborted`` that says whether the edit was applied.
    """
    features = connection.features
    edits = minimal_text_edits(request.old, request.new, features.position_encoding)
    if not edits:
        return WriteReport(via="editor")
    params = build_params(request, edits, features.versioned_edits)
    predicate = contains_change(request.old, request.new) if request.confirm is None else _any_change(request.old)
    waiter = store.expect_change(request.real_path, predicate) if request.is_open else None
    section = asyncio.ensure_future(_apply_verify_save(request, params, waiter, connection, settings))
    try:
        return await asyncio.shield(section)
    except asyncio.CancelledError:
        try:
            report = await section
        except ToolError as exc:
            raise ToolError(f"{ABORTED_MESSAGE}. The edit was not applied: {exc.message}") from None
        notices = " ".join(report.notices)
        raise ToolError(f"{ABORTED_MESSAGE} after the editor applied the edit of {request.path}. {notices}".strip()) from None


def _any_change(old: str):
    """The predicate of a confirmed edit: any part of it may land, so any change shows it."""
    return lambda document: document.text != old


async def _apply_verify_save(
    request: EditRequest,
    params: ApplyWorkspaceEditParams,
    waiter: Waiter | None,
    connection: EditorConnection,
    settings: EditorSettings,
) -> WriteReport:
    notices: list[str] = []
    try:
        await _apply(request, params, connection, settings)
    except BaseException:
        if waiter is not None:
            waiter.cancel()
        raise
    if request.confirm is not None and waiter is not None:
        return await _confirmed(request, waiter, connection, settings)
    version, others = None, False
    if waiter is not None:
        outcome = await waiter.wait(settings.verify_timeout_seconds)
        if outcome.outcome is WaitOutcome.ABSENT:
            raise ToolError(
                f"The editor reported the edit of {request.path} applied but the buffer does not contain it. "
                "Read the file again before retrying."
            )
        if outcome.outcome is WaitOutcome.NO_CHANGE:
            notices.append(NOT_CONFIRMED)
        else:
            version = outcome.version
            others = outcome.text != request.new
    if others:  # never save the user's own unsaved typing along with the agent's edit
        notices.append(OTHER_CHANGES)
        notices.append(save_notices.user_changes_too(request.path))
    else:
        notices.extend(await _save(request, version, waiter is not None, connection, settings))
    return WriteReport(via="editor", notices=notices)


async def _apply(
    request: EditRequest, params: ApplyWorkspaceEditParams, connection: EditorConnection, settings: EditorSettings
) -> ApplyWorkspaceEditResult:
    """Send the edit; every failure (no reply, error reply, ``applied: false``) is a ToolError."""
    timeout = settings.apply_timeout_seconds
    if request.confirm is not None and request.confirm_timeout_seconds is not None:
        timeout = max(timeout, request.confirm_timeout_seconds)
    try:
        result = await asyncio.wait_for(connection.apply_edit(params), timeout)
    except TimeoutError:
        if request.confirm is not None:
            raise ToolError(
                f"The user did not confirm the change of {request.path} in the editor within {timeout:g} s. "
                "The editor may still apply it if they do: read the file again before retrying."
            ) from None
        raise ToolError(
            f"The editor did not answer the edit of {request.path} within {settings.apply_timeout_seconds:g} s. "
            "It may still apply it: read the file again before retrying."
        ) from None
    except EditorRequestError as exc:
        raise ToolError(f"The editor refused the edit of {request.path}: {exc.message}. Nothing was written.") from None
    except ConnectionError as exc:
        raise ToolError(f"The edit of {request.path} could not be sent to the editor: {exc}. Nothing was written.") from None
    if not getattr(result, "applied", False):
        reason = getattr(result, "failure_reason", None) or "no reason given"
        if request.confirm is not None:
            raise ToolError(
                f"The user declined the change of {request.path} in the editor's preview ({reason}). Nothing was written."
            )
        raise ToolError(f"The editor did not apply the edit to {request.path}: {reason}. Nothing was written.")
    return result


async def _confirmed(
    request: EditRequest, waiter: Waiter, connection: EditorConnection, settings: EditorSettings
) -> WriteReport:
    """After a confirmed edit: the buffer's text is what the user accepted; save that.

    ``WriteReport.landed`` carries the buffer's bytes (with the file's BOM). Nothing landed (the
    user unchecked every change, or the buffer did not change within the verify timeout): the
    landed bytes are the old ones and nothing is saved.
    """
    outcome = await waiter.wait(settings.verify_timeout_seconds)
    landed = outcome.text if outcome.outcome is not WaitOutcome.NO_CHANGE and outcome.text is not None else request.old
    bom = UTF8_BOM if request.has_bom else b""
    report = WriteReport(via="editor", landed=bom + landed.encode("utf-8", "surrogatepass"))
    if landed != request.old:
        report.notices.extend(await _save(replace(request, new=landed), outcome.version, True, connection, settings))
    return report


async def _save(
    request: EditRequest,
    version: int | None,
    confirmed_needed: bool,
    connection: EditorConnection,
    settings: EditorSettings,
) -> list[str]:
    """Design.md section 4 step 6; returns the notices (a save problem is never an error)."""
    features = connection.features
    if not request.clean_before:
        return [save_notices.was_dirty(request.path)]
    if not features.save_documents:
        return [save_notices.cannot_save(request.path)]
    if confirmed_needed and version is None:
        return [save_notices.not_confirmed(request.path)]
    try:
        reply = await asyncio.wait_for(
            connection.save_documents([{"uri": request.uri, "version": version}]), settings.apply_timeout_seconds
        )
    except TimeoutError:
        return [save_notices.save_timed_out(request.path)]
    except (EditorRequestError, ConnectionError) as exc:
        return [save_notices.save_failed(request.path, exc)]
    saved = reply.get("saved") if isinstance(reply, dict) else None
    skipped = reply.get("skipped") if isinstance(reply, dict) else None
    if isinstance(saved, list) and request.uri in saved:
        return await _check_saved_bytes(request)
    for item in skipped if isinstance(skipped, list) else []:
        if isinstance(item, dict) and item.get("uri") == request.uri:
            reason = item.get("reason") or "no reason given"
            return [save_notices.save_skipped(request.path, reason)]
    return [save_notices.save_unreported(request.path)]


async def _check_saved_bytes(request: EditRequest) -> list[str]:
    """Compare the disk after a save with the expected bytes (design.md section 4 step 6)."""
    expected = (UTF8_BOM if request.has_bom else b"") + request.new.encode("utf-8", "surrogatepass")
    if len(expected) <= INLINE_READ_BYTES:  # a small file reads faster than a thread hop (issue 21)
        disk = read_disk(request.real_path)
    else:
        disk = await asyncio.to_thread(read_disk, request.real_path)
    if disk is None:
        return [f"[Saved by the editor, but {request.path} could not be read back from disk.]"]
    if disk[0] != expected:
        return [
            f"[Saved, but the bytes on disk differ from the expected ones: the editor changed {request.path} "
            "when saving (a formatter, line endings or the final newline). Read it again before the next edit.]"
        ]
    return []
