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
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

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
from pi_lsp.editor.connection import EditorConnection, EditorRequestError, EditorSettings
from pi_lsp.editor.documents import DocumentStore, WaitOutcome, Waiter
from pi_lsp.editor.edit_session import NOT_CONFIRMED, OTHER_CHANGES, EditRequest, _check_saved_bytes, contains_change
from pi_lsp.editor.text_edits import minimal_text_edits
from pi_lsp.tools.file_io.file_access import WriteReport

ANNOTATION_ID = "pi"


def build_workspace_params(
    requests: Sequence[EditRequest], edits: Sequence[list[TextEdit]], label: str, annotation: str, versioned: bool
) -> ApplyWorkspaceEditParams:
    """One ``workspace/applyEdit``: a versioned, annotated ``TextDocumentEdit`` per file, or the
    ``changes`` map for clients without ``documentChanges``."""
    if not versioned:
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
            change_annotations={ANNOTATION_ID: ChangeAnnotation(label=annotation, needs_confirmation=False)},
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
) -> list[WriteReport]:
    """Apply, verify and save ``requests`` as one edit; one report per request, in order.

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
        [r for r, _ in pairs], [e for _, e in pairs], label, annotation, connection.features.versioned_edits
    )
    waiters = {
        r.uri: store.expect_change(r.real_path, contains_change(r.old, r.new)) for r, _ in pairs if r.is_open
    }
    section = asyncio.ensure_future(_apply_verify_save([r for r, _ in pairs], params, waiters, connection, settings, label))
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


async def _apply_verify_save(
    requests: list[EditRequest],
    params: ApplyWorkspaceEditParams,
    waiters: dict[str, Waiter],
    connection: EditorConnection,
    settings: EditorSettings,
    label: str,
) -> list[WriteReport]:
    try:
        await _apply(params, connection, settings, label)
    except BaseException:
        for waiter in waiters.values():
            waiter.cancel()
        raise
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
            notices.append(f"[Not saved: the editor's buffer of {request.path} also holds the user's changes.]")
        elif not request.clean_before:
            notices.append(f"[Not saved: the editor's buffer of {request.path} had unsaved changes by the user; it stays unsaved.]")
        elif not connection.features.save_documents:
            notices.append(f"[Applied in the editor and not saved: {request.path} on disk is unchanged until the editor saves it.]")
        elif waiter is not None and version is None:
            notices.append(f"[Not saved: the editor has not confirmed the change of {request.path} yet.]")
        else:
            to_save.append((request, version))
        reports.append(WriteReport(via="editor", notices=notices))
    if to_save:
        saved = await _save(to_save, connection, settings)
        for request, report in zip(requests, reports):
            if request.uri in saved:
                report.notices.extend(saved[request.uri])
    return reports


async def _apply(params: ApplyWorkspaceEditParams, connection: EditorConnection, settings: EditorSettings, label: str) -> None:
    try:
        result = await asyncio.wait_for(connection.apply_edit(params), settings.apply_timeout_seconds)
    except TimeoutError:
        raise ToolError(
            f"The editor did not answer the change ({label}) within {settings.apply_timeout_seconds:g} s. "
            "It may still apply it: read the files again before retrying."
        ) from None
    except EditorRequestError as exc:
        raise ToolError(f"The editor refused the change ({label}): {exc.message}. Nothing was changed.") from None
    except ConnectionError as exc:
        raise ToolError(f"The change ({label}) could not be sent to the editor: {exc}. Nothing was changed.") from None
    if not getattr(result, "applied", False):
        reason = getattr(result, "failure_reason", None) or "no reason given"
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
        return {r.uri: [f"[Not saved: the editor did not answer the save of {r.path} in time.]"] for r, _ in items}
    except (EditorRequestError, ConnectionError) as exc:
        return {r.uri: [f"[Not saved: the editor failed to save {r.path}: {exc}.]"] for r, _ in items}
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
            notices[request.uri] = [f"[Not saved: {reasons[request.uri]}. The change is in the editor's buffer of {request.path} only.]"]
        else:
            notices[request.uri] = [f"[Not saved: the editor did not report saving {request.path}; the change is in its buffer only.]"]
    return notices
