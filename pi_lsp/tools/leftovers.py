"""What killed pi-lsp processes left behind, cleaned at the next start (issue 12).

SIGKILL (or a power cut) gives a process no chance to clean up. :func:`clean_leftovers` runs once
when the daemon or ``pi-lsp exec`` starts: it settles the in-place writes that a killed process
left half done (:mod:`~pi_lsp.tools.file_io.in_place_write`: every file gets its old or its new
bytes), removes the session temp folders whose owner is gone
(:mod:`~pi_lsp.tools.session_temp`) and ends the processes those sessions' tools started that still
run (found by their process tag; one scan of ``/proc``, only when such a folder was found). Temp files of an interrupted rename-write
(``.NAME.HEX.pi-tmp``) are swept whenever that file is next written
(:mod:`~pi_lsp.tools.file_io.safe_write`).
"""

from __future__ import annotations

import logging
from pathlib import Path

from pi_lsp.tools.file_io.in_place_write import recover_pending_writes
from pi_lsp.tools.session_temp import sweep_stale_session_temps
from pi_lsp.tools.shell.processes import end_tagged_processes

logger = logging.getLogger(__name__)


def clean_leftovers(temp_root: Path | None = None, orphan_grace_seconds: float = 0.5) -> None:
    """Clean up after pi-lsp processes that were killed; never raises (a failure is logged).

    ``orphan_grace_seconds``: time between SIGTERM and SIGKILL to a killed session's processes
    (start-up waits that long at most, and only when some ignore SIGTERM)."""
    try:
        recover_pending_writes()
    except Exception:  # noqa: BLE001 - start-up must go on whatever a record looks like
        logger.exception("could not settle interrupted in-place writes")
    try:
        stale = sweep_stale_session_temps(temp_root)
        tags = [session.process_tag for session in stale if session.process_tag]
        if tags:
            ended = end_tagged_processes(tags, grace=orphan_grace_seconds)
            if ended:
                logger.info("ended %d process(es) left running by killed pi-lsp sessions", len(ended))
    except Exception:  # noqa: BLE001 - start-up must go on whatever a leftover looks like
        logger.exception("could not clean up after killed sessions")
