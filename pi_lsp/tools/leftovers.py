"""What killed pi-lsp processes left behind, cleaned at the next start (issue 12).

SIGKILL (or a power cut) gives a process no chance to clean up. :func:`clean_leftovers` runs once
when the daemon or ``pi-lsp exec`` starts: it settles the in-place writes that a killed process
left half done (:mod:`~pi_lsp.tools.file_io.in_place_write`: every file gets its old or its new
bytes) and removes the session temp folders whose owner is gone
(:mod:`~pi_lsp.tools.session_temp`). Temp files of an interrupted rename-write
(``.NAME.HEX.pi-tmp``) are swept whenever that file is next written
(:mod:`~pi_lsp.tools.file_io.safe_write`).
"""

from __future__ import annotations

import logging
from pathlib import Path

from pi_lsp.tools.file_io.in_place_write import recover_pending_writes
from pi_lsp.tools.session_temp import sweep_stale_session_temps

logger = logging.getLogger(__name__)


def clean_leftovers(temp_root: Path | None = None) -> None:
    """Clean up after pi-lsp processes that were killed; never raises (a failure is logged)."""
    try:
        recover_pending_writes()
    except Exception:  # noqa: BLE001 - start-up must go on whatever a record looks like
        logger.exception("could not settle interrupted in-place writes")
    try:
        sweep_stale_session_temps(temp_root)
    except Exception:  # noqa: BLE001 - start-up must go on whatever a leftover looks like
        logger.exception("could not sweep stale temp folders")
