"""``pi/diagnosticsChanged``: the editor says the diagnostics of some documents changed (issue 17).

The notification feeds the per-document change counters the diagnostics wait after ``edit`` and
``write`` watches (:class:`~pi_lsp.editor.diagnostics_changes.DiagnosticsChanges`), with the
optional ``versions: {uri: version}`` that dates each change (README, wire contract). Malformed
params are logged and ignored (a notification has no reply to carry an error); a malformed
``versions`` (or a non-integer version) only leaves those changes undated.

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
    """The ``pi/diagnosticsChanged {uris, versions?}`` handler."""
    uris = params.get("uris") if isinstance(params, dict) else None
    if not isinstance(uris, list):
        logger.warning("ignored %s: params must be {uris: [uri]}, got %.200r", DIAGNOSTICS_CHANGED, params)
        return
    if ls.host is None:
        return
    await ls.host.knowledge.changes.changed((u for u in uris if isinstance(u, str)), _versions(params.get("versions")))


def _versions(raw: Any) -> dict[str, int]:
    """The integer versions of ``versions: {uri: version}`` (anything else is left out, logged)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        logger.warning("%s: versions must be {uri: integer}, got %.200r; the changes count undated",
                       DIAGNOSTICS_CHANGED, raw)
        return {}
    versions = {uri: v for uri, v in raw.items() if isinstance(v, int) and not isinstance(v, bool)}
    if len(versions) != len(raw):
        logger.warning("%s: non-integer versions left out: %.200r", DIAGNOSTICS_CHANGED, raw)
    return versions


FEATURES: list[tuple[Any, ...]] = [
    (DIAGNOSTICS_CHANGED, diagnostics_changed),
]
"""``(method, [options,] handler)`` for ``server.feature``."""
