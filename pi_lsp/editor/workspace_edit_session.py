"""Several files changed as ONE ``workspace/applyEdit`` (a language server's rename, issue 17).

The multi-file counterpart of :mod:`pi_lsp.editor.edit_session`, with the same contract per file:
minimal ``TextEdit``\\ s computed against the text each file has now, one versioned
``TextDocumentEdit`` per file (the store's version; ``null`` for a file the editor has not
opened) whose edits carry a ``ChangeAnnotation`` (``label`` = the change, e.g. "Rename a to b"),
so editors that preview can preview. The editor applies it as one change: one undo step per file.
Then, per file: verify the ``didChange`` that shows it (open documents), and save the files whose
buffer was clean before (one ``pi/saveDocuments`` for all of them); a buffer the user left dirty is
never saved. The apply-verify-save section is shielded from cancellation.

Clients that do not advertise ``documentChanges`` (and are not Neovim) get the ``changes`` map,
which carries no versions and no annotations; the ``label`` still names the change.

With ``confirm`` (issue 18, review before apply, a rename reviewed in the editor's refactor
preview), the annotation has ``needsConfirmation`` and that description; the editor may apply any
part of it, so each open document's buffer after the edit is what landed (``WriteReport.landed``)
and that is what is saved.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from dataclasses import replace

from lsprotocol.types import (
    AnnotatedTextEdit,
    ApplyWorkspaceEditParams,
    ChangeAnnotation,
    OptionalVersionedTextDocumentIdentifier,
    TextDocumentEdit,
    TextEdit,
    WorkspaceEdit,
)

from pi_lsp.agent.tool import ABORTED_MESSAGE, ToolError
from pi_lsp.editor import save_notices
from pi_lsp.editor.connection import EditorConnection, EditorRequestError, EditorSettings
from pi_lsp.editor.documents import UTF8_BOM, DocumentStore, WaitOutcome, Waiter
from pi_lsp.editor.edit_session import (
    NOT_CONFIRMED, OTHER_CHANGES, EditRequest, _any_change, _check_saved_bytes, contains_change,
)
from pi_lsp.editor.text_edits import minimal_text_edits
from pi_lsp.tools.file_io.file_access import WriteReport

ANNOTATION_ID = "pi"


def build_workspace_params(
    requests: Sequence[EditRequest], edits: Sequence[list[TextEdit]], label: str, annotation: str, versioned: bool,
    confirm: str | None = None,
) -> ApplyWorkspaceEditParams:
    """One ``workspace/applyEdit``: a versioned, annotated ``TextDocumentEdit`` per file, or the
    ``changes`` map for clients without ``documentChanges``. With ``confirm``, always
    ``documentChanges`` (annotations exist only there) and the annotation needs confirmation,
    with ``confirm`` as its description."""
    if not versioned and confirm is None:
        return ApplyWorkspaceEditParams(
            edit=WorkspaceEdit(changes={r.uri: list(e) for r, e in zip(requests, edits)}), label=label
        )
    changes = [
        TextDocumentEdit(
            text_document=OptionalVersionedTextDocumentIdentifier(uri=request.uri, version=request.version),
            edits=[AnnotatedTextEdit(annotation_id=ANNOTATION_ID, range=e.range, new_text=e.new_text) for e in file_edits],
        )
        for request, file_edits in zip(requests, edits)
    ]
    return ApplyWorkspaceEditParams(
        edit=WorkspaceEdit(
            document_changes=changes,
            change_annotations={ANNOTATION_ID: ChangeAnnotation(
                label=annotation, needs_confirmation=confirm is not None, description=confirm
            )},
        ),
        label=label,
    )


async def run_workspace_edit(
    requests: Sequence[EditRequest],
    label: str,
    annotation: str,
    store: DocumentStore,
    connection: EditorConnection,
    settings: EditorSettings,
    *,
    confirm: str | None = None,
    confirm_timeout_seconds: float | None = None,
) -> list[WriteReport]:
    """Apply, verify and save ``requests`` as one edit; one report per request, in order.

    ``confirm`` (module docstring): the user confirms the edit in the editor, which may answer
    only once they did (up to ``confirm_timeout_seconds``, else the apply timeout); each open
    document's report then carries ``landed`` (its bytes after the edit, with the file's BOM;
    the old bytes when none of its part landed). Unopened files get no ``landed``.

    Raises :class:`ToolError` when the editor refuses or does not answer (nothing was changed, or
    it may still apply it: the message says which); on a cancel meanwhile, waits for the section
    and raises ``ToolError`` starting with ``Operation aborted`` saying whether it was applied.
    """
    encoding = connection.features.position_encoding
    pairs = [(r, minimal_text_edits(r.old, r.new, encoding)) for r in requests]
    pairs = [(r, e) for r, e in pairs if e]
    if not pairs:
        return [WriteReport(via="editor") for _ in requests]
    params = build_workspace_params(
        [r for r, _ in pairs], [e for _, e in pairs], label, annotation, connection.features.versioned_edits, confirm
    )
    waiters = {
        r.uri: store.expect_change(r.real_path, contains_change(r.old, r.new) if confirm is None else _any_change(r.old))
        for r, _ in pairs if r.is_open
    }
    timeout = settings.apply_timeout_seconds
    if confirm is not None and confirm_timeout_seconds is not None:
        timeout = max(timeout, confirm_timeout_seconds)
    applying = _apply(params, connection, timeout, label, confirm is not None)
    if confirm is not None:
        section = asyncio.ensure_future(_apply_confirmed([r for r, _ in pairs], applying, waiters, connection, settings))
    else:
        section = asyncio.ensure_future(_apply_verify_save([r for r, _ in pairs], applying, waiters, connection, settings))
    try:
        reports = await asyncio.shield(section)
    except asyncio.CancelledError:
        try:
            await section
        except ToolError as exc:
            raise ToolError(f"{ABORTED_MESSAGE}. Nothing was changed: {exc.message}") from None
        raise ToolError(f"{ABORTED_MESSAGE} after the editor applied the change ({label}).") from None
    by_uri = dict(zip((r.uri for r, _ in pairs), reports))
    return [by_uri.get(r.uri, WriteReport(via="editor")) for r in requests]


async def _send(applying: Awaitable[None], waiters: dict[str, Waiter]) -> None:
    """Await the ``applyEdit``; on any failure, stop waiting for any ``didChange``."""
    try:
        await applying
    except BaseException:
        for waiter in waiters.values():
            waiter.cancel()
        raise


async def _apply_confirmed(
    requests: list[EditRequest],
    applying: Awaitable[None],
    waiters: dict[str, Waiter],
    connection: EditorConnection,
    settings: EditorSettings,
) -> list[WriteReport]:
    """After an edit the user confirmed: each open buffer holds what they accepted; save those
    that changed and were clean before (the single-file rule of ``edit_session``)."""
    await _send(applying, waiters)
    outcomes = await asyncio.gather(*(
        waiters[r.uri].wait(settings.verify_timeout_seconds) for r in requests if r.uri in waiters
    ))
    by_uri = dict(zip((r.uri for r in requests if r.uri in waiters), outcomes))
    reports: list[WriteReport] = []
    to_save: list[tuple[EditRequest, int | None]] = []
    for request in requests:
        outcome = by_uri.get(request.uri)
        if outcome is None:  # not open: no didChange shows what the user kept
            reports.append(WriteReport(via="editor", notices=[
                f"[{request.path} is not open in the editor: read it to see which part of the change the user kept.]"
            ]))
            continue
        changed = outcome.outcome is not WaitOutcome.NO_CHANGE and outcome.text is not None
        landed = outcome.text if changed and outcome.text is not None else request.old
        bom = UTF8_BOM if request.has_bom else b""
        report = WriteReport(via="editor", landed=bom + landed.encode("utf-8", "surrogatepass"))
        reports.append(report)
        if landed == request.old:
            continue
        kept = replace(request, new=landed)
        if not request.clean_before:
            report.notices.append(save_notices.was_dirty(request.path))
        elif not connection.features.save_documents:
            report.notices.append(save_notices.cannot_save(request.path))
        else:
            to_save.append((kept, outcome.version))
    if to_save:
        saved = await _save(to_save, connection, settings)
        for request, report in zip(requests, reports):
            if request.uri in saved:
                report.notices.extend(saved[request.uri])
    return reports


async def _apply_verify_save(
    requests: list[EditRequest],
    applying: Awaitable[None],
    waiters: dict[str, Waiter],
    connection: EditorConnection,
    settings: EditorSettings,
) -> list[WriteReport]:
    await _send(applying, waiters)
    reports: list[WriteReport] = []
    to_save: list[tuple[EditRequest, int | None]] = []
    for request in requests:
        notices: list[str] = []
        waiter = waiters.get(request.uri)
        version, others = None, False
        if waiter is not None:
            outcome = await waiter.wait(settings.verify_timeout_seconds)
            if outcome.outcome is WaitOutcome.ABSENT:
                notices.append(
                    f"[The editor reported the change of {request.path} applied but its buffer does not contain it; "
                    "read the file again.]"
                )
                reports.append(WriteReport(via="editor", notices=notices))
                continue
            if outcome.outcome is WaitOutcome.NO_CHANGE:
                notices.append(NOT_CONFIRMED)
            else:
                version = outcome.version
                others = outcome.text != request.new
        if others:
            notices.append(OTHER_CHANGES)
            notices.append(save_notices.user_changes_too(request.path))
        elif not request.clean_before:
            notices.append(save_notices.was_dirty(request.path))
        elif not connection.features.save_documents:
            notices.append(save_notices.cannot_save(request.path))
        elif waiter is not None and version is None:
            notices.append(save_notices.not_confirmed(request.path, "change"))
        else:
            to_save.append((request, version))
        reports.append(WriteReport(via="editor", notices=notices))
    if to_save:
        saved = await _save(to_save, connection, settings)
        for request, report in zip(requests, reports):
            if request.uri in saved:
                report.notices.extend(saved[request.uri])
    return reports


async def _apply(
    params: ApplyWorkspaceEditParams, connection: EditorConnection, timeout: float, label: str, confirm: bool
) -> None:
    try:
        result = await asyncio.wait_for(connection.apply_edit(params), timeout)
    except TimeoutError:
        if confirm:
            raise ToolError(
                f"The user did not confirm the change ({label}) in the editor within {timeout:g} s. "
                "The editor may still apply it if they do: read the files again before retrying."
            ) from None
        raise ToolError(
            f"The editor did not answer the change ({label}) within {timeout:g} s. "
            "It may still apply it: read the files again before retrying."
        ) from None
    except EditorRequestError as exc:
        raise ToolError(f"The editor refused the change ({label}): {exc.message}. Nothing was changed.") from None
    except ConnectionError as exc:
        raise ToolError(f"The change ({label}) could not be sent to the editor: {exc}. Nothing was changed.") from None
    if not getattr(result, "applied", False):
        reason = getattr(result, "failure_reason", None) or "no reason given"
        if confirm:
            raise ToolError(f"The user declined the change ({label}) in the editor's preview ({reason}). Nothing was changed.")
        raise ToolError(f"The editor did not apply the change ({label}): {reason}. Nothing was changed.")


async def _save(
    items: list[tuple[EditRequest, int | None]], connection: EditorConnection, settings: EditorSettings
) -> dict[str, list[str]]:
    """One ``pi/saveDocuments`` for every file to save; the notices per URI (a save problem is
    never an error)."""
    documents = [{"uri": request.uri, "version": version} for request, version in items]
    try:
        reply = await asyncio.wait_for(connection.save_documents(documents), settings.apply_timeout_seconds)
    except TimeoutError:
        return {r.uri: [save_notices.save_timed_out(r.path)] for r, _ in items}
    except (EditorRequestError, ConnectionError) as exc:
        return {r.uri: [save_notices.save_failed(r.path, exc)] for r, _ in items}
    saved = reply.get("saved") if isinstance(reply, dict) else None
    skipped = reply.get("skipped") if isinstance(reply, dict) else None
    reasons = {
        item.get("uri"): item.get("reason") or "no reason given"
        for item in skipped if isinstance(item, dict)
    } if isinstance(skipped, list) else {}
    notices: dict[str, list[str]] = {}
    for request, _ in items:
        if isinstance(saved, list) and request.uri in saved:
            notices[request.uri] = await _check_saved_bytes(request)
        elif request.uri in reasons:
            notices[request.uri] = [save_notices.save_skipped(request.path, reasons[request.uri])]
        else:
            notices[request.uri] = [save_notices.save_unreported(request.path)]
    return notices
