"""Document sync into pi-lsp's own :class:`~pi_lsp.editor.documents.DocumentStore` (design.md section 3).

pygls's text documents split lines on ``\\f``, U+2028 and more, so they are bypassed: LSP line rules only.

Module-level handlers; :func:`pi_lsp.daemon.server.create_server` registers :data:`FEATURES`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from pi_lsp.daemon import rpc

if TYPE_CHECKING:
    from pi_lsp.daemon.server import PiLanguageServer

logger = logging.getLogger(__name__)


def did_open(ls: PiLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    """The ``textDocument/didOpen`` handler."""
    doc = params.text_document
    ls.require_host().store.did_open(doc.uri, doc.text, doc.version)
    ls.external.touch()
    ls.plain.language_ids[doc.uri] = doc.language_id


def did_change(ls: PiLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    """The ``textDocument/didChange`` handler."""
    doc = params.text_document
    ls.require_host().store.did_change(
        doc.uri, doc.version, params.content_changes, ls.features.position_encoding
    )
    ls.external.touch()


def did_save(ls: PiLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    """The ``textDocument/didSave`` handler."""
    ls.require_host().store.did_save(params.text_document.uri, params.text)


def did_close(ls: PiLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    """The ``textDocument/didClose`` handler."""
    ls.require_host().store.did_close(params.text_document.uri)
    ls.plain.language_ids.pop(params.text_document.uri, None)


def document_state(ls: PiLanguageServer, params: Any) -> None:
    """The ``pi/documentState`` handler."""
    try:
        uri, version, dirty = rpc.parse_document_state(params)
    except JsonRpcException as exc:
        logger.warning("ignored: %s", exc.message)
        return
    ls.require_host().store.document_state(uri, version, dirty)


FEATURES: list[tuple[Any, ...]] = [
    (types.TEXT_DOCUMENT_DID_OPEN, did_open),
    (types.TEXT_DOCUMENT_DID_CHANGE, did_change),
    (types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False), did_save),
    (types.TEXT_DOCUMENT_DID_CLOSE, did_close),
    (rpc.DOCUMENT_STATE, document_state),
]
"""``(method, [options,] handler)`` for ``server.feature``."""
