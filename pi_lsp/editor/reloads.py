"""Bringing the editor's clean buffers up to date with their files (design.md sections 3 and 5).

When a file the editor holds changes on disk behind a clean buffer (``bash`` rewrote it, a disk
write of ``write``, another program), the daemon asks the editor to reload it with
``pi/reloadDocuments {uris}`` and then waits for the ``didChange`` whose text equals the disk
(strict UTF-8, BOM dropped). Only then is the buffer known to be current, and only then is its
new disk state recorded (fingerprint, ``saved_text``), so the buffer counts as clean again.

The editor never reloads a modified buffer (it answers ``skipped``); the daemon never asks for one
(callers pass clean documents only). Every failure is a reason string, never an exception: a
reload is a courtesy after the real work, which it must not undo.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from pi_lsp.editor.connection import EditorConnection, EditorRequestError, EditorSettings
from pi_lsp.editor.documents import Document, DocumentStore, WaitOutcome, decode_disk_text, read_disk


def has_mixed_or_cr_line_endings(text: str) -> bool:
    """True for CR-only line endings or a mix of kinds (design.md section 4 step 8): a client that
    normalises line endings would rewrite every line of such a file."""
    crlf = text.count("\r\n")
    return text.count("\r") > crlf or (crlf > 0 and text.count("\n") > crlf)


async def _disk_text(document: Document) -> str | None:
    if document.real_path is None:
        return None
    disk = await asyncio.to_thread(read_disk, document.real_path)
    decoded = decode_disk_text(disk[0]) if disk is not None else None
    return decoded[0] if decoded is not None else None


async def reload_from_disk(
    documents: Sequence[Document],
    store: DocumentStore,
    connection: EditorConnection,
    settings: EditorSettings,
) -> dict[str, str]:
    """Make each of ``documents`` (open, clean) show its file's current text.

    A buffer that already equals its file is only recorded as such (no request). The others are
    reloaded with one ``pi/reloadDocuments`` (when the client advertises it), waiting up to
    ``settings.apply_timeout_seconds`` for the reply and then up to
    ``settings.verify_timeout_seconds`` for each ``didChange`` that shows the file.

    Returns ``{uri: reason}`` for every document that is not up to date afterwards (empty when
    all are): the file cannot be read or is not UTF-8, the client cannot reload, it skipped the
    document (its reason), it normalises line endings of a mixed or CR-only file, it did not
    answer, or its buffer did not show the file in time.
    """
    problems: dict[str, str] = {}
    targets: list[tuple[Document, str]] = []
    features = connection.features
    for document in documents:
        text = await _disk_text(document)
        if text is None:
            problems[document.uri] = "the file cannot be read as UTF-8 text"
        elif text == document.text:
            await asyncio.to_thread(store.check_disk, document)
        elif not features.reload_documents:
            problems[document.uri] = "the editor cannot reload files (no pi/reloadDocuments)"
        elif features.normalizes_line_endings and has_mixed_or_cr_line_endings(text):
            problems[document.uri] = "the file has mixed or CR-only line endings, which the editor would rewrite"
        else:
            targets.append((document, text))
    if not targets:
        return problems
    waiters = {
        document.uri: store.expect_change(document.real_path, lambda d, want=text: d.text == want)  # type: ignore[arg-type]
        for document, text in targets
    }
    try:
        reply = await asyncio.wait_for(
            connection.reload_documents([document.uri for document, _ in targets]), settings.apply_timeout_seconds
        )
    except (TimeoutError, EditorRequestError, ConnectionError) as exc:
        reason = (
            f"the editor did not answer pi/reloadDocuments within {settings.apply_timeout_seconds:g} s"
            if isinstance(exc, TimeoutError)
            else f"the editor failed to reload it: {exc}"
        )
        for document, _ in targets:
            waiters[document.uri].cancel()
            problems[document.uri] = reason
        return problems
    skipped = {
        item.get("uri"): str(item.get("reason") or "no reason given")
        for item in (reply.get("skipped") or [] if isinstance(reply, dict) else [])
        if isinstance(item, dict)
    }

    async def settle(document: Document) -> None:
        waiter = waiters[document.uri]
        if document.uri in skipped:
            waiter.cancel()
            problems[document.uri] = f"the editor skipped the reload: {skipped[document.uri]}"
            return
        outcome = await waiter.wait(settings.verify_timeout_seconds)
        if outcome.outcome is not WaitOutcome.SATISFIED:
            problems[document.uri] = (
                f"the editor's buffer did not show the file within {settings.verify_timeout_seconds:g} s"
            )
            return
        current = store.by_uri(document.uri) or document  # a reload may reopen it (Neovim: didOpen)
        if await asyncio.to_thread(store.check_disk, current):
            problems[document.uri] = "the file changed again while the editor reloaded it"

    await asyncio.gather(*(settle(document) for document, _ in targets))
    return problems
