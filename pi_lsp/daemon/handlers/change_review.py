"""Review and rewind (issue 18): ``pi/changes``, ``pi/revertChanges``, ``pi/keepChanges`` over the
workspace's change journal (:mod:`pi_lsp.changes`).

Module-level handlers; :func:`pi_lsp.daemon.server.create_server` registers :data:`FEATURES`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pi_lsp.daemon import rpc

if TYPE_CHECKING:  # the journal's modules load with the session, after the initialize reply (issue 21)
    from pi_lsp.changes.journal import Turns
    from pi_lsp.daemon.server import PiLanguageServer
    from pi_lsp.daemon.tool_host import ToolHost

logger = logging.getLogger(__name__)


def _selection(host: ToolHost, query: rpc.ChangeQuery, method: str) -> Turns:
    """The turns ``query`` selects: a turn, a span (``turns``, or a prompt's turns), or all.
    A prompt the session does not have is InvalidParams."""
    from pi_lsp.changes.journal import TurnSpan

    if query.prompt is not None:
        span = host.changes.prompt_turns(query.session_id, query.prompt)
        if span is None:
            count = host.changes.prompt_count(query.session_id)
            raise rpc.invalid_params(method, f'session {query.session_id} has no prompt {query.prompt} ({count} recorded)')
        return span
    if query.turns is not None:
        return TurnSpan(*query.turns)
    return query.turn


def _prompts(host: ToolHost, session_id: str) -> list[dict[str, Any]]:
    """``[{prompt, turns: [first, last]}]``: each recorded prompt of the session and its turns."""
    result = []
    for number in range(1, host.changes.prompt_count(session_id) + 1):
        span = host.changes.prompt_turns(session_id, number)
        assert span is not None
        result.append({"prompt": number, "turns": [span.first, span.last]})
    return result


async def changes(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
    """The ``pi/changes`` handler."""
    from pi_lsp.changes.journal import TurnSpan
    from pi_lsp.changes.revert import change_set

    query = rpc.parse_change_query(params, method=rpc.CHANGES)
    host = ls.require_host()
    selection = _selection(host, query, rpc.CHANGES)
    entries = await change_set(host.changes, host.files, query.session_id, selection)
    reply = {"sessionId": query.session_id, "turn": query.turn, "currentTurn": host.changes.current_turn(query.session_id),
             "currentPrompt": host.changes.prompt_count(query.session_id) or None,
             "prompts": _prompts(host, query.session_id),
             "files": [entry.to_wire() for entry in entries]}
    if query.prompt is not None:
        reply["prompt"] = query.prompt
    if isinstance(selection, TurnSpan):
        reply["turns"] = [selection.first, selection.last]
    return reply


async def revert_changes(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
    """The ``pi/revertChanges`` handler."""
    from pi_lsp.changes.revert import revert

    query = rpc.parse_change_query(params)
    host = ls.require_host()
    selection = _selection(host, query, rpc.REVERT_CHANGES)
    report = await revert(host.changes, host.files, query.session_id, turn=selection,
                          file_paths=query.files, hunk_ids=query.hunks, cwd=host.env.cwd)
    return report.to_wire()


def keep_changes(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
    """The ``pi/keepChanges`` handler."""
    query = rpc.parse_change_query(params, method=rpc.KEEP_CHANGES)
    ls.require_host().changes.mark(query.session_id, "kept", query.hunks or [])
    return {"kept": query.hunks or []}


FEATURES: list[tuple[Any, ...]] = [
    (rpc.CHANGES, changes),
    (rpc.REVERT_CHANGES, revert_changes),
    (rpc.KEEP_CHANGES, keep_changes),
]
"""``(method, [options,] handler)`` for ``server.feature``."""
