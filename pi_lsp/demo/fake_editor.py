"""``FakeEditor``: a real LSP client over stdio, for the tests and the demo.

It starts the daemon (``python -m pi_lsp``) as a subprocess, initializes it with a capability
profile or any ``ClientCapabilities`` (pytest-lsp's snapshots), mirrors its buffers with LSP line
rules (:mod:`pi_lsp.demo.fake_buffers`), and answers the server: ``workspace/applyEdit`` (applied, refused, an error reply or never answered, as
configured), ``pi/saveDocuments``, ``pi/reloadDocuments``, ``workspace/configuration``,
``window/showMessageRequest`` and ``pi/requestApproval`` (when ``experimental_pi`` advertises
``approvals``). Everything the server sent is recorded for assertions and the demo
log: ``apply_edits`` (raw JSON params, camelCase), ``save_requests``, ``reload_requests``,
``events`` (``pi/event`` params), ``shown_messages``, ``log_messages``, ``nudges``, ``approval_requests``
and ``withdrawals`` (``pi/approvalWithdrawn`` params).

The quirk profiles (``vscode``, ``neovim``, ``eglot``) are described in
:mod:`pi_lsp.demo.fake_profiles`.

With ``language_server`` (a command line, e.g. :func:`~pi_lsp.demo.editor_language_server.pylsp_command`)
the editor runs that real language server for its documents and offers it to pi-lsp (issue 17):
it advertises ``experimental.pi.diagnostics`` and ``languageRequests``, answers ``pi/languageRequest``
and ``pi/diagnostics`` through the server and sends ``pi/diagnosticsChanged`` when it publishes
(:mod:`pi_lsp.demo.editor_language_server`); ``language_server_mode="silent"`` never answers a
``pi/languageRequest``. ``language_requests`` and ``diagnostics_requests`` record what pi-lsp asked.
"""

from __future__ import annotations

import asyncio
import collections
import inspect
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError
from pygls.lsp.client import LanguageClient

import pi_lsp
from pi_lsp.demo.editor_language_server import KNOWLEDGE_METHODS, EditorLanguageServer, ServerMode
from pi_lsp.demo.fake_buffers import Buffer, BufferSet, EditRefused, StaleVersion, uri_of
from pi_lsp.daemon.read_nudge import NUDGE
from pi_lsp.demo.fake_profiles import (
    ALL_PI_FEATURES,
    PROFILES,
    StaleReply,
    SyncMode,
    profile_capabilities,
)
from pi_lsp.editor.lsp_connection import raw_dict_converter
from pi_lsp.editor.positions import position_at

ApplyMode = Literal["apply", "reject", "error", "ignore"]
BeforeApply = Callable[["FakeEditor", types.ApplyWorkspaceEditParams], Awaitable[None] | None]

KNOWLEDGE_FEATURES: dict[str, Any] = {"diagnostics": True, "languageRequests": list(KNOWLEDGE_METHODS)}
"""The ``experimental.pi`` capabilities of an editor with a language server (KNOWLEDGE_SPEC)."""

__all__ = ["ALL_PI_FEATURES", "KNOWLEDGE_FEATURES", "FakeEditor", "profile_capabilities"]


class FakeEditor:
    """A scripted editor session against a real ``pi-lsp`` subprocess.

    Use ``async with FakeEditor(root) as editor:`` (or :meth:`start`/:meth:`stop`). ``root`` is the
    first workspace folder. Paths given to the buffer methods are absolute or relative to ``root``.
    """

    def __init__(
        self,
        root: Path,
        *,
        profile: str = "vscode",
        capabilities: types.ClientCapabilities | None = None,
        client_name: str | None = None,
        experimental_pi: dict[str, Any] | None = None,
        position_encodings: Sequence[str] | None = None,
        extra_folders: Sequence[Path] = (),
        initialization_options: dict[str, Any] | None = None,
        configuration: dict[str, Any] | None = None,
        server_command: Sequence[str] | None = None,
        env: dict[str, str] | None = None,
        apply_mode: ApplyMode = "apply",
        sync_mode: SyncMode | None = None,
        save_mode: Literal["save", "skip"] = "save",
        message_answer: str | None = None,
        before_apply: BeforeApply | None = None,
        version_step: int | None = None,
        stale_reply: StaleReply | None = None,
        sync_delay: float | None = None,
        formatter: Callable[[str], str] | None = None,
        language_server: Sequence[str] | None = None,
        language_server_mode: ServerMode = "answer",
    ) -> None:
        self.root = Path(root)
        if language_server is not None and experimental_pi is None:
            experimental_pi = {**ALL_PI_FEATURES, **KNOWLEDGE_FEATURES}
        self.profile = profile
        caps = capabilities or profile_capabilities(profile, position_encodings)
        experimental = dict(caps.experimental or {}) if isinstance(caps.experimental, dict) else {}
        experimental["pi"] = dict(ALL_PI_FEATURES if experimental_pi is None else experimental_pi)
        caps.experimental = experimental
        self.capabilities = caps
        quirks = PROFILES.get(profile, PROFILES["vscode"])
        self.client_name = client_name or quirks.client_name
        self.folders = [self.root, *map(Path, extra_folders)]
        self.initialization_options = initialization_options
        self.configuration = configuration
        self.server_command = list(server_command or [sys.executable, "-m", "pi_lsp"])
        self.env = env
        self.apply_mode: ApplyMode = apply_mode
        self.sync_mode: SyncMode = sync_mode or quirks.sync_mode
        self.sync_delay = quirks.sync_delay if sync_delay is None else sync_delay
        self.stale_reply: StaleReply = stale_reply or quirks.stale_reply
        self.accept_newer = quirks.accept_newer
        self.formatter = formatter
        self.pending: dict[str, Buffer] = {}
        """Buffers changed by an edit whose ``didChange`` waits for :meth:`flush` (``never``)."""
        self.save_mode = save_mode
        self.message_answer = message_answer
        self.before_apply = before_apply
        self.buffers = BufferSet(version_step=version_step or quirks.version_step)
        self.apply_edits: list[dict[str, Any]] = []
        self.apply_replies: list[dict[str, Any]] = []
        self.save_requests: list[dict[str, Any]] = []
        self.reload_requests: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.shown_messages: list[str] = []
        self.log_messages: list[str] = []
        self.log_types: list[int] = []
        """``MessageType`` of each of ``log_messages`` (1 Error, 2 Warning, 3 Info, 4 Log)."""
        self.message_requests: list[str] = []
        self.nudges = 0
        """How many ``$/pi/nudge`` notifications came (:mod:`pi_lsp.daemon.read_nudge`; nothing to do)."""
        self.approval_requests: list[dict[str, Any]] = []
        self.withdrawals: list[dict[str, Any]] = []
        self.review_requests: list[dict[str, Any]] = []
        """``pi/reviewEdit`` params (advertise ``review`` in ``experimental_pi``)."""
        self.review_withdrawals: list[dict[str, Any]] = []
        self.review_answer: Callable[[dict[str, Any]], Any] | None = None
        """Answers ``pi/reviewEdit``: params -> result (or an awaitable of it); ``None`` dismisses."""
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=400)
        self.initialize_result: types.InitializeResult | None = None
        self.client = LanguageClient("fake-editor", pi_lsp.__version__, converter_factory=raw_dict_converter)
        self._tasks: list[asyncio.Task[Any]] = []
        self.language: EditorLanguageServer | None = None
        """The editor's own language server (``language_server``: a real server such as pylsp)."""
        self.language_requests: list[dict[str, Any]] = []
        self.diagnostics_requests: list[dict[str, Any]] = []
        if language_server is not None:
            self.language = EditorLanguageServer(
                language_server, self.root, self._buffer_text, self._published,
                lambda: self.buffers.encoding, mode=language_server_mode,
            )
        self._register()

    # lifecycle -------------------------------------------------------------------------------

    async def __aenter__(self) -> "FakeEditor":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> types.InitializeResult:
        """Start the editor's language server (if any), then the pi-lsp server: ``initialize`` it
        and send ``initialized``."""
        if self.language is not None:
            await self.language.start()
        env = dict(os.environ if self.env is None else self.env)
        package_root = str(Path(pi_lsp.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in [package_root, env.get("PYTHONPATH")] if p)
        await self.client.start_io(*self.server_command, env=env, cwd=str(self.root))
        process = self.client._server
        if process is not None and process.stderr is not None:
            self._tasks.append(asyncio.create_task(self._drain_stderr(process.stderr)))
        params = types.InitializeParams(
            process_id=os.getpid(),
            capabilities=self.capabilities,
            client_info=types.ClientInfo(name=self.client_name, version="0.0-fake"),
            root_uri=uri_of(self.root),
            workspace_folders=[types.WorkspaceFolder(uri=uri_of(f), name=f.name) for f in self.folders],
            initialization_options=self.initialization_options,
        )
        result = await self.client.initialize_async(params)
        self.initialize_result = result
        encoding = result.capabilities.position_encoding or "utf-16"
        self.buffers.encoding = str(getattr(encoding, "value", encoding))
        self.client.initialized(types.InitializedParams())
        return result

    async def stop(self, timeout: float = 10.0) -> int | None:
        """``shutdown`` + ``exit``, wait for the process (killed after ``timeout`` s); its code."""
        process = self.client._server
        for pending in list(self.client.protocol._request_futures.values()):
            if isinstance(pending, asyncio.Task) and not pending.done():
                pending.cancel()  # an applyEdit this editor was told never to answer
        try:
            if process is not None and process.returncode is None:
                await asyncio.wait_for(self.client.shutdown_async(None), timeout)
                self.client.exit(None)
                await asyncio.wait_for(process.wait(), timeout)
        except (asyncio.TimeoutError, RuntimeError, ConnectionError, BrokenPipeError):
            if process is not None and process.returncode is None:
                process.kill()
                await process.wait()
        finally:
            await self.client.stop()
            for task in self._tasks:
                task.cancel()
            if self.language is not None:
                await self.language.stop()
        return None if process is None else process.returncode

    @property
    def process(self) -> asyncio.subprocess.Process | None:
        """The server subprocess."""
        return self.client._server

    # buffers -----------------------------------------------------------------------------

    def path(self, path: str | Path) -> Path:
        """``path`` made absolute against the root folder."""
        return path if Path(path).is_absolute() else self.root / path  # type: ignore[return-value]

    def buffer(self, path: str | Path) -> Buffer:
        """The buffer of ``path`` (``KeyError`` when the editor has none)."""
        return self.buffers.buffers[uri_of(Path(self.path(path)))]

    def open(self, path: str | Path, text: str | None = None, version: int = 1) -> Buffer:
        """Open ``path`` (its disk text, or ``text``: then the buffer is modified) and send didOpen."""
        buffer = self.buffers.open(Path(self.path(path)), text, version)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=buffer.uri, language_id="plaintext", version=version, text=buffer.text
                )
            )
        )
        self._sync_language([buffer.uri])
        return buffer

    def type(self, path: str | Path, start: int, end: int, text: str) -> Buffer:
        """The user replaces code points ``start:end`` with ``text``: incremental didChange
        (pending edit changes are flushed first, as a client sends its changes in order)."""
        self.flush()
        buffer = self.buffer(path)
        (sl, sc), (el, ec) = (position_at(buffer.text, o, self.buffers.encoding) for o in (start, end))
        buffer.text = buffer.text[:start] + text + buffer.text[end:]
        change = types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(sl, sc), end=types.Position(el, ec)), text=text
        )
        self._did_change(buffer, [change])
        return buffer

    def set_text(self, path: str | Path, text: str) -> Buffer:
        """Replace the whole buffer (a full-text didChange)."""
        self.pending.pop(self.buffer(path).uri, None)
        buffer = self.buffer(path)
        buffer.text = text
        self._did_change(buffer, [types.TextDocumentContentChangeWholeDocument(text=text)])
        return buffer

    def flush(self) -> None:
        """Send the ``didChange``\\ s an edit left pending (Neovim's debounce, eglot's idle timer).

        The user's own changes flush them first, so the server sees every change in order."""
        pending, self.pending = self.pending, {}
        self._sync([(buffer, []) for buffer in pending.values()])

    def save(self, path: str | Path) -> Buffer:
        """The user saves: write the disk, send didSave."""
        buffer = self.buffer(path)
        self.buffers.save(buffer)
        if buffer.opened:
            self._did_save(buffer)
        return buffer

    def close(self, path: str | Path) -> None:
        """Close the buffer (unsaved changes are dropped) and send didClose."""
        buffer = self.buffers.buffers.pop(self.buffer(path).uri)
        if buffer.opened:
            self.client.text_document_did_close(
                types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=buffer.uri))
            )
        self._sync_language()

    def text(self, path: str | Path) -> str:
        """The buffer's text."""
        return self.buffer(path).text

    # requests to the server ----------------------------------------------------------------

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a request; the raw JSON result (dicts). JSON-RPC errors raise ``JsonRpcException``."""
        return await self.client.protocol.send_request_async(method, params)

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification."""
        self.client.protocol.notify(method, params)

    def cancel(self, msg_id: str | int) -> None:
        """``$/cancelRequest`` for the request sent with id ``msg_id``."""
        self.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))

    async def call(self, name: str, arguments: Any, call_id: str = "call-1") -> dict[str, Any]:
        """``pi/executeToolCall``; the ``ToolResultMessage`` as received (camelCase dict)."""
        return await self.request(
            "pi/executeToolCall", {"toolCall": {"id": call_id, "name": name, "arguments": arguments}}
        )

    def result_text(self, result: dict[str, Any]) -> str:
        """The text blocks of a received tool result, joined."""
        return "".join(b.get("text", "") for b in result.get("content", []) if b.get("type") == "text")

    # handlers for what the server sends --------------------------------------------------

    def _register(self) -> None:
        client = self.client

        @client.feature(types.WORKSPACE_APPLY_EDIT)
        async def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            return await self._apply(params)

        @client.feature("pi/saveDocuments")
        def save_documents(params: Any) -> dict[str, Any]:
            return self._save_documents(params)

        @client.feature("pi/reloadDocuments")
        def reload_documents(params: Any) -> dict[str, Any]:
            return self._reload_documents(params)

        @client.feature(types.WORKSPACE_CONFIGURATION)
        def configuration(params: types.ConfigurationParams) -> list[Any]:
            config = self.configuration or {}
            return [config.get(item.section or "") for item in params.items]

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def show_message_request(params: types.ShowMessageRequestParams) -> Any:
            self.message_requests.append(params.message)
            for action in params.actions or []:
                if action.title == self.message_answer:
                    return action
            return None

        @client.feature("pi/requestApproval")
        def request_approval(params: Any) -> Any:
            # the same answer as the showMessageRequest prompt, by action id; None dismisses
            self.approval_requests.append(params)
            for action in params.get("actions") or []:
                if action.get("title") == self.message_answer:
                    return {"action": action.get("id")}
            return None

        @client.feature("pi/reviewEdit")
        async def review_edit(params: Any) -> Any:
            self.review_requests.append(params)
            if self.review_answer is None:
                return None
            answer = self.review_answer(params)
            return await answer if inspect.isawaitable(answer) else answer

        @client.feature("pi/reviewWithdrawn")
        def review_withdrawn(params: Any) -> None:
            self.review_withdrawals.append(params)

        @client.feature("pi/approvalWithdrawn")
        def approval_withdrawn(params: Any) -> None:
            self.withdrawals.append(params)

        @client.feature("pi/event")
        def event(params: Any) -> None:
            self.events.append(params)

        @client.feature("pi/languageRequest")
        async def language_request(params: Any) -> Any:
            self.language_requests.append(params)
            if self.language is None:
                return {"servers": [], "result": None}
            return await self.language.language_request(params.get("method"), params.get("params") or {})

        @client.feature("pi/diagnostics")
        async def diagnostics(params: Any) -> Any:
            self.diagnostics_requests.append(params)
            return await self._diagnostics(params)

        @client.feature(types.WINDOW_SHOW_MESSAGE)
        def show_message(params: types.ShowMessageParams) -> None:
            self.shown_messages.append(params.message)

        @client.feature(NUDGE)
        def nudge(_params: Any) -> None:  # a client that reads promptly has nothing to do
            self.nudges += 1

        @client.feature(types.WINDOW_LOG_MESSAGE)
        def log_message(params: types.LogMessageParams) -> None:
            self.log_messages.append(params.message)
            self.log_types.append(int(params.type))

    async def _apply(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        self.apply_edits.append(self.client.protocol._converter.unstructure(params))
        if self.before_apply is not None:
            maybe = self.before_apply(self, params)
            if maybe is not None:
                await maybe
        if self.apply_mode == "ignore":
            await asyncio.Event().wait()
        if self.apply_mode == "error":
            raise JsonRpcInternalError(message="the fake editor was told to fail this edit")
        if self.apply_mode == "reject":
            return self._reply(False, "the fake editor was told to refuse this edit")
        try:
            changed = self.buffers.apply_workspace_edit(params.edit, accept_newer=self.accept_newer)
        except StaleVersion as exc:
            if self.stale_reply == "error":  # eglot: "Edits on 'x' require version 1, you have 5"
                raise JsonRpcInternalError(message=exc.reason) from None
            if self.stale_reply == "skip":  # Neovim: "Buffer ... newer than edits", applied: true
                return self._reply(True, None)
            return self._reply(False, exc.reason)
        except EditRefused as exc:
            return self._reply(False, exc.reason)
        self._sync_language([buffer.uri for buffer, _ in changed if not buffer.opened])
        opened = [(buffer, edits) for buffer, edits in changed if buffer.opened]
        if self.sync_mode == "before_reply":
            self._sync(opened)
        else:  # held back until flushed: by Neovim's debounce timer, by eglot's idle timer (never here)
            self.pending.update((buffer.uri, buffer) for buffer, _ in opened)
            if self.sync_mode == "after_reply":
                asyncio.get_running_loop().call_later(self.sync_delay, self.flush)
        return self._reply(True, None)

    def _reply(self, applied: bool, reason: str | None) -> types.ApplyWorkspaceEditResult:
        self.apply_replies.append({"applied": applied, "failureReason": reason})
        return types.ApplyWorkspaceEditResult(applied=applied, failure_reason=reason)

    def _sync(self, changed: list[tuple[Buffer, list[Any]]]) -> None:
        for buffer, _ in changed:
            self._did_change(buffer, [types.TextDocumentContentChangeWholeDocument(text=buffer.text)])

    def _save_documents(self, params: Any) -> dict[str, Any]:
        self.save_requests.append(params)
        saved: list[str] = []
        skipped: list[dict[str, str]] = []
        for item in (params or {}).get("documents", []):
            uri, version = item.get("uri"), item.get("version")
            buffer = self.buffers.get(uri)
            if self.save_mode == "skip":
                skipped.append({"uri": uri, "reason": "the user declined the save"})
            elif buffer is None:
                skipped.append({"uri": uri, "reason": "no such buffer"})
            elif buffer.opened and version != buffer.version:
                skipped.append({"uri": uri, "reason": f"version is {buffer.version}, not {version}"})
            else:
                self._format(buffer)
                self.buffers.save(buffer)
                if buffer.opened:
                    self._did_save(buffer)
                else:
                    del self.buffers.buffers[uri]  # a held buffer is released once saved
                saved.append(uri)
        return {"saved": saved, "skipped": skipped}

    def _reload_documents(self, params: Any) -> dict[str, Any]:
        self.reload_requests.append(params)
        reloaded: list[str] = []
        skipped: list[dict[str, str]] = []
        for uri in (params or {}).get("uris", []):
            buffer = self.buffers.get(uri)
            try:
                if buffer is None:
                    raise ValueError("no such buffer")
                if self.buffers.reload(buffer) and buffer.opened:
                    self._did_change(buffer, [types.TextDocumentContentChangeWholeDocument(text=buffer.text)])
                reloaded.append(uri)
            except (ValueError, OSError, UnicodeDecodeError) as exc:
                skipped.append({"uri": uri, "reason": str(exc)})
        return {"reloaded": reloaded, "skipped": skipped}

    def _format(self, buffer: Buffer) -> None:
        """A formatter on save: changes the buffer (a didChange) before it is written."""
        if self.formatter is None:
            return
        formatted = self.formatter(buffer.text)
        if formatted != buffer.text:
            buffer.text = formatted
            if buffer.opened:
                self._did_change(buffer, [types.TextDocumentContentChangeWholeDocument(text=formatted)])

    def _did_change(self, buffer: Buffer, changes: list[Any]) -> None:
        version = self.buffers.bump(buffer)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=buffer.uri, version=version),
                content_changes=changes,
            )
        )
        self._sync_language([buffer.uri])

    # the editor's language server (issue 17) ----------------------------------------------

    def _buffer_text(self, uri: str) -> tuple[str, int | None] | None:
        buffer = self.buffers.get(uri)
        if buffer is None:
            return None
        return buffer.text, buffer.version if buffer.opened else None

    def _sync_language(self, uris: Sequence[str] = ()) -> None:
        if self.language is not None:
            self.language.sync(uris)

    def _published(self, uri: str, version: int | None) -> None:
        """The language server published diagnostics: tell pi-lsp (``pi/diagnosticsChanged``),
        dated with the publish's ``version`` for an open buffer (whose versions the server shares)."""
        if self.client._server is not None and self.initialize_result is not None:
            buffer = self.buffers.get(uri)
            dated = version is not None and buffer is not None and buffer.opened
            self.notify("pi/diagnosticsChanged", {"uris": [uri], **({"versions": {uri: version}} if dated else {})})

    async def _diagnostics(self, params: Any) -> dict[str, Any]:
        """``pi/diagnostics {uris?}``: each named document, or every one the server reported on."""
        uris = (params or {}).get("uris")
        if self.language is None:
            return {"documents": [
                {"uri": uri, "version": None, "servers": [], "diagnostics": []} for uri in uris or []
            ]}
        if not isinstance(uris, list):
            uris = [uri for uri in self.language.diagnostics if self.language.diagnostics[uri]]
        return {"documents": [await self.language.document_diagnostics(uri) for uri in uris]}

    async def wait_diagnostics(self, path: str | Path, timeout: float = 20.0) -> bool:
        """Wait until the editor's language server has published diagnostics for ``path``."""
        assert self.language is not None
        return await self.language.wait_published(uri_of(Path(self.path(path))), timeout)

    def _did_save(self, buffer: Buffer) -> None:
        if self.language is not None:
            self.language.did_save(buffer.uri)
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=buffer.uri))
        )

    async def _drain_stderr(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            self.stderr_tail.append(line.decode("utf-8", "replace").rstrip("\n"))
