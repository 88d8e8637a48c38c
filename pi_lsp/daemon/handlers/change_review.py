"""Review and rewind (issue 18): ``pi/changes``, ``pi/revertChanges``, ``pi/keepChanges`` over the
workspace's change journal (:mod:`pi_lsp.changes`).

Module-level handlers; :func:`pi_lsp.daemon.server.create_server` registers :data:`FEATURES`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pi_lsp.changes.revert import change_set, revert
from pi_lsp.daemon import rpc

if TYPE_CHECKING:
    from pi_lsp.daemon.server import PiLanguageServer

logger = logging.getLogger(__name__)


async def changes(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
    """The ``pi/changes`` handler."""
    session_id, turn = rpc.parse_changes(params)
    host = ls.require_host()
    entries = await change_set(host.changes, host.files, session_id, turn)
    return {"sessionId": session_id, "turn": turn, "currentTurn": host.changes.current_turn(session_id),
            "files": [entry.to_wire() for entry in entries]}


async def revert_changes(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
    """The ``pi/revertChanges`` handler."""
    session_id, turn, files, hunks = rpc.parse_revert_changes(params)
    host = ls.require_host()
    report = await revert(host.changes, host.files, session_id, turn=turn, file_paths=files, hunk_ids=hunks)
    return report.to_wire()


def keep_changes(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
    """The ``pi/keepChanges`` handler."""
    session_id, _, _, hunks = rpc.parse_revert_changes(params, method=rpc.KEEP_CHANGES)
    ls.require_host().changes.mark(session_id, "kept", hunks or [])
    return {"kept": hunks or []}


FEATURES: list[tuple[Any, ...]] = [
    (rpc.CHANGES, changes),
    (rpc.REVERT_CHANGES, revert_changes),
    (rpc.KEEP_CHANGES, keep_changes),
]
"""``(method, [options,] handler)`` for ``server.feature``."""
