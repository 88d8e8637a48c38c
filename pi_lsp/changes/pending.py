"""Journal records still being computed: the confirmation walks after ``bash`` calls (issue 18).

The snapshot after a command comes from inotify; a full walk then confirms it in a thread
(:meth:`pi_lsp.changes.workspace_scan.WorkspaceScanner.confirm`) and may add changes to the
command's journal entry. Whoever reads a session's journal (``pi/changes``, ``pi/revertChanges``,
the revert code actions, the next ``bash`` snapshot, the daemon's shutdown) first waits for its
pending walks, at most :attr:`PendingRecords.timeout_seconds` (setting
``changes.confirmTimeoutSeconds``), so it never sees half a change set.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading

logger = logging.getLogger(__name__)


class PendingRecords:
    """The unfinished record jobs of each session (``concurrent.futures.Future``s set by a thread)."""

    def __init__(self, timeout_seconds: float = 30.0) -> None:
        self.timeout_seconds = timeout_seconds
        """The longest a reader waits (seconds); past it the reader goes on and the job still records later."""
        self._lock = threading.Lock()
        self._jobs: dict[str, set[concurrent.futures.Future[object]]] = {}

    def add(self, session_id: str, job: concurrent.futures.Future[object]) -> None:
        """Hold readers of ``session_id`` until ``job`` is done (it removes itself then)."""
        with self._lock:
            self._jobs.setdefault(session_id, set()).add(job)
        job.add_done_callback(lambda done: self._remove(session_id, done))

    def _remove(self, session_id: str, job: concurrent.futures.Future[object]) -> None:
        with self._lock:
            jobs = self._jobs.get(session_id)
            if jobs is not None:
                jobs.discard(job)
                if not jobs:
                    del self._jobs[session_id]

    def _select(self, session_id: str | None) -> list[concurrent.futures.Future[object]]:
        with self._lock:
            if session_id is not None:
                return list(self._jobs.get(session_id, ()))
            return [job for jobs in self._jobs.values() for job in jobs]

    async def settled(self, session_id: str | None = None) -> bool:
        """Wait for the pending jobs of ``session_id`` (``None``: of every session), at most
        :attr:`timeout_seconds`; ``False`` when some are still running then (logged)."""
        jobs = self._select(session_id)
        if not jobs:
            return True
        _, running = await asyncio.wait([asyncio.wrap_future(job) for job in jobs], timeout=self.timeout_seconds)
        if running:
            logger.warning("%d change journal confirmation walk(s) still running after %.1f s; reading without them",
                           len(running), self.timeout_seconds)
        return not running

    def settled_blocking(self, session_id: str | None = None) -> bool:
        """:meth:`settled` for a thread without an event loop (interpreter exit)."""
        jobs = self._select(session_id)
        if not jobs:
            return True
        _, running = concurrent.futures.wait(jobs, timeout=self.timeout_seconds)
        return not running
