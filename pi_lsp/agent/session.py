"""One agent session: its id, its conversation, and at most one run at a time (design.md 6).

A session keeps the transcript across prompts (each ``pi/prompt`` with the same ``sessionId``
continues it). :meth:`AgentSession.prompt` refuses a second prompt while a run is active
(:class:`SessionBusy`, Pi's Agent does the same); :meth:`AgentSession.abort` aborts the active
run (harmless when idle). While a run is active, :meth:`AgentSession.steer` queues a user message
for the next model request and :meth:`AgentSession.follow_up` one for when the run would end
(Pi's steer / follow-up; :mod:`pi_lsp.agent.loop` delivers them). Persistence is the caller's: ``on_message`` receives every message the
moment its ``message_end`` is emitted (the daemon journals it), and ``on_event`` every event.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from pi_lsp.agent.loop import LoopConfig, RunResult, run_agent
from pi_lsp.agent.session_errors import SessionBusy, SessionIdle
from pi_lsp.agent.tool import AbortSignal
from pi_lsp.llm.types import Message, UserMessage

BUSY_MESSAGE = (
    "The agent is already processing a prompt in session {id}. Wait for it to finish or abort it "
    "(pi/abort)."
)


IDLE_MESSAGE = "No run is active in session {id}: send the text with pi/prompt instead."




def new_session_id() -> str:
    """A fresh session id: 32 lowercase hex digits (a UUID4 without dashes)."""
    return uuid.uuid4().hex


class AgentSession:
    """A conversation with the model.

    Attributes:
        id: the ``sessionId``.
        messages: the transcript, oldest first (user, assistant and toolResult messages).
        signal: the active run's abort signal, ``None`` when idle.
    """

    def __init__(self, session_id: str | None = None, messages: Sequence[Message] = ()) -> None:
        self.id = session_id or new_session_id()
        self.messages: list[Message] = list(messages)
        self.signal: AbortSignal | None = None
        self._steering: list[Message] = []
        self._follow_ups: list[Message] = []

    def steer(self, text: str) -> int:
        """Queue ``text`` as a user message sent with the next model request of the active run
        (after the running tool calls end). Returns how many steering messages wait. Raises
        :class:`SessionIdle` when no run is active."""
        if self.signal is None:
            raise SessionIdle(IDLE_MESSAGE.format(id=self.id))
        self._steering.append(UserMessage(content=text))
        return len(self._steering)

    def follow_up(self, text: str) -> int:
        """Queue ``text`` as a user message that continues the active run when it would end.
        Returns how many follow-ups wait. Raises :class:`SessionIdle` when no run is active."""
        if self.signal is None:
            raise SessionIdle(IDLE_MESSAGE.format(id=self.id))
        self._follow_ups.append(UserMessage(content=text))
        return len(self._follow_ups)

    def _take_steering(self) -> list[Message]:
        taken, self._steering = self._steering, []
        return taken

    def _take_follow_ups(self) -> list[Message]:
        taken, self._follow_ups = self._follow_ups, []
        return taken

    @property
    def running(self) -> bool:
        """True while a run is active."""
        return self.signal is not None

    def abort(self, reason: str = "aborted by the client") -> bool:
        """Abort the active run; ``False`` when there was none."""
        if self.signal is None:
            return False
        self.signal.abort(reason)
        return True

    async def prompt(
        self,
        text: str,
        config: LoopConfig,
        *,
        signal: AbortSignal | None = None,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        on_message: Callable[[dict[str, Any]], None] | None = None,
    ) -> RunResult:
        """Run the loop for a user message ``text``; return when the run ends.

        ``signal`` (optional) is the run's abort signal, so the caller can register it (e.g. for
        ``$/cancelRequest``) before the run starts. ``on_event`` gets every event dict;
        ``on_message`` gets the wire form of every message at its ``message_end``. Raises
        :class:`SessionBusy` when a run is already active (nothing is appended then). Steering
        and follow-up messages still queued when the run ends (it failed, was aborted or hit the
        turn limit) are dropped and listed in the result's ``undelivered``.
        """
        if self.signal is not None:
            raise SessionBusy(BUSY_MESSAGE.format(id=self.id))
        run_signal = signal or AbortSignal()
        self.signal = run_signal

        def sink(event: dict[str, Any]) -> None:
            if on_message is not None and event.get("type") == "message_end":
                on_message(event["message"])
            if on_event is not None:
                on_event(event)

        config = dataclasses.replace(config, steering=self._take_steering, follow_up=self._take_follow_ups)
        try:
            result = await run_agent(
                config, self.messages, [UserMessage(content=text)], signal=run_signal, emit=sink
            )
        finally:
            self.signal = None
            left = self._take_steering() + self._take_follow_ups()
        result.undelivered = result.undelivered + left
        return result
