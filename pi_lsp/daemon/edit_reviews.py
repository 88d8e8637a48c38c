"""How the daemon has the user review an edit before it is applied (issue 18, ``pi.edit.review``).

:class:`EditReviews` is the :class:`~pi_lsp.changes.review_before.EditReviewer` of one daemon:

- with ``pi.edit.review: before`` and a client advertising ``capabilities.experimental.pi.review``,
  a proposal is the request ``pi/reviewEdit {reviewId, sessionId, toolCallId, toolName, path, uri,
  hunks: [{id, oldStart, oldLines, newStart, newLines, oldText, newText}], timeoutMs}`` (lines
  0-based), answered ``{decisions: [{hunk, decision: "accept" | "reject", reason?}]}``; a missing or
  unknown decision, a null result or an error reply rejects. A proposal the daemon stops waiting
  for (timeout, abort) is withdrawn with the notification ``pi/reviewWithdrawn {reviewId,
  reason: "timeout" | "aborted"}``; an answer after that is only logged;
- without that capability but with ``workspace.workspaceEdit.changeAnnotationSupport``, the edit
  is sent with a ``needsConfirmation`` change annotation (VS Code's refactor preview);
- with neither, edits land at once and the result says they were not reviewed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal

from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path

from pi_lsp.changes.review_before import Decision, ReviewMode, ReviewProposal
from pi_lsp.daemon.client_requests import ClientGone, ask_client
from pi_lsp.daemon.settings import EditSection
from pi_lsp.editor.connection import ClientFeatures

logger = logging.getLogger(__name__)

REVIEW_EDIT = "pi/reviewEdit"
REVIEW_WITHDRAWN = "pi/reviewWithdrawn"


class EditReviews:
    """The editor side of review-before-apply. ``features`` and ``settings`` are read at each
    write (they arrive with ``initialize`` and change with ``workspace/didChangeConfiguration``)."""

    def __init__(self, protocol: Any, features: Callable[[], ClientFeatures], settings: Callable[[], EditSection]) -> None:
        self.protocol = protocol
        self.features = features
        self.settings = settings

    def mode(self) -> ReviewMode:
        """``after`` unless the setting is ``before``; then what the client can show."""
        if self.settings().review != "before":
            return "after"
        features = self.features()
        if features.review:
            return "request"
        if features.change_annotations and features.apply_edit:
            return "annotation"
        return "unsupported"

    @property
    def timeout_seconds(self) -> float:
        return self.settings().review_timeout_seconds

    async def ask(self, proposal: ReviewProposal) -> dict[str, Decision]:
        """Send ``pi/reviewEdit``; the decisions by hunk id (a dismissal or error reply: none)."""
        params = {
            "reviewId": proposal.review_id,
            "sessionId": proposal.session_id,
            "toolCallId": proposal.tool_call_id,
            "toolName": proposal.tool_name,
            "path": str(proposal.path),
            "uri": from_fs_path(str(proposal.path)) or proposal.path.as_uri(),
            "hunks": proposal.hunks_to_wire(),
            "timeoutMs": int(proposal.timeout_seconds * 1000),
        }
        try:
            answer = await ask_client(self.protocol, REVIEW_EDIT, params)
        except (JsonRpcException, ClientGone) as exc:
            logger.warning("%s failed, every hunk rejected: %s", REVIEW_EDIT, getattr(exc, "message", None) or exc)
            return {}
        return parse_decisions(answer, {h.id for h in proposal.hunks})

    def withdraw(self, proposal: ReviewProposal, reason: Literal["timeout", "aborted"]) -> None:
        if self.mode() != "request":
            return
        try:
            self.protocol.notify(REVIEW_WITHDRAWN, {"reviewId": proposal.review_id, "reason": reason})
        except Exception:  # the editor is gone: nothing left to close
            logger.info("could not withdraw review %s", proposal.review_id)


def parse_decisions(answer: Any, hunk_ids: set[str]) -> dict[str, Decision]:
    """``{decisions: [{hunk, decision, reason?}]}`` to decisions by id; anything malformed rejects."""
    decisions: dict[str, Decision] = {}
    items = answer.get("decisions") if isinstance(answer, dict) else None
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or item.get("hunk") not in hunk_ids:
            continue
        reason = item.get("reason")
        reason = reason.strip() if isinstance(reason, str) and reason.strip() else None
        decisions[item["hunk"]] = Decision(item.get("decision") == "accept", reason)
    return decisions
