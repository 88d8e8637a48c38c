"""``workspace/executeCommand`` for editors without a pi-lsp plugin (issue 16).

Commands (advertised in ``executeCommandProvider.commands``):

- ``pi.runInstruction {uri, line, instruction, selection?}`` (the "Pi: run this instruction" code
  action, :mod:`pi_lsp.daemon.code_actions`): checks that the line still holds the instruction,
  removes it through the agent's own edit path (a versioned ``workspace/applyEdit`` verified by
  ``didChange``; the disk for a client without ``workspace.applyEdit``), then starts the agent with
  the instruction and its context;
- ``pi.prompt "text"`` or ``pi.prompt {text, sessionId?}``: starts the agent with the text;
- ``pi.abort``: aborts the running prompt (also a pending start); answers ``{aborted}``;
- ``pi.revertHunk {sessionId, hunk}`` and ``pi.revertTurn {sessionId, turn}``: take an agent hunk
  or a turn back (:mod:`pi_lsp.daemon.change_actions`); answer ``pi/revertChanges``'s report and
  show its conflicts.

A start answers at once with ``{sessionId, transcript}`` and the run goes on in the background:
clients such as eglot wait for ``executeCommand`` synchronously, with a timeout, so the reply
cannot wait for the run; nothing of the run reaches the client before that reply. An instruction
that moved since the code action was computed (the user typed above it) is found again by its
text. What prevents a start (no model configured, another run active, the instruction gone or
ambiguous, a bad argument) is an error reply (RequestFailed or InvalidParams) and a
``window/showMessage``; nothing is removed then. Failures after the reply (the editor refused the
removal) are ``window/showMessage`` errors.

Each run started here gets its work-done progress (:mod:`pi_lsp.daemon.work_done_progress`) and its
transcript document (:mod:`pi_lsp.daemon.transcript_document`), opened with
``window/showDocument`` (``takeFocus: false``) when the client supports it, else announced with
``window/showMessage``. Clients without work-done progress get the final state as a message.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any, Protocol

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from pi_lsp.agent.session_errors import SessionBusy
from pi_lsp.agent.tool import ToolError
from pi_lsp.daemon import rpc
from pi_lsp.changes.revert import revert
from pi_lsp.daemon import change_actions
from pi_lsp.daemon.agent_sessions import AgentSessions, missing_model_settings
from pi_lsp.daemon.change_actions import latest_changed_session
from pi_lsp.daemon.code_actions import (
    ABORT,
    PROMPT,
    RUN_INSTRUCTION,
    InstructionArgs,
    context_after_removal,
    instruction_prompt,
    line_pieces,
    split_lines,
)
from pi_lsp.daemon.comment_syntax import instruction_of, language_of, syntax_for
from pi_lsp.daemon.run_status import final_line
from pi_lsp.daemon.session_journal import sessions_dir
from pi_lsp.daemon.settings import Settings
from pi_lsp.daemon.tool_host import ToolHost
from pi_lsp.daemon.transcript_document import TranscriptDocument
from pi_lsp.daemon.work_done_progress import RunProgress
from pi_lsp.editor.documents import UTF8_BOM, Document

logger = logging.getLogger(__name__)

REMOVE_LABEL = "pi: remove the instruction comment"
"""The ``workspace/applyEdit`` label of an instruction's removal."""


class Daemon(Protocol):
    """What the commands need of :class:`~pi_lsp.daemon.server.PiLanguageServer`."""

    agents: AgentSessions
    settings: Settings
    client_capabilities: types.ClientCapabilities

    def require_host(self) -> ToolHost: ...

    def show(self, message: str, kind: types.MessageType = ...) -> None: ...


class Run:
    """One run started by a command: its session id, progress and transcript."""

    def __init__(self, session_id: str, progress: RunProgress, transcript: TranscriptDocument) -> None:
        self.session_id = session_id
        self.progress = progress
        self.transcript = transcript
        self.aborted = False

    def event(self, event: dict[str, Any]) -> None:
        self.progress.event(event)
        self.transcript.event(event)


class PlainCommands:
    """The ``pi.*`` commands and the runs they started (see the module docstring).

    ``notify(method, params)`` and ``request(method, params)`` (awaitable) talk to the client.
    """

    def __init__(self, daemon: Daemon, notify: Any, request: Any) -> None:
        self._daemon = daemon
        self._notify = notify
        self._request = request
        self.language_ids: dict[str, str] = {}
        """``languageId`` of each open document, from ``didOpen``."""
        self.runs: dict[str, Run] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._starting: Run | None = None
        self._replied: asyncio.Future[None] | None = None

    # -- routing from the server --------------------------------------------------------------

    def on_event(self, params: dict[str, Any]) -> None:
        """A ``pi/event`` the daemon sent: forward it to its run's progress and transcript."""
        run = self.runs.get(params.get("sessionId"))  # type: ignore[arg-type]
        if run is not None and isinstance(params.get("event"), dict):
            run.event(params["event"])

    def on_approval(self, entry: dict[str, Any]) -> None:
        """An approval decision: into its run's transcript."""
        run = self.runs.get(entry.get("sessionId"))  # type: ignore[arg-type]
        if run is not None:
            run.transcript.approval(entry)

    def cancel_progress(self, token: Any) -> bool:
        """``window/workDoneProgress/cancel``: abort the run owning ``token``."""
        for run in self.runs.values():
            if run.progress.owns(token):
                return self._abort_run(run)
        return False

    @property
    def running(self) -> bool:
        """A run (or a start) is active."""
        return self._daemon.agents.active is not None or self._starting is not None

    async def close(self) -> None:
        """Session end: abort every run of this module, cancel its task (a run may still wait for
        a reply that will never be written) and wait for the tasks to finish."""
        for run in list(self.runs.values()):
            self._abort_run(run)
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- the commands -------------------------------------------------------------------------

    async def execute(self, command: str, arguments: list[Any], replied: "asyncio.Future[None] | None" = None) -> Any:
        """Run ``command`` with ``arguments`` (the request's list); see the module docstring.

        ``replied`` resolves when the command's reply has been written; a started run sends
        nothing to the client before that (:meth:`~pi_lsp.daemon.rpc.PiProtocol.reply_sent`).
        """
        self._replied = replied
        if command == ABORT:
            return {"aborted": self.abort()}
        try:
            if command in change_actions.COMMANDS:
                return await self._revert(command, arguments)
            if command == PROMPT:
                text, session_id = _prompt_args(arguments)
                return self._start(text, session_id, None)
            if command == RUN_INSTRUCTION:
                if len(arguments) != 1:
                    raise ValueError("expects one argument {uri, line, instruction, selection?}")
                return await self._run_instruction(InstructionArgs.from_json(arguments[0]))
        except ValueError as exc:
            raise self._refuse(rpc.invalid_params(command, str(exc))) from exc
        except _Refused as exc:
            raise self._refuse(rpc.request_failed(command, str(exc))) from exc
        raise rpc.invalid_params(command, "unknown command")

    def abort(self) -> bool:
        """``pi.abort``: abort the active run, or the start in progress; ``False`` when none."""
        if self._daemon.agents.abort():
            return True
        if self._starting is not None:
            return self._abort_run(self._starting)
        return False

    def _abort_run(self, run: Run) -> bool:
        run.aborted = True
        active = self._daemon.agents.active
        if active is not None and active.id == run.session_id:
            return active.abort()
        return run is self._starting

    async def change_actions(
        self, uri: str, range_: types.Range, *, literal_support: bool, only: list[str] | None
    ) -> list[types.CodeAction | types.Command]:
        """The revert code actions for ``range_`` of document ``uri`` (none while a run is active:
        its changes are still coming)."""
        host = self._daemon.require_host()
        document = host.store.by_uri(uri)
        await host.changes.pending.settled()  # bash confirmation walks still recording
        session_id = latest_changed_session(host.changes, self._daemon.agents.sessions)
        if self.running or session_id is None:
            return []
        last = range_.end.line - (1 if range_.end.line > range_.start.line and range_.end.character == 0 else 0)
        path = document.path if document is not None else None
        lines = (range_.start.line, last)
        found = await change_actions.change_actions(host.changes, host.files, session_id, path, lines)
        return change_actions.as_code_actions(found, literal_support=literal_support, only=only)

    async def _revert(self, command: str, arguments: list[Any]) -> dict[str, Any]:
        session_id, hunk, turn = change_actions.parse_revert_argument(command, arguments)
        if self.running:
            raise _Refused("the agent is running; wait for it or abort it (pi.abort) before undoing its changes")
        host = self._daemon.require_host()
        report = await revert(host.changes, host.files, session_id, turn=turn, hunk_ids=[hunk] if hunk else None,
                              cwd=host.env.cwd)
        if report.conflicts:
            shown = "; ".join(f"{Path(c['path']).name}: {c['reason']}" for c in report.conflicts[:5])
            self._daemon.show(f"Pi: left as they are: {shown}", types.MessageType.Warning)
        elif not report.reverted and not report.files:
            self._message("Pi: nothing to undo")
        return report.to_wire()

    def _refuse(self, error: JsonRpcException) -> JsonRpcException:
        self._daemon.show(f"Pi: {error.message}", types.MessageType.Error)
        return error

    async def _run_instruction(self, args: InstructionArgs) -> dict[str, Any]:
        host = self._daemon.require_host()
        document = host.store.by_uri(args.uri)
        if document is None:
            raise _Refused(f"{args.uri} is not open in the editor")
        lines = split_lines(document.text)
        syntax = syntax_for(self.language_ids.get(args.uri), str(document.path or args.uri))
        args = _relocated(args, lines, syntax)
        self._check_can_start()
        path = _shown_path(document, host.env.cwd)
        context = context_after_removal(lines, args.line, args.selection)
        remaining = lines[: args.line] + lines[args.line + 1:]
        language = language_of(self.language_ids.get(args.uri), str(document.path or args.uri))
        prompt = instruction_prompt(args.instruction, path, args.line, remaining, context, language)
        return self._start(prompt, None, (document, args.line, lines[args.line]))

    def _check_can_start(self) -> None:
        missing = missing_model_settings(self._daemon.settings)
        if missing is not None:
            raise _Refused(missing)
        active = self._daemon.agents.active
        if active is not None or self._starting is not None:
            busy = active.id if active is not None else self._starting.session_id  # type: ignore[union-attr]
            raise _Refused(f"the agent is already processing a prompt (session {busy}); wait for it or run pi.abort")

    def _start(self, text: str, session_id: str | None, removal: tuple[Document, int, str] | None) -> dict[str, Any]:
        host = self._daemon.require_host()
        self._check_can_start()
        session = self._daemon.agents.session(session_id)
        caps = self._daemon.client_capabilities
        window = caps.window if caps is not None else None
        progress = RunProgress(
            self._notify, self._request,
            supported=bool(window is not None and window.work_done_progress),
            timeout_seconds=self._daemon.settings.edit.apply_timeout_seconds,
        )
        transcript = TranscriptDocument(sessions_dir() / f"{session.id}.md", session.id, host.env.cwd)
        run = Run(session.id, progress, transcript)
        self.runs[session.id] = run
        self._starting = run
        task = asyncio.ensure_future(self._run(run, text, removal, host, self._replied))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return {"sessionId": session.id, "transcript": transcript.uri}

    async def _run(
        self, run: Run, text: str, removal: tuple[Document, int, str] | None, host: ToolHost,
        replied: "asyncio.Future[None] | None",
    ) -> None:
        reply: dict[str, Any] = {"sessionId": run.session_id, "stopReason": "error"}
        try:
            if replied is not None:
                await replied
            run.transcript.start(text)
            self._show_transcript(run)
            await run.progress.begin(text)
            if removal is not None:
                await self._remove_instruction(*removal, host)
            if run.aborted:
                reply = {"sessionId": run.session_id, "stopReason": "aborted"}
                return
            self._starting = None
            reply = await self._daemon.agents.prompt(
                text, run.session_id, host=host, settings=self._daemon.settings
            )
        except asyncio.CancelledError:
            reply = {"sessionId": run.session_id, "stopReason": "aborted"}
            raise
        except (ToolError, SessionBusy) as exc:
            message = exc.message if isinstance(exc, ToolError) else str(exc)
            reply = {"sessionId": run.session_id, "stopReason": "error", "errorMessage": message}
        except Exception as exc:  # never let a background run die silently
            logger.exception("the run of session %s failed", run.session_id)
            reply = {"sessionId": run.session_id, "stopReason": "error", "errorMessage": str(exc)}
        finally:
            if self._starting is run:
                self._starting = None
            self.runs.pop(run.session_id, None)
            run.transcript.end(reply)
            run.progress.end(reply)
            try:
                self._announce_end(run, reply)
            except Exception:  # the client may be gone (session end)
                logger.exception("could not announce the end of the run of session %s", run.session_id)

    async def _remove_instruction(self, document: Document, line: int, expected: str, host: ToolHost) -> None:
        """Remove the instruction line through the edit path the agent's edits take
        (:class:`~pi_lsp.editor.file_access.EditorFileAccess`: a versioned ``workspace/applyEdit``
        verified by ``didChange``, or the disk for a client without ``workspace.applyEdit``).
        ToolError when it cannot be done or the line changed meanwhile."""
        if document.path is None:
            raise ToolError(f"{document.uri} is not a file, so the instruction line cannot be removed")
        snapshot = await host.files.read(document.path)
        bom = UTF8_BOM if snapshot.data.startswith(UTF8_BOM) else b""
        text = snapshot.data[len(bom):].decode("utf-8", "surrogatepass")
        pieces = line_pieces(text)
        if line >= len(pieces) or split_lines(pieces[line]) != [expected]:
            raise ToolError("the instruction line changed before it could be removed; run the code action again")
        new = "".join(pieces[:line] + pieces[line + 1:])
        await host.files.write(
            document.path, bom + new.encode("utf-8", "surrogatepass"), previous=snapshot, label=REMOVE_LABEL
        )

    def _show_transcript(self, run: Run) -> None:
        caps = self._daemon.client_capabilities
        window = caps.window if caps is not None else None
        show = window.show_document if window is not None else None
        if show is None or not show.support:
            self._message(f"Pi is running; transcript: {run.transcript.path}")
            return
        params = types.ShowDocumentParams(uri=run.transcript.uri, external=False, take_focus=False)
        future = asyncio.ensure_future(self._request(types.WINDOW_SHOW_DOCUMENT, params))
        future.add_done_callback(_log_show_document)

    def _announce_end(self, run: Run, reply: dict[str, Any]) -> None:
        line = final_line(reply)
        if reply.get("stopReason") == "error":
            self._daemon.show(f"Pi: {line}", types.MessageType.Error)
        elif not run.progress.began:
            self._message(f"Pi: {line}")

    def _message(self, text: str) -> None:
        """``window/showMessage`` at Info level (logged at INFO, unlike the daemon's warnings)."""
        logger.info("%s", text)
        try:
            self._notify(types.WINDOW_SHOW_MESSAGE, types.ShowMessageParams(type=types.MessageType.Info, message=text))
        except Exception:  # the client may be gone
            logger.exception("could not send window/showMessage")


class _Refused(Exception):
    """A command that cannot start (answered with RequestFailed)."""


def _relocated(args: InstructionArgs, lines: list[str], syntax: Any) -> InstructionArgs:
    """``args`` with the instruction's current line: its line when it still holds the instruction,
    else the one line that now does (the user typed above it since the code action was computed;
    a selection moves with it). Raises :class:`_Refused` when no line or several lines do."""
    if args.line < len(lines) and instruction_of(lines[args.line], syntax) == args.instruction:
        return args
    found = [i for i, line in enumerate(lines) if instruction_of(line, syntax) == args.instruction]
    if len(found) != 1:
        where = "no line holds" if not found else f"{len(found)} lines hold"
        raise _Refused(f"{where} the instruction {args.instruction!r} now; run the code action again")
    shift = found[0] - args.line
    selection = (args.selection[0] + shift, args.selection[1] + shift) if args.selection else None
    if selection is not None and selection[0] < 0:
        selection = None
    return InstructionArgs(args.uri, found[0], args.instruction, selection)


def _prompt_args(arguments: list[Any]) -> tuple[str, str | None]:
    if len(arguments) != 1:
        raise ValueError('expects one argument: the prompt text, or {"text", "sessionId"?}')
    value = arguments[0]
    session_id = None
    if isinstance(value, dict):
        session_id = value.get("sessionId")
        value = value.get("text")
        if session_id is not None and not isinstance(session_id, str):
            raise ValueError("sessionId must be a string")
    if not isinstance(value, str) or not value.strip():
        raise ValueError("the prompt text must be a non-empty string")
    return value, session_id


def _shown_path(document: Document, cwd: Path) -> str:
    if document.path is None:
        return document.uri
    try:
        return document.path.relative_to(cwd).as_posix()
    except ValueError:
        return str(document.path)


def _log_show_document(future: "asyncio.Future[Any]") -> None:
    if future.cancelled():
        return
    error = future.exception()
    if error is not None:
        logger.info("window/showDocument of the transcript failed: %s", error)
