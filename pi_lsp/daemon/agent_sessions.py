"""The daemon's agent sessions: ``pi/prompt`` and ``pi/abort`` behind the switchboard (design.md 5, 6).

:class:`AgentSessions` keeps the sessions of one daemon by id and runs at most **one** prompt at a
time (the workspace, its buffers and its processes are shared, so two runs would fight over them):
a prompt while one runs raises :class:`~pi_lsp.agent.session.SessionBusy`, which the server turns
into a JSON-RPC RequestFailed error.

Each run:

- ends at once with ``stopReason: "error"`` when ``pi.baseUrl`` or ``pi.model`` is not set
  (there is no default endpoint or model);
- builds the provider from the ``pi`` settings (``baseUrl``, ``model``, ``apiKeyEnv``, retries,
  backoff and timeouts; :class:`~pi_lsp.llm.openai_compat.OpenAICompatProvider`, imported only
  when a prompt arrives, so the daemon starts without httpx) and closes it afterwards;
- builds the system prompt per turn from the active tools and ``AGENTS.md`` in the working
  directory (read at the start of the run, from disk);
- sends every event as ``pi/event {sessionId, event}`` through an
  :class:`~pi_lsp.daemon.event_relay.EventRelay` (bounded payloads, coalesced tool updates);
- journals the messages (:mod:`pi_lsp.daemon.session_journal`).

A ``sessionId`` that names no live session continues the journaled one when its journal exists,
else starts a new session with that id; no ``sessionId`` starts a new session.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_lsp.agent.loop import LoopConfig
from pi_lsp.agent.session import AgentSession, SessionBusy
from pi_lsp.agent.system_prompt import ContextFile, build_system_prompt, prompt_tool
from pi_lsp.agent.tool import AbortSignal
from pi_lsp.daemon.event_relay import EventRelay
from pi_lsp.llm.provider import ProviderSettings
from pi_lsp.daemon.session_journal import SessionJournal, load_messages, valid_session_id
from pi_lsp.daemon.settings import Settings
from pi_lsp.daemon.tool_host import ToolHost

logger = logging.getLogger(__name__)

CONTEXT_FILE = "AGENTS.md"
MAX_CONTEXT_BYTES = 256 * 1024
"""An ``AGENTS.md`` larger than this is cut (with a note) before it goes into the prompt."""

Send = Callable[[dict[str, Any]], None]


def provider_settings(settings: Settings) -> ProviderSettings:
    """The provider's settings from the daemon's ``pi`` settings (unset values keep the
    provider's defaults)."""
    values: dict[str, Any] = {
        "max_retries": settings.max_retries,
        "backoff_initial_seconds": settings.backoff_initial_seconds,
        "backoff_max_seconds": settings.backoff_max_seconds,
        "connect_timeout_seconds": settings.connect_timeout_seconds,
        "read_timeout_seconds": settings.read_timeout_seconds,
        "progress_timeout_seconds": settings.progress_timeout_seconds,
        "api_key_env": settings.api_key_env,
    }
    if settings.base_url:
        values["base_url"] = settings.base_url
    if settings.model:
        values["model"] = settings.model
    return ProviderSettings(**values)


def missing_model_settings(settings: Settings) -> str | None:
    """Why no model can be called (``pi.baseUrl`` or ``pi.model`` not set; neither has a default,
    README settings table), or ``None`` when both are set."""
    missing = [name for name, value in (("pi.baseUrl", settings.base_url), ("pi.model", settings.model)) if not value]
    if not missing:
        return None
    return (
        f"No model is configured: {' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set. "
        "Set pi.baseUrl (an OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1) and pi.model "
        "(the model id it serves) in the editor's pi settings or initializationOptions {\"pi\": {...}}."
    )


def context_files(cwd: Path) -> list[ContextFile]:
    """``AGENTS.md`` of ``cwd`` as a context file, if it exists and is readable text."""
    path = cwd / CONTEXT_FILE
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_CONTEXT_BYTES + 1)
    except OSError:
        return []
    text = data[:MAX_CONTEXT_BYTES].decode("utf-8", errors="replace")
    if len(data) > MAX_CONTEXT_BYTES:
        text += f"\n\n[{CONTEXT_FILE} cut at {MAX_CONTEXT_BYTES} bytes]"
    return [ContextFile(path=CONTEXT_FILE, content=text)]


class AgentSessions:
    """Every agent session of the daemon (see the module docstring).

    ``send`` delivers the params of one ``pi/event`` notification; ``journal_dir`` overrides the
    journal folder (default: :func:`pi_lsp.daemon.session_journal.sessions_dir`).
    """

    def __init__(self, send: Send, journal_dir: Path | None = None) -> None:
        self._send = send
        self._journal_dir = journal_dir
        self.sessions: dict[str, AgentSession] = {}
        self.active: AgentSession | None = None

    def session(self, session_id: str | None) -> AgentSession:
        """The live session ``session_id``, its journaled transcript, or a new session.

        Raises ``ValueError`` for an id that is not ``[A-Za-z0-9_-]{1,128}``.
        """
        if session_id is None:
            session = AgentSession()
        elif session_id in self.sessions:
            return self.sessions[session_id]
        elif not valid_session_id(session_id):
            raise ValueError("sessionId must be 1 to 128 letters, digits, '-' or '_'")
        else:
            session = AgentSession(session_id, load_messages(session_id, self._journal_dir) or [])
        self.sessions[session.id] = session
        return session

    async def prompt(
        self,
        text: str,
        session_id: str | None,
        *,
        host: ToolHost,
        settings: Settings,
        signal: AbortSignal | None = None,
    ) -> dict[str, Any]:
        """Run one prompt to its end: ``{sessionId, stopReason, errorMessage?}``.

        Raises :class:`SessionBusy` while another run is active, ``ValueError`` for a bad
        ``session_id``. Provider and tool failures end the run (``stopReason`` ``error``), they do
        not raise.
        """
        if self.active is not None:
            raise SessionBusy(
                f"The agent is already processing a prompt (session {self.active.id}). "
                "Wait for it to finish or abort it (pi/abort)."
            )
        session = self.session(session_id)
        missing = missing_model_settings(settings)
        if missing is not None:
            logger.warning("pi/prompt refused: %s", missing)
            return {"sessionId": session.id, "stopReason": "error", "errorMessage": missing}
        relay = EventRelay(self._send, session.id)
        journal = SessionJournal(session.id, host.env.cwd, self._journal_dir)
        from pi_lsp.llm.openai_compat import OpenAICompatProvider

        provider = OpenAICompatProvider(provider_settings(settings))
        self.active = session
        cwd = host.env.cwd
        contexts = context_files(cwd)
        config = LoopConfig(
            provider=provider,
            pipeline=host.pipeline,
            system_prompt=lambda tools: build_system_prompt(
                [prompt_tool(t) for t in tools], cwd=str(cwd), context_files=contexts
            ),
            max_turns=settings.max_turns,
            session_id=session.id,
        )
        try:
            result = await session.prompt(
                text, config, signal=signal, on_event=relay, on_message=journal.message
            )
        finally:
            self.active = None
            relay.close()
            await provider.aclose()
        journal.run_end(result.stop_reason, result.error_message)
        reply: dict[str, Any] = {"sessionId": session.id, "stopReason": result.stop_reason}
        if result.error_message is not None:
            reply["errorMessage"] = result.error_message
        return reply

    def abort(self, session_id: str | None = None) -> bool:
        """Abort the active run (only if it belongs to ``session_id`` when given); ``False`` when
        nothing was aborted."""
        active = self.active
        if active is None or (session_id is not None and active.id != session_id):
            return False
        return active.abort()
