"""``pi/diagnosticsChanged``: the editor says the diagnostics of some documents changed (issue 17).

The notification feeds the per-document change counters the diagnostics wait after ``edit`` and
``write`` watches (:class:`~pi_lsp.editor.diagnostics_changes.DiagnosticsChanges`). Malformed
params are logged and ignored (a notification has no reply to carry an error).

Module-level handlers; :func:`pi_lsp.daemon.server.create_server` registers :data:`FEATURES`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pi_lsp.daemon.rpc import DIAGNOSTICS_CHANGED

if TYPE_CHECKING:
    from pi_lsp.daemon.server import PiLanguageServer

logger = logging.getLogger(__name__)


async def diagnostics_changed(ls: PiLanguageServer, params: Any) -> None:
    """The ``pi/diagnosticsChanged {uris}`` handler."""
    uris = params.get("uris") if isinstance(params, dict) else None
    if not isinstance(uris, list):
        logger.warning("ignored %s: params must be {uris: [uri]}, got %.200r", DIAGNOSTICS_CHANGED, params)
        return
    if ls.host is None:
        return
    await ls.host.knowledge.changes.changed(u for u in uris if isinstance(u, str))


FEATURES: list[tuple[Any, ...]] = [
    (DIAGNOSTICS_CHANGED, diagnostics_changed),
]
"""``(method, [options,] handler)`` for ``server.feature``."""
