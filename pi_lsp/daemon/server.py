"""The pi-lsp daemon: ONE switchboard of LSP handlers (design.md sections 3 to 5).

:func:`create_server` builds a :class:`PiLanguageServer` and registers every handler here, in one
place: the lifecycle (``initialize``, ``initialized``, ``shutdown``, ``exit``), document sync into
pi-lsp's own :class:`~pi_lsp.editor.documents.DocumentStore` (pygls's text documents split lines on
``\\f``, U+2028 and more, so they are bypassed), settings, workspace folders, and the ``pi/*``
methods of :mod:`pi_lsp.daemon.rpc`. Handlers never block the event loop: tool calls are ``async`` and
everything they wait for is awaited.

``$/cancelRequest`` of a tool call aborts the call's :class:`AbortSignal` instead of cancelling the
request: the pipeline then answers with a ``ToolResultMessage`` (``Operation aborted``), never a
bare JSON-RPC error (design.md section 2, Cancellation).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcServerNotInitialized
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from pi_lsp import __version__
from pi_lsp.daemon import rpc
from pi_lsp.agent.session import SessionBusy, SessionIdle
from pi_lsp.agent.events import EventSink
from pi_lsp.agent.tool import AbortSignal
from pi_lsp.daemon.agent_sessions import AgentSessions
from pi_lsp.daemon import change_actions, code_actions
from pi_lsp.daemon.commands import PlainCommands
from pi_lsp.daemon.comment_syntax import syntax_for
from pi_lsp.editor.connection import ClientFeatures
from pi_lsp.editor.lsp_connection import LspEditorConnection, raw_dict_converter
from pi_lsp.changes.revert import change_set, revert
from pi_lsp.daemon.approval_prompts import ApprovalPrompts
from pi_lsp.daemon.client_log import CLIENT_LOG
from pi_lsp.daemon.event_relay import EventRelay
from pi_lsp.daemon.external_socket import ExternalHandlers, ExternalSocket
from pi_lsp.policy.approvals import ApprovalPolicy, log_decision
from pi_lsp.daemon.session_journal import SessionJournal
from pi_lsp.daemon.settings import Settings, parse_settings
from pi_lsp.daemon.tool_host import ToolHost
from pi_lsp.llm.types import ToolCall, ToolResultMessage

logger = logging.getLogger(__name__)

ANSWER_AFTER_ABORT_SECONDS = 3.0
"""How long, beyond the kill grace, the end of a session waits for aborted tool calls to answer."""


class PiLanguageServer(LanguageServer):
    """The pygls server plus the session state the handlers share.

    Attributes:
        host: the session's :class:`ToolHost`, ``None`` before ``initialize``.
        settings: the current ``pi`` settings.
        folders: workspace folders in order (the first is the working directory).
        tool_signals: abort signals of running tool requests, by JSON-RPC request id.
        external_ids: the ids among them of ``pi/executeToolCall(s)`` (session ``external``).
        exit_code: set by ``exit`` (0 after ``shutdown``, else 1); the transport stops then.
    """

    def __init__(self) -> None:
        super().__init__(
            "pi-lsp", __version__, protocol_cls=rpc.PiProtocol, converter_factory=raw_dict_converter
        )
        self.host: ToolHost | None = None
        self.features = ClientFeatures()
        self.settings = Settings()
        self.folders: list[Path] = []
        self.tool_signals: dict[Any, AbortSignal] = {}
        self._tool_tasks: dict[Any, asyncio.Task[Any]] = {}
        self.external_ids: set[Any] = set()
        self.exit_code: int | None = None
        self.exit_requested = asyncio.Event()
        self._retiring: set[asyncio.Task[None]] = set()
        self._init_options: dict[str, Any] = {}
        self._settings_problems: list[str] = []
        self.events = EventRelay(self._send_event, rpc.EXTERNAL_SESSION)
        self.agents = AgentSessions(self._send_event)
        self.policy: ApprovalPolicy | None = None
        self.prompts = ApprovalPrompts(self.protocol, lambda: self.features.approvals, self._send_event)
        self.external_start: asyncio.Future[None] | None = None
        self.external = ExternalSocket(ExternalHandlers(self._list_tools, self._execute_external))
        self.plain = PlainCommands(self, self.protocol.notify, self._request)
        self._sandbox_warned = False

    def require_host(self) -> ToolHost:
        """The tool host; ``ServerNotInitialized`` (-32002) before ``initialize``."""
        if self.host is None:
            raise JsonRpcServerNotInitialized(message="the server is not initialized yet")
        return self.host

    def request_exit(self, code: int) -> None:
        """Stop serving (``exit`` received) with ``code``."""
        self.exit_code = code
        self.exit_requested.set()

    @contextmanager
    def tool_request(self, external: bool = False) -> Iterator[AbortSignal]:
        """An abort signal for the tool request being handled, registered for ``$/cancelRequest``
        (and for ``pi/abort {sessionId: "external"}`` when ``external``)."""
        msg_id = self.protocol.msg_id
        signal = AbortSignal()
        task = asyncio.current_task()
        if msg_id is not None:
            self.tool_signals[msg_id] = signal
            if task is not None:
                self._tool_tasks[msg_id] = task
            if external:
                self.external_ids.add(msg_id)
        try:
            yield signal
        finally:
            if msg_id is not None:
                self.tool_signals.pop(msg_id, None)
                self._tool_tasks.pop(msg_id, None)
                self.external_ids.discard(msg_id)

    def abort_external(self) -> int:
        """Abort every running ``pi/executeToolCall(s)``; return how many were aborted."""
        signals = [self.tool_signals[i] for i in list(self.external_ids) if i in self.tool_signals]
        for signal in signals:
            signal.abort("aborted by the client (pi/abort)")
        return len(signals)

    async def end_session(self) -> None:
        """Abort running tool calls and let them answer (``Operation aborted``; bounded by the
        kill grace plus :data:`ANSWER_AFTER_ABORT_SECONDS`), end process groups, remove the temp
        folder and the private socket. Idempotent."""
        for signal in list(self.tool_signals.values()):
            signal.abort("the session ended")
        CLIENT_LOG.disconnect()
        await self.external.close()
        running = [t for t in self._tool_tasks.values() if t is not asyncio.current_task() and not t.done()]
        if running:
            grace = self.host.env.settings.bash_kill_grace_seconds if self.host is not None else 0.0
            await asyncio.wait(running, timeout=grace + ANSWER_AFTER_ABORT_SECONDS)
        self.events.close()
        await self.plain.close()
        if self.host is not None:
            await self.host.close()
        if self._retiring:
            await asyncio.gather(*self._retiring, return_exceptions=True)

    def retire_host(self) -> None:
        """A second ``initialize`` replaces the session: abort the old session's running tool
        calls and end its processes and temp folder (in the background; :meth:`end_session`
        waits for it)."""
        old, self.host = self.host, None
        if old is None:
            return
        for signal in list(self.tool_signals.values()):
            signal.abort("the session was initialized again")
        task = asyncio.ensure_future(old.close())
        self._retiring.add(task)
        task.add_done_callback(self._retiring.discard)

    def _list_tools(self) -> dict[str, Any]:
        pipeline = self.require_host().pipeline
        return rpc.tools_listing(pipeline.tools, pipeline.active_names)

    async def _execute_external(
        self, call: ToolCall, signal: AbortSignal, progress: EventSink | None
    ) -> ToolResultMessage:
        """A tool call from another agent over the private socket: the session ``external``, like
        ``pi/executeToolCall``, and stopped by ``pi/abort {sessionId: "external"}`` too."""
        host = self.require_host()
        key = object()
        self.tool_signals[key] = signal
        self.external_ids.add(key)
        emit: EventSink = self.events
        if progress is not None:
            def emit(event: dict[str, Any]) -> None:
                self.events(event)
                progress(event)
        try:
            return await host.pipeline.execute(call, signal=signal, session_id=rpc.EXTERNAL_SESSION, emit=emit)
        finally:
            self.tool_signals.pop(key, None)
            self.external_ids.discard(key)

    def show(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        """``window/showMessage``: something the user must see (invalid settings)."""
        logger.warning("%s", message)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def update_settings(self, raw: Any) -> None:
        """Parse ``raw`` (the merged ``pi`` section), report rejected values, apply the rest."""
        self.settings, problems = parse_settings(raw)
        if self.host is not None:
            problems += self.host.apply_settings(self.settings)
        problems += self.configure_policy()
        self.report_settings_problems(problems)

    def report_settings_problems(self, problems: list[str]) -> None:
        """Show (and log) settings problems, unless they are the ones shown last: ``initialize``
        and ``initialized`` both read the same options, and one warning is enough."""
        if problems == self._settings_problems:
            return
        self._settings_problems = list(problems)
        for problem in problems:
            self.show(problem)

    async def pull_settings(self, pushed: Any = None) -> None:
        """Ask ``workspace/configuration`` for section ``pi`` (when the client can answer it);
        otherwise use ``pushed`` (the ``pi`` key of ``didChangeConfiguration``'s settings)."""
        config: Any = pushed
        if _supports_configuration(self.client_capabilities):
            try:
                items = await self.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section="pi")])
                )
                config = items[0] if items else None
            except JsonRpcException as exc:
                logger.warning("workspace/configuration failed: %s", exc)
        merged = _merge(self._init_options, config if isinstance(config, dict) else {})
        if config is not None and not isinstance(config, dict):
            merged = config  # reported as invalid by parse_settings
        self.update_settings(merged)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log errors of notification handlers; a request's error already went back to the client."""
        logger.error("%s: %s", getattr(source, "__name__", source), error)

    def _send_event(self, params: dict[str, Any]) -> None:
        self.protocol.notify(rpc.EVENT, params)
        self.plain.on_event(params)

    async def _request(self, method: str, params: Any) -> Any:
        return await asyncio.shield(self.protocol.send_request_async(method, params))

    # Approvals (design.md section 8): the policy hook asks through pi/requestApproval or
    # window/showMessageRequest (pi_lsp.daemon.approval_prompts).

    def install_policy(self, host: ToolHost) -> list[str]:
        """Register the approval hook on ``host``'s pipeline (first of all before hooks) and
        configure it from the current settings; return the problems to show."""
        self.policy = ApprovalPolicy(
            host.env, list(host.pipeline.tools), ask=self.prompts.ask, journal=self.journal_approval,
            announce=self.prompts.announce,
        )
        host.pipeline.add_before_hook(self.policy, first=True)
        return self.configure_policy()

    def configure_policy(self) -> list[str]:
        """Apply ``pi.approvals`` and ``pi.protectedPaths``; messages about malformed values."""
        if self.policy is None:
            return []
        approvals = self.settings.approvals
        return self.policy.configure(
            approvals.rules,
            protected_paths=self.settings.protected_paths,
            timeout_seconds=approvals.timeout_seconds,
            fallback=approvals.fallback,
            sandbox=self.settings.bash.sandbox,
            command_timeout_seconds=approvals.command_check_timeout_seconds,
        )

    async def check_sandbox(self) -> dict[str, Any]:
        """Probe the bash sandbox once (off the event loop; the policy logs a failed probe) and
        return its status as ``pi/health`` shows it; with ``pi.bash.sandbox`` ``required`` and no
        working sandbox, tell the user once that every bash command will ask."""
        if self.policy is None:
            return {"mode": self.settings.bash.sandbox, "available": False, "tool": None, "reason": "not initialized"}
        sandbox = self.policy.sandbox
        status = await asyncio.to_thread(lambda: sandbox.status)
        if status.mode == "required" and not status.available and not self._sandbox_warned:
            self._sandbox_warned = True
            self.show(f"pi: no bash sandbox ({status.reason}); pi.bash.sandbox is required, so every bash command asks")
        return status.to_json()

    def journal_approval(self, entry: dict[str, Any]) -> None:
        """Every approval decision: into the agent session's journal when the call belongs to a
        ``pi/prompt`` session, and into the daemon's log (:func:`log_decision`: routine allows at
        DEBUG, everything else at INFO)."""
        log_decision(logger, entry)
        self.plain.on_approval(entry)
        session_id = entry.get("sessionId")
        if self.host is not None and isinstance(session_id, str) and session_id in self.agents.sessions:
            SessionJournal(session_id, self.host.env.cwd).record(entry)


def _supports_configuration(caps: types.ClientCapabilities | None) -> bool:
    return bool(caps is not None and caps.workspace is not None and caps.workspace.configuration)


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _folder_path(uri: str) -> Path | None:
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return Path(path) if path else None


def _initial_folders(params: types.InitializeParams) -> list[Path]:
    folders = [p for f in params.workspace_folders or [] if (p := _folder_path(f.uri))]
    if not folders and params.root_uri:
        folders = [p for p in [_folder_path(params.root_uri)] if p]
    if not folders and params.root_path:
        folders = [Path(params.root_path)]
    return folders or [Path.cwd()]


def create_server() -> PiLanguageServer:
    """Build the daemon and register every handler (the switchboard)."""
    server = PiLanguageServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: PiLanguageServer, params: types.InitializeParams) -> None:
        ls.retire_host()  # a second initialize must not leak the first session (issue 12)
        CLIENT_LOG.connect(ls.protocol)  # from now on the log goes to the editor, not stderr
        ls.folders = _initial_folders(params)
        encoding = ls.protocol.workspace.position_encoding or "utf-16"
        ls.features = ClientFeatures.from_initialize(params, encoding)
        options = params.initialization_options
        pi_options = options.get("pi") if isinstance(options, dict) else None
        ls._init_options = pi_options if isinstance(pi_options, dict) else {}
        ls.settings, problems = parse_settings(pi_options)
        ls.host = ToolHost(LspEditorConnection(ls, ls.features), ls.folders, ls.settings)
        problems += ls.host.apply_settings(ls.settings)
        problems += ls.install_policy(ls.host)
        ls.report_settings_problems(problems)
        if ls.settings.external_socket:
            ls.external_start = asyncio.ensure_future(ls.external.start(ls.folders, ls.features.client_name or ""))
        logger.info(
            "initialized for %s (%s), cwd %s", ls.features.client_name or "a client",
            ls.features.position_encoding, ls.folders[0],
        )

    @server.feature(types.INITIALIZED)
    async def initialized(ls: PiLanguageServer, params: types.InitializedParams) -> None:
        await ls.pull_settings()
        await ls.check_sandbox()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: PiLanguageServer, params: types.DidChangeConfigurationParams
    ) -> None:
        pushed = params.settings.get("pi") if isinstance(params.settings, dict) else None
        await ls.pull_settings(pushed)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_folders(
        ls: PiLanguageServer, params: types.DidChangeWorkspaceFoldersParams
    ) -> None:
        removed = {p for f in params.event.removed or [] if (p := _folder_path(f.uri))}
        added = [p for f in params.event.added or [] if (p := _folder_path(f.uri))]
        folders = [f for f in ls.folders if f not in removed]
        folders += [f for f in added if f not in folders]
        ls.folders = folders or ls.folders
        if ls.host is not None:
            ls.host.set_folders(ls.folders)
        ls.external.update(ls.folders, ls.features.client_name or "")

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: PiLanguageServer, params: Any) -> None:
        await ls.end_session()

    # Documents (design.md section 3): pi-lsp's own store, LSP line rules only.
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: PiLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        ls.require_host().store.did_open(doc.uri, doc.text, doc.version)
        ls.external.touch()
        ls.plain.language_ids[doc.uri] = doc.language_id

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: PiLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        doc = params.text_document
        ls.require_host().store.did_change(
            doc.uri, doc.version, params.content_changes, ls.features.position_encoding
        )
        ls.external.touch()

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: PiLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.require_host().store.did_save(params.text_document.uri, params.text)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: PiLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.require_host().store.did_close(params.text_document.uri)
        ls.plain.language_ids.pop(params.text_document.uri, None)

    @server.feature(rpc.DOCUMENT_STATE)
    def document_state(ls: PiLanguageServer, params: Any) -> None:
        try:
            uri, version, dirty = rpc.parse_document_state(params)
        except JsonRpcException as exc:
            logger.warning("ignored: %s", exc.message)
            return
        ls.require_host().store.document_state(uri, version, dirty)

    # Tools (design.md section 5 table).
    @server.feature(rpc.EXECUTE_TOOL_CALL)
    async def execute_tool_call(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
        call = rpc.parse_execute_tool_call(params)
        host = ls.require_host()
        with ls.tool_request(external=True) as signal:
            result = await host.pipeline.execute(
                call, signal=signal, session_id=rpc.EXTERNAL_SESSION, emit=ls.events
            )
        return rpc.wire(result)

    @server.feature(rpc.EXECUTE_TOOL_CALLS)
    async def execute_tool_calls(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
        calls, stop_reason = rpc.parse_execute_tool_calls(params)
        host = ls.require_host()
        with ls.tool_request(external=True) as signal:
            results = await host.pipeline.execute_batch(
                calls, stop_reason=stop_reason, signal=signal,
                session_id=rpc.EXTERNAL_SESSION, emit=ls.events,
            )
        return {"results": [rpc.wire(result) for result in results]}

    @server.feature(rpc.LIST_TOOLS)
    def list_tools(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
        rpc.parse_list_tools(params)
        pipeline = ls.require_host().pipeline
        return rpc.tools_listing(pipeline.tools, pipeline.active_names)

    @server.feature(rpc.SET_ACTIVE_TOOLS)
    def set_active_tools(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
        names = rpc.parse_set_active_tools(params)
        pipeline = ls.require_host().pipeline
        try:
            return {"active": pipeline.set_active(names)}
        except ValueError as exc:
            raise rpc.invalid_params(rpc.SET_ACTIVE_TOOLS, str(exc)) from exc

    # Agent runs (design.md section 6). The prompt's abort signal is registered like a tool
    # request's, so $/cancelRequest aborts the run and the reply still says how it ended.
    @server.feature(rpc.PROMPT)
    async def prompt(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
        text, session_id = rpc.parse_prompt(params)
        host = ls.require_host()
        with ls.tool_request() as signal:
            try:
                return await ls.agents.prompt(
                    text, session_id, host=host, settings=ls.settings, signal=signal
                )
            except SessionBusy as exc:
                raise rpc.request_failed(rpc.PROMPT, str(exc)) from exc
            except ValueError as exc:
                raise rpc.invalid_params(rpc.PROMPT, str(exc)) from exc

    # Review and rewind (issue 18): the change journal of a session.
    @server.feature(rpc.CHANGES)
    async def changes(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
        session_id, turn = rpc.parse_changes(params)
        host = ls.require_host()
        entries = await change_set(host.changes, host.files, session_id, turn)
        return {"sessionId": session_id, "turn": turn, "currentTurn": host.changes.current_turn(session_id),
                "files": [entry.to_wire() for entry in entries]}

    @server.feature(rpc.REVERT_CHANGES)
    async def revert_changes(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
        session_id, turn, files, hunks = rpc.parse_revert_changes(params)
        host = ls.require_host()
        report = await revert(host.changes, host.files, session_id, turn=turn, file_paths=files, hunk_ids=hunks)
        return report.to_wire()

    @server.feature(rpc.KEEP_CHANGES)
    def keep_changes(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
        session_id, _, _, hunks = rpc.parse_revert_changes(params, method=rpc.KEEP_CHANGES)
        ls.require_host().changes.mark(session_id, "kept", hunks or [])
        return {"kept": hunks or []}
    @server.feature(rpc.STEER)
    def steer(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
        session_id, text = rpc.parse_queued_message(rpc.STEER, params)
        try:
            return ls.agents.queue(session_id, text, follow_up=False)
        except SessionIdle as exc:
            raise rpc.request_failed(rpc.STEER, str(exc)) from exc

    @server.feature(rpc.FOLLOW_UP)
    def follow_up(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
        session_id, text = rpc.parse_queued_message(rpc.FOLLOW_UP, params)
        try:
            return ls.agents.queue(session_id, text, follow_up=True)
        except SessionIdle as exc:
            raise rpc.request_failed(rpc.FOLLOW_UP, str(exc)) from exc

    @server.feature(rpc.SESSIONS)
    def sessions(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
        rpc.parse_sessions(params)
        return {"sessions": ls.agents.summaries(ls.require_host().env.cwd)}

    @server.feature(rpc.HEALTH)
    async def health(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
        """``pi/health``: facts only the server knows, for ``:checkhealth``-style diagnostics:
        ``{"version": str, "sandbox": {"mode", "available", "tool", "reason"}}``."""
        return {"version": __version__, "sandbox": await ls.check_sandbox()}

    @server.feature(rpc.ABORT)
    def abort(ls: PiLanguageServer, params: Any) -> None:
        try:
            session_id = rpc.parse_abort(params)
        except JsonRpcException as exc:
            logger.warning("ignored: %s", exc.message)
            return
        if session_id == rpc.EXTERNAL_SESSION:
            if not ls.abort_external():
                logger.info("pi/abort: no external tool call to abort")
            return
        if not ls.agents.abort(session_id):
            logger.info("pi/abort: no run to abort")

    # Plain LSP (issue 16): instruction comments as code actions, pi.* commands, progress.
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[code_actions.KIND_RUN, code_actions.KIND_ABORT, change_actions.KIND_REVERT],
            resolve_provider=False,
        ),
    )
    async def code_action(ls: PiLanguageServer, params: types.CodeActionParams) -> list[Any]:
        document = ls.require_host().store.by_uri(params.text_document.uri)
        if document is None:
            return []
        syntax = syntax_for(ls.plain.language_ids.get(document.uri), str(document.path or document.uri))
        literals = _code_action_literals(ls.client_capabilities)
        only = list(params.context.only) if params.context.only else None
        actions: list[Any] = code_actions.code_actions(
            document.uri, code_actions.split_lines(document.text), params.range, syntax,
            literal_support=literals, only=only, running=ls.plain.running,
        )
        if params.context.trigger_kind == types.CodeActionTriggerKind.Automatic:
            return actions  # a lightbulb on every cursor move: the change set is not worth reading
        return actions + await ls.plain.change_actions(document.uri, params.range, literal_support=literals, only=only)

    def command_handler(name: str) -> Any:
        async def command(ls: PiLanguageServer, *arguments: Any) -> Any:
            ls.require_host()
            msg_id = ls.protocol.msg_id
            replied = ls.protocol.reply_sent(msg_id) if msg_id is not None else None
            return await ls.plain.execute(name, list(arguments), replied)

        return command

    for name in (*code_actions.COMMANDS, *change_actions.COMMANDS):
        server.command(name)(command_handler(name))

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancel(ls: PiLanguageServer, params: types.WorkDoneProgressCancelParams) -> None:
        if not ls.plain.cancel_progress(params.token):
            logger.info("window/workDoneProgress/cancel: no run owns token %r", params.token)

    return server


def _code_action_literals(caps: types.ClientCapabilities | None) -> bool:
    action = caps.text_document.code_action if caps is not None and caps.text_document is not None else None
    return bool(action is not None and action.code_action_literal_support is not None)
