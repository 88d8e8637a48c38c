"""How the daemon asks the editor for an approval (issue 15, APPROVALS_SPEC, README "Approvals").

:class:`ApprovalPrompts` gives :class:`~pi_lsp.policy.approvals.ApprovalPolicy` its ``ask`` and
``announce`` callables:

- a client that advertises ``capabilities.experimental.pi.approvals`` gets the request
  ``pi/requestApproval`` ``{approvalId, sessionId, toolCallId, toolName, title, message, actions,
  defaultAction, timeoutMs}`` and answers ``{action: "allowOnce" | "allowSession" | "deny",
  reason?}``; a null result, an unknown action or an error reply is a deny (the user dismissed it);
- any other client gets ``window/showMessageRequest`` with the titles of
  :data:`~pi_lsp.policy.approvals.ANSWERS`, as before;
- both get ``pi/event`` ``approval_requested`` and ``approval_resolved`` for their transcript and
  status line, and a ``pi/requestApproval`` that stops being waited for (timeout, abort, cancel) is
  withdrawn with the notification ``pi/approvalWithdrawn {approvalId, reason, decision}`` so the
  editor closes its prompt. An answer arriving after that is only logged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from pi_lsp.daemon.client_requests import ClientGone, ask_client
from pi_lsp.policy.approvals import ACTION_IDS, ANSWERS, ApprovalRequest, ApprovalUnavailable

logger = logging.getLogger(__name__)

REQUEST_APPROVAL = "pi/requestApproval"
APPROVAL_WITHDRAWN = "pi/approvalWithdrawn"

ACTIONS: list[dict[str, str]] = [{"id": key, "title": title} for key, title in ACTION_IDS.items()]
"""``pi/requestApproval``'s actions in the order shown: allowOnce, allowSession, deny."""

_WITHDRAWN_BY = ("timeout", "aborted", "cancelled")


class ApprovalPrompts:
    """The editor side of approvals for one daemon.

    ``protocol`` is the pygls protocol (``send_request_async``, ``notify``); ``supports_request``
    says whether the client advertised ``pi/requestApproval`` (read at each question, since the
    capability arrives with ``initialize``); ``send_event`` sends one ``pi/event``'s params.
    """

    def __init__(self, protocol: Any, supports_request: Callable[[], bool], send_event: Callable[[dict[str, Any]], None]) -> None:
        self.protocol = protocol
        self.supports_request = supports_request
        self.send_event = send_event

    async def ask(self, request: ApprovalRequest) -> str | None:
        """Ask the user; return one of :data:`ANSWERS`, or ``None`` when dismissed.

        Raises :class:`ApprovalUnavailable` when the editor cannot ask (``window/showMessageRequest``
        answered with an error, or the connection is gone). The policy applies the timeout and
        cancels this coroutine; the editor's request stays open and a late answer is only logged.
        """
        if self.supports_request():
            return await self._request_approval(request)
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=request.message,
            actions=[types.MessageActionItem(title=title) for title in ANSWERS],
        )
        try:
            answer = await self._send(types.WINDOW_SHOW_MESSAGE_REQUEST, params)
        except JsonRpcException as exc:
            raise ApprovalUnavailable(f"window/showMessageRequest failed: {exc.message or exc}") from exc
        title = answer.get("title") if isinstance(answer, dict) else getattr(answer, "title", None)
        return title if title in ANSWERS else None

    async def _request_approval(self, request: ApprovalRequest) -> str | None:
        params = {
            "approvalId": request.approval_id,
            "sessionId": request.session_id,
            "toolCallId": request.tool_call_id,
            "toolName": request.scope.tool,
            "title": request.title,
            "message": request.message,
            "actions": ACTIONS,
            "defaultAction": "allowOnce" if request.read_only else None,
            "timeoutMs": int(request.timeout_seconds * 1000),
        }
        try:
            answer = await self._send(REQUEST_APPROVAL, params)
        except JsonRpcException as exc:  # the client advertised the request: an error is a dismissal
            logger.warning("%s answered with an error, taken as deny: %s", REQUEST_APPROVAL, exc.message or exc)
            return None
        action = answer.get("action") if isinstance(answer, dict) else None
        reason = answer.get("reason") if isinstance(answer, dict) else None
        if reason:
            logger.info("approval %s: %s (%s)", request.approval_id, action, reason)
        return ACTION_IDS.get(action) if isinstance(action, str) else None

    async def _send(self, method: str, params: Any) -> Any:
        try:
            return await ask_client(self.protocol, method, params)
        except ClientGone as exc:
            raise ApprovalUnavailable(str(exc)) from exc

    def announce(self, request: ApprovalRequest, event: dict[str, Any]) -> None:
        """Forward the policy's ``approval_requested``/``approval_resolved`` event as ``pi/event``;
        withdraw the editor's open ``pi/requestApproval`` when the decision was not the user's."""
        by = event.get("by")
        if event.get("type") == "approval_resolved" and by in _WITHDRAWN_BY:
            # the policy resolves only what it asked, so such a client has this prompt open
            if self.supports_request():
                self._withdraw(request, str(by), str(event.get("decision", "deny")))
        self.send_event({"sessionId": request.session_id, "event": event})

    def _withdraw(self, request: ApprovalRequest, reason: str, decision: str) -> None:
        try:
            self.protocol.notify(
                APPROVAL_WITHDRAWN, {"approvalId": request.approval_id, "reason": reason, "decision": decision}
            )
        except Exception:  # the editor is gone: nothing left to close
            logger.info("could not withdraw approval %s", request.approval_id)

