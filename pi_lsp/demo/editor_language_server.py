"""A real language server run as "the editor's" language server of :class:`FakeEditor` (issue 17).

Real editors answer pi-lsp's ``pi/languageRequest`` and ``pi/diagnostics`` by asking the language
servers they run for the buffer, and send ``pi/diagnosticsChanged`` when those publish
(KNOWLEDGE_SPEC). :class:`EditorLanguageServer` does the same for the scripted editor with a real
server subprocess (``pylsp`` in the tests and the demo): it is started over stdio with pygls's
``LanguageClient``, fed ``didOpen``/``didChange``/``didSave`` for the editor's buffers (and hidden
documents for files a request names that no buffer holds), and keeps the diagnostics it publishes.

Positions are converted between pi-lsp's negotiated encoding and the server's (UTF-16 unless it
negotiated another) with the document's text, as an editor plugin does. ``mode="silent"`` never
answers a ``pi/languageRequest`` (a server that hangs), for pi-lsp's timeout path.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient
from pygls.protocol import LanguageServerProtocol

import pi_lsp
from pi_lsp.demo.fake_buffers import read_file_text, uri_of
from pi_lsp.editor.documents import path_of_uri
from pi_lsp.editor.lsp_connection import raw_dict_converter
from pi_lsp.editor.positions import offset_of, position_at

REQUEST_FAILED = -32803
KNOWLEDGE_METHODS = (
    "textDocument/definition",
    "textDocument/references",
    "textDocument/rename",
    "textDocument/documentSymbol",
    "textDocument/hover",
)
"""The ``pi/languageRequest`` methods this editor answers."""

ServerMode = Literal["answer", "silent"]

_RAW_METHODS = frozenset({types.INITIALIZE, *KNOWLEDGE_METHODS})


class RawRequestsProtocol(LanguageServerProtocol):
    """pygls's client protocol, with ``initialize`` and the knowledge requests sent and answered as
    plain JSON: lsprotocol's structuring of some servers' replies fails (pylsp's notebook selector),
    and the editor passes results on as JSON anyway. Notifications stay typed."""

    def get_message_type(self, method: str) -> Any:
        return None if method in _RAW_METHODS else super().get_message_type(method)

    def get_result_type(self, method: str) -> Any:
        return None if method in _RAW_METHODS else super().get_result_type(method)


def pylsp_command() -> list[str] | None:
    """The ``pylsp`` next to this Python (the venv's), else on ``PATH``; ``None`` when missing."""
    beside = Path(os.path.dirname(os.path.abspath(sys.executable))) / "pylsp"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("pylsp")
    return [found] if found else None


class EditorLanguageServer:
    """One language server for the files whose suffix is in ``suffixes`` (see the module docstring).

    Args:
        command: the server's command line (``pylsp``).
        root: the workspace folder given to the server.
        text_for: the editor's ``(text, version)`` of a URI (its buffer; version ``None`` for a
            buffer never opened), ``None`` when no buffer holds it (then the file on disk is used,
            as a hidden document). The server sees the editor's versions, as with a real editor.
        on_published: called with the URI and the ``version`` (``None`` when the server sent
            none) whenever the server publishes its diagnostics.
        encoding: pi-lsp's negotiated position encoding (a property read at each conversion).

    ``publish_delay`` (seconds, 0 by default) makes the editor take in each publish that much
    later, in order: a busy server, whose report about older text can then arrive after an edit.
    """

    def __init__(
        self,
        command: Sequence[str],
        root: Path,
        text_for: Callable[[str], tuple[str, int | None] | None],
        on_published: Callable[[str, int | None], None],
        encoding: Callable[[], str],
        *,
        name: str = "pylsp",
        suffixes: Sequence[str] = (".py",),
        mode: ServerMode = "answer",
    ) -> None:
        self.command = list(command)
        self.root = root
        self.text_for = text_for
        self.on_published = on_published
        self.encoding = encoding
        self.name = name
        self.suffixes = tuple(suffixes)
        self.mode: ServerMode = mode
        self.server_encoding = "utf-16"
        self.docs: dict[str, tuple[int, str]] = {}
        """URI -> (version, text) as the server has it."""
        self.diagnostics: dict[str, list[dict[str, Any]]] = {}
        """URI -> the diagnostics last published (raw JSON, the server's encoding)."""
        self.published: dict[str, int] = {}
        self.publish_delay = 0.0
        self._published_event = asyncio.Event()
        self.client = LanguageClient(
            "fake-editor-language-client", pi_lsp.__version__,
            protocol_cls=RawRequestsProtocol, converter_factory=raw_dict_converter,
        )
        self._converter = self.client.protocol._converter

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: types.PublishDiagnosticsParams) -> None:
            if self.publish_delay > 0:
                asyncio.get_running_loop().call_later(self.publish_delay, self._take_in, params)
            else:
                self._take_in(params)

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def log_message(params: types.LogMessageParams) -> None:
            return None

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def show_message(params: types.ShowMessageParams) -> None:
            return None

    def _take_in(self, params: types.PublishDiagnosticsParams) -> None:
        """The editor takes in a publish: keeps its diagnostics and tells :attr:`on_published`."""
        raw = self._converter.unstructure(params)
        self.diagnostics[params.uri] = raw.get("diagnostics", [])
        self.published[params.uri] = self.published.get(params.uri, 0) + 1
        self._published_event.set()
        self.on_published(params.uri, params.version)

    async def start(self) -> None:
        """Start the server and initialize it (raises ``OSError`` when the command is missing)."""
        await self.client.start_io(*self.command, cwd=str(self.root))
        capabilities = types.ClientCapabilities(
            text_document=types.TextDocumentClientCapabilities(
                publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
                document_symbol=types.DocumentSymbolClientCapabilities(hierarchical_document_symbol_support=True),
                hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown, types.MarkupKind.PlainText]),
            ),
            workspace=types.WorkspaceClientCapabilities(
                workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True)
            ),
            general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]),
        )
        result = await self.client.protocol.send_request_async(types.INITIALIZE, {
            "processId": os.getpid(),
            "rootUri": uri_of(self.root),
            "workspaceFolders": [{"uri": uri_of(self.root), "name": self.root.name}],
            "capabilities": self._converter.unstructure(capabilities),
        })
        encoding = ((result or {}).get("capabilities") or {}).get("positionEncoding") or "utf-16"
        self.server_encoding = str(encoding)
        self.client.initialized(types.InitializedParams())

    async def stop(self) -> None:
        """``shutdown`` + ``exit``; kill the process if it does not go."""
        process = self.client._server
        try:
            if process is not None and process.returncode is None:
                await asyncio.wait_for(self.client.shutdown_async(None), 5)
                self.client.exit(None)
                await asyncio.wait_for(process.wait(), 5)
        except (asyncio.TimeoutError, RuntimeError, ConnectionError, BrokenPipeError, JsonRpcException):
            if process is not None and process.returncode is None:
                process.kill()
                await process.wait()
        finally:
            await self.client.stop()

    # documents ---------------------------------------------------------------------------------

    def handles(self, uri: str) -> bool:
        """This server is attached to ``uri``'s documents (a file with one of ``suffixes``)."""
        path = path_of_uri(uri)
        return path is not None and path.suffix in self.suffixes

    def _current(self, uri: str) -> tuple[str, int | None] | None:
        held = self.text_for(uri)
        if held is not None:
            return held
        path = path_of_uri(uri)
        try:
            return (read_file_text(path)[0], None) if path is not None else None
        except (OSError, UnicodeDecodeError):
            return None

    def _current_text(self, uri: str) -> str | None:
        current = self._current(uri)
        return current[0] if current is not None else None

    def sync(self, uris: Sequence[str] = ()) -> None:
        """Bring the server's copy of every known document, and of ``uris``, up to date."""
        for uri in dict.fromkeys([*self.docs, *uris]):
            if not self.handles(uri):
                continue
            current = self._current(uri)
            known = self.docs.get(uri)
            if current is None:
                if known is not None:
                    del self.docs[uri]
                    self.client.text_document_did_close(
                        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
                    )
                continue
            text, editor_version = current
            if known is None:
                version = editor_version if editor_version is not None else 1
                self.docs[uri] = (version, text)
                self.client.text_document_did_open(types.DidOpenTextDocumentParams(
                    text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
                ))
            elif known[1] != text:
                version = editor_version if editor_version is not None and editor_version > known[0] else known[0] + 1
                self.docs[uri] = (version, text)
                self.client.text_document_did_change(types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                ))

    def did_save(self, uri: str) -> None:
        """Tell the server a document was saved."""
        if uri in self.docs:
            self.client.text_document_did_save(
                types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )

    async def wait_published(self, uri: str, timeout: float = 10.0) -> bool:
        """Wait until the server published diagnostics for ``uri`` at least once."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while uri not in self.published:
            left = deadline - loop.time()
            if left <= 0:
                return False
            self._published_event.clear()
            try:
                await asyncio.wait_for(self._published_event.wait(), left)
            except asyncio.TimeoutError:
                return uri in self.published
        return True

    # pi-lsp's requests -------------------------------------------------------------------------

    async def language_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Answer ``pi/languageRequest`` (KNOWLEDGE_SPEC): ``{servers, result}``; a server error
        raises ``JsonRpcException`` RequestFailed ``"pylsp: <message>"``."""
        uri = ((params or {}).get("textDocument") or {}).get("uri")
        if not isinstance(uri, str) or not self.handles(uri) or method not in KNOWLEDGE_METHODS:
            return {"servers": [], "result": None}
        if self.mode == "silent":
            await asyncio.Event().wait()  # a server that never answers; pi-lsp cancels the request
        self.sync([uri])
        server_params = self._convert(params, uri, to_server=True)
        try:
            result = await self.client.protocol.send_request_async(method, server_params)
        except JsonRpcException as exc:
            raise JsonRpcException(message=f"{self.name}: {exc.message}", code=REQUEST_FAILED) from None
        return {"servers": [self.name], "result": self._convert(result, uri, to_server=False)}

    async def document_diagnostics(self, uri: str) -> dict[str, Any]:
        """One ``pi/diagnostics`` document: ``{uri, version, servers, diagnostics}``."""
        if not self.handles(uri) or (uri not in self.docs and self._current_text(uri) is None):
            return {"uri": uri, "version": None, "servers": [], "diagnostics": []}
        if uri not in self.docs:
            self.sync([uri])
            await self.wait_published(uri, 5.0)  # loaded hidden: wait for its first diagnostics
        diagnostics = self._convert(self.diagnostics.get(uri, []), uri, to_server=False)
        version = self.docs.get(uri, (None, ""))[0]
        return {"uri": uri, "version": version, "servers": [self.name], "diagnostics": diagnostics}

    # positions ---------------------------------------------------------------------------------

    def _convert(self, value: Any, uri: str, *, to_server: bool) -> Any:
        """Every ``{line, character}`` in ``value`` re-expressed between pi-lsp's encoding and the
        server's, using the text of the document the position belongs to (the nearest ``uri``,
        ``targetUri``, ``textDocument.uri`` or ``changes`` key above it)."""
        source, target = (self.encoding(), self.server_encoding)
        if not to_server:
            source, target = target, source
        if source == target:
            return value
        texts: dict[str, str] = {}

        def text(doc_uri: str) -> str:
            if doc_uri not in texts:
                texts[doc_uri] = self.docs.get(doc_uri, (0, None))[1] or self._current_text(doc_uri) or ""
            return texts[doc_uri]

        def walk(node: Any, doc_uri: str) -> Any:
            if isinstance(node, list):
                return [walk(item, doc_uri) for item in node]
            if not isinstance(node, dict):
                return node
            if set(node) == {"line", "character"} and all(isinstance(v, int) for v in node.values()):
                body = text(doc_uri)
                offset = offset_of(body, node["line"], node["character"], source)
                line, character = position_at(body, offset, target)
                return {"line": line, "character": character}
            here = node.get("targetUri") or node.get("uri") or doc_uri
            document = node.get("textDocument")
            if isinstance(document, dict) and isinstance(document.get("uri"), str):
                here = document["uri"]
            out = {}
            for key, item in node.items():
                if key == "changes" and isinstance(item, dict):
                    out[key] = {u: walk(edits, u) for u, edits in item.items()}
                else:
                    out[key] = walk(item, here if isinstance(here, str) else doc_uri)
            return out

        return walk(value, uri)
