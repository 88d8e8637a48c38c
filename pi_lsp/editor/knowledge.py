"""The :class:`~pi_lsp.tools.language.knowledge.EditorKnowledge` seam over the editor connection (issue 17).

pi-lsp asks the editor, which asks its own language servers (KNOWLEDGE_SPEC):

* ``pi/languageRequest {method, params}`` -> ``{servers, result}``, only for the methods the client
  lists in ``capabilities.experimental.pi.languageRequests``;
* ``pi/diagnostics {uris?}`` -> ``{documents: [{uri, version, servers, diagnostics}]}``, when the
  client advertises ``experimental.pi.diagnostics``;
* ``pi/diagnosticsChanged {uris, versions?}`` (client notification) feeds :class:`DiagnosticsChanges`.

Every request is bounded by ``languageServer.timeoutSeconds`` (:class:`KnowledgeSettings`); on
timeout pi-lsp sends ``$/cancelRequest`` and the tool gets :class:`KnowledgeTimeout`: never a hang.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pygls.uris import from_fs_path

from pi_lsp.editor.connection import ClientFeatures, EditorRequestError
from pi_lsp.editor.diagnostics_changes import DiagnosticsChanges
from pi_lsp.editor.documents import DocumentStore, path_of_uri
from pi_lsp.editor.positions import apply_text_edits
from pi_lsp.tools.language.knowledge import (
    DocumentDiagnostics,
    KnowledgeError,
    KnowledgeTimeout,
    LanguageAnswer,
    LanguageServerFailed,
    Problem,
)

LANGUAGE_REQUEST = "pi/languageRequest"
DIAGNOSTICS = "pi/diagnostics"


class BoundedRequests(Protocol):
    """What this module needs of the connection (:class:`~pi_lsp.editor.lsp_connection.LspEditorConnection`)."""

    async def request_bounded(self, method: str, params: dict[str, Any], timeout: float) -> Any:
        """Send, wait at most ``timeout`` s (then ``$/cancelRequest`` and ``TimeoutError``)."""
        ...


@dataclass(frozen=True)
class KnowledgeSettings:
    """``pi.languageServer.timeoutSeconds``: the longest wait for one ``pi/languageRequest`` or
    ``pi/diagnostics`` answer, in seconds."""

    timeout_seconds: float = 10.0


class LspEditorKnowledge:
    """:class:`~pi_lsp.tools.language.knowledge.EditorKnowledge` over the editor connection.

    Args:
        channel: sends the bounded requests.
        features: the client's capabilities (which methods it answers).
        store: the editor's open documents (their URIs are used as the editor spelled them).
        settings: replace the attribute when the settings change.
    """

    def __init__(
        self, channel: BoundedRequests, features: ClientFeatures, store: DocumentStore, settings: KnowledgeSettings
    ) -> None:
        self.channel = channel
        self.features = features
        self.store = store
        self.settings = settings
        self.changes = DiagnosticsChanges()
        self.position_encoding = features.position_encoding

    def unavailable(self, method: str) -> str | None:
        """Why ``method`` cannot be asked (the reason ``pi/listTools`` shows), or ``None``."""
        if method == DIAGNOSTICS:
            if self.features.diagnostics:
                return None
            return "the editor does not offer its diagnostics to pi-lsp (capabilities.experimental.pi.diagnostics)"
        if method in self.features.language_requests:
            return None
        return f"the editor does not offer {method} to pi-lsp (capabilities.experimental.pi.languageRequests)"

    def uri_of(self, path: Path) -> str:
        """The open document's URI for ``path`` (as the editor spelled it), else its ``file:`` URI."""
        document = self.store.get(path)
        if document is not None:
            return document.uri
        return from_fs_path(os.fspath(path)) or Path(path).absolute().as_uri()

    def path_of(self, uri: str) -> Path | None:
        """The file of a ``file:`` URI."""
        return path_of_uri(uri)

    async def language_request(self, method: str, params: dict[str, Any]) -> LanguageAnswer:
        """``pi/languageRequest``; see :class:`~pi_lsp.tools.language.knowledge.EditorKnowledge`."""
        reason = self.unavailable(method)
        if reason is not None:
            raise KnowledgeError(reason)
        reply = await self._request(LANGUAGE_REQUEST, {"method": method, "params": params}, method)
        if not isinstance(reply, dict):
            raise KnowledgeError(f"the editor sent a malformed pi/languageRequest reply: {_short(reply)}")
        servers = tuple(s for s in reply.get("servers") or [] if isinstance(s, str))
        return LanguageAnswer(servers=servers, result=reply.get("result"))

    async def diagnostics(self, paths: Sequence[Path] | None = None) -> list[DocumentDiagnostics]:
        """``pi/diagnostics`` for ``paths`` (``None``: every document the editor has them for)."""
        reason = self.unavailable(DIAGNOSTICS)
        if reason is not None:
            raise KnowledgeError(reason)
        params: dict[str, Any] = {} if paths is None else {"uris": [self.uri_of(p) for p in paths]}
        reply = await self._request(DIAGNOSTICS, params, DIAGNOSTICS)
        documents = reply.get("documents") if isinstance(reply, dict) else None
        if not isinstance(documents, list):
            raise KnowledgeError(f"the editor sent a malformed pi/diagnostics reply: {_short(reply)}")
        return [doc for item in documents if (doc := _document(item)) is not None]

    def change_count(self, path: Path) -> int:
        """``pi/diagnosticsChanged`` notifications that named ``path`` so far."""
        return self.changes.count(path)

    async def wait_settled(self, path: Path, since: int, settle_seconds: float, quiet_seconds: float) -> bool:
        """See :meth:`DiagnosticsChanges.wait_settled`; changes the editor dated to a version older
        than the open document's version now (its last ``didChange``, so after an edit the version
        the edit produced) are not counted. A document pi-lsp does not hold waits for any change."""
        document = self.store.get(path)
        version = document.version if document is not None else None
        return await self.changes.wait_settled(path, since, settle_seconds, quiet_seconds, version)

    def apply_text_edits(self, text: str, edits: Sequence[Any]) -> str:
        """LSP ``TextEdit``\\ s applied at once, in the negotiated encoding (``ValueError`` if bad)."""
        return apply_text_edits(text, list(edits), self.position_encoding)

    async def _request(self, method: str, params: dict[str, Any], what: str) -> Any:
        timeout = self.settings.timeout_seconds
        try:
            return await self.channel.request_bounded(method, params, timeout)
        except TimeoutError:
            raise KnowledgeTimeout(
                f"no answer to {what} within {timeout:g} s (pi.languageServer.timeoutSeconds); the request was cancelled"
            ) from None
        except EditorRequestError as exc:
            raise LanguageServerFailed(exc.message) from None
        except ConnectionError as exc:
            raise KnowledgeError(f"the editor connection failed: {exc}") from None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _document(item: Any) -> DocumentDiagnostics | None:
    """One ``pi/diagnostics`` document; ``None`` when it has no string ``uri``."""
    if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
        return None
    uri = item["uri"]
    version = item.get("version")
    servers = tuple(s for s in item.get("servers") or [] if isinstance(s, str))
    problems = tuple(p for d in item.get("diagnostics") or [] if (p := _problem(d)) is not None)
    return DocumentDiagnostics(
        uri=uri, path=path_of_uri(uri), version=version if isinstance(version, int) else None,
        servers=servers, problems=problems,
    )


def _problem(item: Any) -> Problem | None:
    """An LSP ``Diagnostic`` as a :class:`Problem`; ``None`` when it has no message."""
    if not isinstance(item, dict) or not isinstance(item.get("message"), str):
        return None
    start = (item.get("range") or {}).get("start") or {}
    line = start.get("line") if isinstance(start, dict) else None
    severity = item.get("severity")
    source, code = item.get("source"), item.get("code")
    return Problem(
        line=line if isinstance(line, int) and line >= 0 else 0,
        severity=severity if severity in (1, 2, 3, 4) else 1,
        message=item["message"],
        source=source if isinstance(source, str) and source else None,
        code=str(code) if isinstance(code, (str, int)) and not isinstance(code, bool) and code != "" else None,
    )
