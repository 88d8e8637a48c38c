"""The daemon's agent sessions: ``pi/prompt`` and ``pi/abort`` behind the switchboard (design.md 5, 6).

:class:`AgentSessions` keeps the sessions of one daemon by id and runs at most **one** prompt at a
time (the workspace, its buffers and its processes are shared, so two runs would fight over them):
a prompt while one runs raises :class:`~pi_lsp.agent.session.SessionBusy`, which the server turns
into a JSON-RPC RequestFailed error.

Each run:

- ends at once with ``stopReason: "error"`` when ``pi.baseUrl`` or ``pi.model`` is not set
  (there is no default endpoint or model);
- builds the provider from the ``pi`` settings (``provider``, ``baseUrl``, ``model``,
  ``apiKeyEnv``, ``maxTokens``, ``thinking``, retries, backoff and timeouts;
  :class:`~pi_lsp.llm.openai_compat.OpenAICompatProvider` or
  :class:`~pi_lsp.llm.anthropic.AnthropicProvider`, imported only when a prompt arrives, so the
  daemon starts without httpx) and closes it afterwards;
- builds the system prompt per turn from the active tools and ``AGENTS.md`` in the working
  directory (read at the start of the run, from disk);
- sends every event as ``pi/event {sessionId, event}`` through an
  :class:`~pi_lsp.daemon.event_relay.EventRelay` (bounded payloads, coalesced tool updates);
- journals the messages (:mod:`pi_lsp.daemon.session_journal`).

A ``sessionId`` that names no live session continues the journaled one when its journal exists
(resume after a daemon restart: the transcript is rebuilt from the journal, and tool calls the
stopped daemon left without results get error results, journaled too; approval grants are not
restored, so a resumed session asks again), else starts a new session with that id; no
``sessionId`` starts a new session. :meth:`AgentSessions.summaries` lists a workspace's journals
(``pi/sessions``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typing import TYPE_CHECKING

from pi_lsp.agent.session_errors import SessionBusy, SessionIdle
from pi_lsp.agent.tool import AbortSignal
from pi_lsp.daemon.event_relay import EventRelay
from pi_lsp.daemon.session_journal import (
    SessionJournal,
    interrupted_results,
    list_sessions,
    load_messages,
    valid_session_id,
)

if TYPE_CHECKING:  # the agent loop, compaction and provider code load with the first prompt (issue 21)
    from pi_lsp.agent.compaction import CompactionSettings
    from pi_lsp.agent.session import AgentSession
    from pi_lsp.agent.system_prompt import ContextFile
    from pi_lsp.daemon.settings import Settings
    from pi_lsp.daemon.tool_host import ToolHost
    from pi_lsp.llm.provider import ProviderSettings

logger = logging.getLogger(__name__)

CONTEXT_FILE = "AGENTS.md"
MAX_CONTEXT_BYTES = 256 * 1024
"""An ``AGENTS.md`` larger than this is cut (with a note) before it goes into the prompt."""

Send = Callable[[dict[str, Any]], None]


def provider_settings(settings: Settings) -> ProviderSettings:
    """The provider's settings from the daemon's ``pi`` settings (unset values keep the
    provider's defaults; with ``pi.provider`` ``anthropic`` an unset ``baseUrl`` is Anthropic's
    API and, for it, an unset ``apiKeyEnv`` is ``ANTHROPIC_API_KEY``)."""
    from pi_lsp.llm.provider import ANTHROPIC_API_KEY_ENV, ANTHROPIC_BASE_URL, ProviderSettings

    values: dict[str, Any] = {
        "max_retries": settings.max_retries,
        "backoff_initial_seconds": settings.backoff_initial_seconds,
        "backoff_max_seconds": settings.backoff_max_seconds,
        "connect_timeout_seconds": settings.connect_timeout_seconds,
        "read_timeout_seconds": settings.read_timeout_seconds,
        "progress_timeout_seconds": settings.progress_timeout_seconds,
        "api_key_env": settings.api_key_env,
        "max_tokens": settings.max_tokens,
        "thinking_budget": settings.thinking or None,
    }
    if settings.base_url:
        values["base_url"] = settings.base_url
    elif settings.provider == "anthropic":
        values["base_url"] = ANTHROPIC_BASE_URL
        values["api_key_env"] = settings.api_key_env or ANTHROPIC_API_KEY_ENV
    if settings.model:
        values["model"] = settings.model
    return ProviderSettings(**values)


def make_provider(settings: Settings) -> Any:
    """The provider ``pi.provider`` names, built from :func:`provider_settings` (httpx is imported
    here, when the first prompt arrives, not at daemon start). Close it with ``aclose()``."""
    if settings.provider == "anthropic":
        from pi_lsp.llm.anthropic import AnthropicProvider

        return AnthropicProvider(provider_settings(settings))
    from pi_lsp.llm.openai_compat import OpenAICompatProvider

    return OpenAICompatProvider(provider_settings(settings))


def compaction_settings(settings: Settings) -> CompactionSettings:
    """The loop's compaction settings from ``pi.contextWindow`` (or the model's known default)
    and ``pi.compaction``."""
    from pi_lsp.agent.compaction import CompactionSettings
    from pi_lsp.llm.context_windows import default_context_window

    return CompactionSettings(
        context_window=settings.context_window or default_context_window(settings.model),
        reserve_tokens=settings.compaction.reserve_tokens,
        keep_recent_tokens=settings.compaction.keep_recent_tokens,
        enabled=settings.compaction.enabled,
    )


def missing_model_settings(settings: Settings) -> str | None:
    """Why no model can be called (``pi.model`` not set, or ``pi.baseUrl`` not set for the
    ``openai`` provider; README settings table), or ``None`` when the model can be called.

    A value the client gave but :func:`~pi_lsp.daemon.settings.parse_settings` rejected is called
    invalid, with the reason (``pi.model is invalid: Input should be a valid string (got 5)``),
    not "not set"."""
    from pi_lsp.llm.provider import ANTHROPIC_BASE_URL

    base_url = settings.base_url or (ANTHROPIC_BASE_URL if settings.provider == "anthropic" else None)
    missing = [name for name, value in (("pi.baseUrl", base_url), ("pi.model", settings.model)) if not value]
    if not missing:
        return None
    invalid = [f"{name} is invalid: {why}" for name in missing if (why := settings.rejection(name))]
    unset = [name for name in missing if not settings.rejection(name)]
    if unset:
        invalid.append(f"{' and '.join(unset)} {'is' if len(unset) == 1 else 'are'} not set")
    return (
        f"No model is configured: {'; '.join(invalid)}. "
        "Set pi.baseUrl (an OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1) and pi.model "
        "(the model id it serves) in the editor's pi settings or initializationOptions {\"pi\": {...}}."
    )


def context_files(cwd: Path) -> list[ContextFile]:
    """``AGENTS.md`` of ``cwd`` as a context file, if it exists and is readable text."""
    from pi_lsp.agent.system_prompt import ContextFile

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
        self._resumed: set[str] = set()

    def session(self, session_id: str | None) -> AgentSession:
        """The live session ``session_id``, its journaled transcript, or a new session.

        Raises ``ValueError`` for an id that is not ``[A-Za-z0-9_-]{1,128}``.
        """
        from pi_lsp.agent.session import AgentSession

        if session_id is None:
            session = AgentSession()
        elif session_id in self.sessions:
            return self.sessions[session_id]
        elif not valid_session_id(session_id):
            raise ValueError("sessionId must be 1 to 128 letters, digits, '-' or '_'")
        else:
            journaled = load_messages(session_id, self._journal_dir)
            session = AgentSession(session_id, journaled or [])
            if journaled is not None:
                self._resumed.add(session.id)
        self.sessions[session.id] = session
        return session

    def summaries(self, cwd: Path) -> list[dict[str, Any]]:
        """``pi/sessions``: the journaled sessions of workspace ``cwd``, most recent first (see
        :func:`~pi_lsp.session_journal.list_sessions`; ``cwd`` is left out of each entry)."""
        return [{k: v for k, v in s.items() if k != "cwd"} for s in list_sessions(cwd, self._journal_dir)]

    async def prompt(
        self,
        text: str,
        session_id: str | None,
        *,
        host: ToolHost,
        settings: Settings,
        signal: AbortSignal | None = None,
    ) -> dict[str, Any]:
        """Run one prompt to its end: ``{sessionId, stopReason, errorMessage?, undelivered?}``
        (``undelivered``: the texts of steering and follow-up messages the run ended before
        sending, so the editor can offer them again).

        Raises :class:`SessionBusy` while another run is active, ``ValueError`` for a bad
        ``session_id``. Provider and tool failures end the run (``stopReason`` ``error``), they do
        not raise.
        """
        from pi_lsp.agent.loop import LoopConfig
        from pi_lsp.agent.system_prompt import build_system_prompt, prompt_tool
        from pi_lsp.llm.types import to_wire

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
        if session.id in self._resumed:
            self._resumed.discard(session.id)
            for result in interrupted_results(session.messages):
                session.messages.append(result)
                journal.message(to_wire(result))
        provider = make_provider(settings)
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
            compaction=compaction_settings(settings),
        )

        def on_event(event: dict[str, Any]) -> None:
            if event.get("type") == "compaction":
                journal.compaction(event)
            relay(event)

        host.changes.begin_prompt(session.id)  # the user's unit of review and undo (issue 18)
        try:
            result = await session.prompt(
                text, config, signal=signal, on_event=host.track_turns(on_event, session.id),
                on_message=journal.message,
            )
        finally:
            self.active = None
            relay.close()
            await provider.aclose()
        journal.run_end(result.stop_reason, result.error_message)
        reply: dict[str, Any] = {"sessionId": session.id, "stopReason": result.stop_reason}
        if result.error_message is not None:
            reply["errorMessage"] = result.error_message
        if result.undelivered:
            reply["undelivered"] = [m.content for m in result.undelivered if isinstance(m.content, str)]
        return reply

    def queue(self, session_id: str, text: str, *, follow_up: bool) -> dict[str, Any]:
        """``pi/steer`` (``follow_up`` false) or ``pi/followUp``: queue ``text`` in the active run
        of ``session_id``; ``{queued}`` is how many such messages now wait. Raises
        :class:`~pi_lsp.agent.session.SessionIdle` when that session has no active run."""
        session = self.sessions.get(session_id)
        if session is None or not session.running:
            raise SessionIdle(f"No run is active in session {session_id}: send the text with pi/prompt instead.")
        queued = session.follow_up(text) if follow_up else session.steer(text)
        return {"queued": queued}

    def abort(self, session_id: str | None = None) -> bool:
        """Abort the active run (only if it belongs to ``session_id`` when given); ``False`` when
        nothing was aborted."""
        active = self.active
        if active is None or (session_id is not None and active.id != session_id):
            return False
        return active.abort()
