"""``$/progress`` work-done progress of an agent run, for editors without a pi-lsp plugin (issue 16).

One :class:`RunProgress` per run started by a ``pi.*`` command: ``begin`` (title ``Pi``, the
prompt's first line), a ``report`` for each turn, tool call, tool output update, approval request
and tool outcome (one line each, ``bash: make test``), and ``end`` with the final state. The token
is created with ``window/workDoneProgress/create`` first (LSP 3.17: a server-initiated progress
needs it), and only when the client advertises ``window.workDoneProgress``; a client that refuses
the token, or does not answer within the timeout, gets no progress notifications at all.

Reports are sent as they come: tool output updates arrive already coalesced (at most 4 a second per
call, :class:`~pi_lsp.daemon.event_relay.EventRelay`), and a report equal to the previous one is
not repeated. The begin is ``cancellable``: ``window/workDoneProgress/cancel`` of the token aborts
the run (the server routes it with :meth:`RunProgress.owns`).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from lsprotocol import types

from pi_lsp.daemon.run_status import APPROVAL_REQUESTED, final_line, one_line, outcome_line, result_text, tool_call_line

logger = logging.getLogger(__name__)

PROGRESS = types.PROGRESS
CREATE = types.WINDOW_WORK_DONE_PROGRESS_CREATE
TITLE = "Pi"

Notify = Callable[[str, Any], None]
Request = Callable[[str, Any], Awaitable[Any]]


class RunProgress:
    """The work-done progress of one run (see the module docstring).

    Args:
        notify: sends a notification ``(method, params)``.
        request: sends a request and returns its result (raises on an error reply).
        supported: the client advertised ``window.workDoneProgress``.
        timeout_seconds: how long to wait for the answer to ``window/workDoneProgress/create``.
    """

    def __init__(self, notify: Notify, request: Request, *, supported: bool, timeout_seconds: float) -> None:
        self._notify = notify
        self._request = request
        self._supported = supported
        self._timeout = timeout_seconds
        self.token = f"pi-{uuid.uuid4().hex}"
        self.active = False
        self.began = False
        self._last = ""
        self._turns = 0

    def owns(self, token: Any) -> bool:
        """True when ``token`` is this run's progress token."""
        return token == self.token

    async def begin(self, prompt: str) -> bool:
        """Create the token and send ``begin`` (message: the prompt's first line); ``False`` when
        the client has no progress."""
        if not self._supported:
            return False
        try:
            create = self._request(CREATE, types.WorkDoneProgressCreateParams(token=self.token))
            await asyncio.wait_for(create, self._timeout)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # refused, no answer in time, or the client is gone
            logger.info("no work-done progress: %s failed: %s", CREATE, exc)
            return False
        self.active = self.began = True
        first = next((line for line in prompt.splitlines() if line.strip()), prompt)
        self._send(types.WorkDoneProgressBegin(title=TITLE, cancellable=True, message=one_line(first)))
        return True

    def event(self, event: dict[str, Any]) -> None:
        """Report what ``event`` (a bounded ``pi/event`` event) says, if anything."""
        if not self.active:
            return
        message = self._message(event)
        if message and message != self._last:
            self._last = message
            self._send(types.WorkDoneProgressReport(message=message))

    def end(self, reply: dict[str, Any]) -> None:
        """Send ``end`` with the final state (:func:`~pi_lsp.daemon.run_status.final_line`)."""
        if not self.active:
            return
        self.active = False
        self._send(types.WorkDoneProgressEnd(message=final_line(reply)))

    def _message(self, event: dict[str, Any]) -> str | None:
        kind = event.get("type")
        if kind == "turn_start":
            self._turns += 1
            return f"turn {self._turns}: waiting for the model"
        if kind == "tool_execution_start":
            return tool_call_line(event.get("toolName"), event.get("args"))
        if kind == "tool_execution_update":
            lines = [line for line in str(event.get("output") or "").splitlines() if line.strip()]
            return one_line(f"{event.get('toolName')}: {lines[-1]}") if lines else None
        if kind == "tool_execution_end":
            return outcome_line(event)
        if kind in APPROVAL_REQUESTED:
            return one_line(f"waiting for your approval: {event.get('toolName')} {event.get('scope') or ''}")
        if kind == "message_end":
            message = event.get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                text = result_text(message)
                return one_line(text) if text.strip() else None
        return None

    def _send(self, value: Any) -> None:
        try:
            self._notify(PROGRESS, types.ProgressParams(token=self.token, value=value))
        except Exception:  # a progress notification must never break the run
            logger.exception("could not send $/progress")
