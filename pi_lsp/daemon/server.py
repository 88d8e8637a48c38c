"""The pi-lsp daemon: the server and the session state its handlers share (design.md sections 3 to 5).

:func:`create_server` builds a :class:`PiLanguageServer` and registers, in one place (the
switchboard), the module-level handlers of :mod:`pi_lsp.daemon.handlers`: ``lifecycle``
(``initialize``, ``initialized``, settings, folders, ``shutdown``), ``document_sync`` (into pi-lsp's
own :class:`~pi_lsp.editor.documents.DocumentStore`), ``tool_calls``, ``agent_runs``,
``change_review`` and ``plain_lsp`` (code actions, commands). Handlers never block the event loop:
tool calls are ``async`` and everything they wait for is awaited.

``$/cancelRequest`` of a tool call aborts the call's :class:`AbortSignal` instead of cancelling the
request: the pipeline then answers with a ``ToolResultMessage`` (``Operation aborted``), never a
bare JSON-RPC error (design.md section 2, Cancellation).
"""

from __future__ import annotations

import asyncio
import logging
import functools
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcServerNotInitialized
from pygls.lsp.server import LanguageServer

from pi_lsp import __version__
from pi_lsp.daemon import rpc
from pi_lsp.editor.connection import ClientFeatures
from pi_lsp.editor.lsp_connection import raw_dict_converter
from pi_lsp.daemon.handlers import (
    agent_runs, change_review, document_sync, editor_knowledge, lifecycle, plain_lsp, tool_calls,
)
from pi_lsp.daemon.client_log import CLIENT_LOG

if TYPE_CHECKING:  # loaded with the session, after the initialize reply (issue 21)
    from pi_lsp.agent.events import EventSink
    from pi_lsp.agent.tool import AbortSignal
    from pi_lsp.daemon.agent_sessions import AgentSessions
    from pi_lsp.daemon.approval_prompts import ApprovalPrompts
    from pi_lsp.daemon.commands import PlainCommands
    from pi_lsp.daemon.event_relay import EventRelay
    from pi_lsp.daemon.external_socket import ExternalSocket
    from pi_lsp.daemon.settings import Settings
    from pi_lsp.daemon.tool_host import ToolHost
    from pi_lsp.llm.types import ToolCall, ToolResultMessage
    from pi_lsp.policy.approvals import ApprovalPolicy

logger = logging.getLogger(__name__)

ANSWER_AFTER_ABORT_SECONDS = 3.0
"""How long, beyond the kill grace, the end of a session waits for aborted tool calls to answer."""


_SESSION_PARTS = ("events", "agents", "prompts", "external", "plain")
"""The parts of :class:`PiLanguageServer` built on first use (their modules are not needed to
answer ``initialize``), all built by :meth:`PiLanguageServer.start_pending_session`."""


class PiLanguageServer(LanguageServer):
    """The pygls server plus the session state the handlers share.

    Answering ``initialize`` needs only pygls and the handler tables: the session (settings,
    :class:`ToolHost`, policy, and the parts in :data:`_SESSION_PARTS`) is built right after the
    reply is written, or before the next message is handled if that comes first
    (:meth:`defer_session_start`; issue 21), so no message ever sees a half-started session.

    Attributes:
        host: the session's :class:`ToolHost`, ``None`` before ``initialize``.
        settings: the current ``pi`` settings.
        folders: workspace folders in order (the first is the working directory).
        tool_signals: abort signals of running tool requests, by JSON-RPC request id.
        external_ids: the ids among them of ``pi/executeToolCall(s)`` (session ``external``).
        exit_code: set by ``exit`` (0 after ``shutdown``, else 1); the transport stops then.
        startup_chores: run once, before the first session is built (process-wide set-up that
            the ``initialize`` reply need not wait for).
    """

    def __init__(self) -> None:
        super().__init__(
            "pi-lsp", __version__, protocol_cls=rpc.PiProtocol, converter_factory=raw_dict_converter
        )
        self.host: ToolHost | None = None
        self.features = ClientFeatures()
        self._settings: Settings | None = None
        self.folders: list[Path] = []
        self.tool_signals: dict[Any, AbortSignal] = {}
        self.external_ids: set[Any] = set()
        self.exit_code: int | None = None
        self.exit_requested = asyncio.Event()
        self._retiring: set[asyncio.Task[None]] = set()
        self._init_options: dict[str, Any] = {}
        self._settings_problems: list[str] = []
        self._unknown_keys_shown: set[str] = set()
        self.policy: ApprovalPolicy | None = None
        self.external_start: asyncio.Future[None] | None = None
        self._sandbox_warned = False
        self._pending_start: Callable[[], None] | None = None
        self.startup_chores: list[Callable[[], None]] = []

    @property
    def settings(self) -> Settings:
        """The current ``pi`` settings (the defaults until the session parsed the client's)."""
        if self._settings is None:
            from pi_lsp.daemon.settings import Settings

            self._settings = Settings()
        return self._settings

    @settings.setter
    def settings(self, value: Settings) -> None:
        self._settings = value

    @cached_property
    def events(self) -> EventRelay:
        """``pi/event`` notifications of the session ``external`` (:class:`EventRelay`)."""
        from pi_lsp.daemon.event_relay import EventRelay

        return EventRelay(self._send_event, rpc.EXTERNAL_SESSION)

    @cached_property
    def agents(self) -> AgentSessions:
        """The ``pi/prompt`` sessions."""
        from pi_lsp.daemon.agent_sessions import AgentSessions

        return AgentSessions(self._send_event)

    @cached_property
    def prompts(self) -> ApprovalPrompts:
        """How the approval policy asks the user."""
        from pi_lsp.daemon.approval_prompts import ApprovalPrompts

        return ApprovalPrompts(self.protocol, lambda: self.features.approvals, self._send_event)

    @cached_property
    def external(self) -> ExternalSocket:
        """The private per-user socket other agents reach pi-lsp's tools through."""
        from pi_lsp.daemon.external_socket import ExternalHandlers, ExternalSocket

        return ExternalSocket(ExternalHandlers(self._list_tools, self._execute_external))

    @cached_property
    def plain(self) -> PlainCommands:
        """Plain LSP: code actions, ``pi.*`` commands, work-done progress."""
        from pi_lsp.daemon.commands import PlainCommands

        return PlainCommands(self, self.protocol.notify, self._request)

    def defer_session_start(self, start: Callable[[], None]) -> None:
        """Run ``start`` (it builds the session) once the reply to the ``initialize`` request being
        handled is written, or before the next message is handled if that comes first."""
        self._pending_start = start
        msg_id = self.protocol.msg_id
        if msg_id is None:
            self.start_pending_session()
            return
        self.protocol.reply_sent(msg_id).add_done_callback(lambda _: self.start_pending_session())

    def start_pending_session(self) -> None:
        """Build the session :meth:`defer_session_start` was given, if it is not built yet (the
        :attr:`startup_chores` first, once). A failure is logged; requests that need the tool host
        then get ServerNotInitialized."""
        start, self._pending_start = self._pending_start, None
        if start is None:
            return
        chores, self.startup_chores = self.startup_chores, []
        for chore in chores:
            try:
                chore()
            except Exception:
                logger.exception("start-up chore %s failed", getattr(chore, "__name__", chore))
        try:
            start()
        except Exception:
            logger.exception("starting the session failed")
        for name in _SESSION_PARTS:
            getattr(self, name)

    def require_host(self) -> ToolHost:
        """The tool host; ``ServerNotInitialized`` (-32002) before ``initialize``."""
        if self.host is None:
            raise JsonRpcServerNotInitialized(message="the server is not initialized yet")
        return self.host

    def request_exit(self, code: int) -> None:
        """Stop serving (``exit`` received) with ``code``."""
        self.exit_code = code
        self.exit_requested.set()

    def tool_request(self, external: bool = False) -> ToolRequest:
        """An abort signal for the tool request being handled, registered for ``$/cancelRequest``
        (and for ``pi/abort {sessionId: "external"}`` when ``external``) while the ``with`` block runs."""
        # pygls's ``protocol.msg_id`` without the context copy it makes to read the variable (issue 21)
        return ToolRequest(self, self.protocol._ctx_msg_id.get(None), external)

    def abort_external(self) -> int:
        """Abort every running ``pi/executeToolCall(s)``; return how many were aborted."""
        signals = [self.tool_signals[i] for i in list(self.external_ids) if i in self.tool_signals]
        for signal in signals:
            signal.abort("aborted by the client (pi/abort)")
        return len(signals)

    async def end_session(self) -> None:
        """Abort running tool calls and let them answer (``Operation aborted``; bounded by the
        kill grace plus :data:`ANSWER_AFTER_ABORT_SECONDS`), end process groups, remove the temp
        folder and the private socket, stop nudging the client. Idempotent. A session still to be built is not built."""
        self._pending_start = None
        for signal in list(self.tool_signals.values()):
            signal.abort("the session ended")
        CLIENT_LOG.disconnect()
        if "external" in self.__dict__:
            await self.external.close()
        # the tasks of the tool requests still running (a handler that starts eagerly has no task
        # of its own in its first step, so they are looked up by request id, not kept)
        futures = self.protocol._request_futures
        running = [
            f for key in list(self.tool_signals) if isinstance(f := futures.get(key), asyncio.Future)
            and f is not asyncio.current_task() and not f.done()
        ]
        if running:
            grace = self.host.env.settings.bash_kill_grace_seconds if self.host is not None else 0.0
            await asyncio.wait(running, timeout=grace + ANSWER_AFTER_ABORT_SECONDS)
        if "events" in self.__dict__:
            self.events.close()
        if "plain" in self.__dict__:
            await self.plain.close()
        if self.host is not None:
            await self.host.close()
        if self._retiring:
            await asyncio.gather(*self._retiring, return_exceptions=True)
        self.protocol.nudge.close()

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
        from pi_lsp.daemon.settings import parse_settings

        self.settings, problems = parse_settings(raw)
        if self.host is not None:
            problems += self.host.apply_settings(self.settings)
        problems += self.configure_policy()
        self.report_settings_problems(problems)

    def report_settings_problems(self, problems: list[str]) -> None:
        """Show (and log) settings problems, unless they are the ones shown last: ``initialize``
        and ``initialized`` both read the same options, and one warning is enough. An unknown key
        (:attr:`Settings.unknown_key_problems`) is reported once while it stays in the settings,
        not again with each change of the others; removed and given again, it is reported again.

        Several problems go in one message, one ``- `` line each: editors show one
        ``window/showMessage`` at a time in their message area (Neovim's and Emacs's next message
        replaces the last); VS Code shows newlines as spaces, where the dashes keep them apart."""
        if problems == self._settings_problems:
            return
        self._settings_problems = list(problems)
        unknown = set(self.settings.unknown_key_problems)
        problems = [p for p in problems if p not in unknown or p not in self._unknown_keys_shown]
        self._unknown_keys_shown = unknown
        if len(problems) == 1:
            self.show(problems[0])
        elif problems:
            self.show("\n- ".join([f"{len(problems)} problems in the pi settings:", *problems]))

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
        from pi_lsp.policy.approvals import ApprovalPolicy

        self.policy = ApprovalPolicy(
            host.env, list(host.pipeline.tools), ask=self.prompts.ask, journal=PolicyJournal(self),
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
        _session_modules().log_decision(logger, entry)
        self.plain.on_approval(entry)
        session_id = entry.get("sessionId")
        if self.host is not None and isinstance(session_id, str) and session_id in self.agents.sessions:
            from pi_lsp.daemon.session_journal import SessionJournal

            SessionJournal(session_id, self.host.env.cwd).record(entry)


class PolicyJournal:
    """The approval policy's journal in the daemon: :meth:`PiLanguageServer.journal_approval`.

    A routine allow (the rules allowed the call without asking) is kept only by an agent
    session's journal and by a DEBUG log (a run's transcript leaves it out); :meth:`wants_routine`
    says whether one of them takes it, and the policy builds no entry otherwise (an external
    ``pi/executeToolCall`` read, issue 21)."""

    __slots__ = ("_server",)

    def __init__(self, server: PiLanguageServer) -> None:
        self._server = server

    def __call__(self, entry: dict[str, Any]) -> None:
        self._server.journal_approval(entry)

    def wants_routine(self, session_id: str) -> bool:
        """True when a routine allow of ``session_id``'s call would be recorded or logged."""
        server = self._server
        return (server.host is not None and session_id in server.agents.sessions) or logger.isEnabledFor(logging.DEBUG)


class ToolRequest:
    """``with server.tool_request(...) as signal``: see :meth:`PiLanguageServer.tool_request`.

    A class rather than a ``contextlib.contextmanager`` generator: it is entered once per tool
    call (issue 21: a generator, its wrapper object and their frames cost more than the registration).
    """

    __slots__ = ("_server", "_msg_id", "_external")

    def __init__(self, server: PiLanguageServer, msg_id: Any, external: bool) -> None:
        self._server = server
        self._msg_id = msg_id
        self._external = external

    def __enter__(self) -> AbortSignal:
        signal = _session_modules().AbortSignal()
        msg_id = self._msg_id
        if msg_id is not None:
            self._server.tool_signals[msg_id] = signal
            if self._external:
                self._server.external_ids.add(msg_id)
        return signal

    def __exit__(self, *exc_info: object) -> None:
        msg_id = self._msg_id
        if msg_id is not None:
            self._server.tool_signals.pop(msg_id, None)
            self._server.external_ids.discard(msg_id)


class _SessionModules:
    """What the per-call code of this module uses from modules loaded with the session (not
    needed to answer ``initialize``), looked up once: an ``import`` statement in a function costs
    about a microsecond each time it runs (issue 21)."""

    def __init__(self) -> None:
        from pi_lsp.agent.tool import AbortSignal
        from pi_lsp.policy.approvals import log_decision

        self.AbortSignal = AbortSignal
        self.log_decision = log_decision


@functools.cache
def _session_modules() -> _SessionModules:
    return _SessionModules()


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


def create_server() -> PiLanguageServer:
    """Build the daemon and register every handler (the switchboard): the module-level handlers of
    :mod:`pi_lsp.daemon.handlers`, one module per concern."""
    server = PiLanguageServer()
    for module in (lifecycle, document_sync, tool_calls, agent_runs, change_review, plain_lsp, editor_knowledge):
        for method, *options, handler in module.FEATURES:
            if getattr(handler, "eager_start", False):
                # bound here: pygls would wrap it in one more coroutine to pass the server (issue 21)
                handler = functools.partial(handler, server)
            server.feature(method, *options)(handler)
    for name in plain_lsp.COMMANDS:
        server.command(name)(plain_lsp.command_handler(name))
    return server
