"""The pipeline hooks that journal what each ``bash`` call changed (issue 18).

Before the call: wait for earlier calls' confirmation walks (the base must hold what they found),
then :meth:`WorkspaceScanner.begin_command`. After it: :meth:`WorkspaceScanner.after_command`
(from inotify, no full walk) is recorded at once, so the result returns without walking; when a
confirmation is owed, a thread runs :meth:`WorkspaceScanner.confirm` and adds what only a write
through a shared ``mmap`` could have changed to the same call's entry (same session, turn and id).
Readers of the journal wait for it through :attr:`ChangeJournal.pending`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from pathlib import Path

from pi_lsp.agent.hooks import AfterToolCallContext, AfterToolCallResult, BeforeToolCallContext, BeforeToolCallResult
from pi_lsp.agent.tool import AbortSignal
from pi_lsp.changes.workspace_scan import Change, CommandSnapshot, WorkspaceScanner

logger = logging.getLogger(__name__)


class BashChangesHook:
    """Before/after hooks that journal what each ``bash`` call changed in the workspace."""

    def __init__(self, scanner: WorkspaceScanner) -> None:
        self.scanner = scanner
        self._before: dict[str, CommandSnapshot] = {}

    async def before(self, context: BeforeToolCallContext, signal: AbortSignal) -> BeforeToolCallResult | None:
        """Snapshot the workspace before a ``bash`` call (other tools: nothing)."""
        if context.tool_call.name == "bash":
            await self.scanner.journal.pending.settled()
            self._before[context.tool_call.id] = await asyncio.to_thread(self.scanner.begin_command)
        return None

    async def after(self, context: AfterToolCallContext, signal: AbortSignal) -> AfterToolCallResult | None:
        """Journal what the ``bash`` call changed; the result is left as it is."""
        command = self._before.pop(context.tool_call.id, None)
        if command is None:
            return None
        journal = self.scanner.journal
        changes, owed = await asyncio.to_thread(self.scanner.after_command, command)
        turn = journal.current_turn(context.session_id)
        self._record(context.session_id, context.tool_call.id, turn, changes)
        if owed:
            job: concurrent.futures.Future[object] = concurrent.futures.Future()
            journal.pending.add(context.session_id, job)
            threading.Thread(
                target=self._confirm, args=(command, context.session_id, context.tool_call.id, turn, job),
                name="pi-lsp bash confirmation", daemon=True,
            ).start()
        return None

    def _record(self, session_id: str, tool_call_id: str, turn: int, changes: list[Change]) -> None:
        for path, old, new in changes:
            self.scanner.journal.record(session_id, tool_call_id, "bash", Path(path), old, new, turn=turn)

    def _confirm(self, command: CommandSnapshot, session_id: str, tool_call_id: str, turn: int,
                 job: concurrent.futures.Future[object]) -> None:
        """The confirmation walk (in its own thread): record what inotify did not report."""
        try:
            changes = self.scanner.confirm(command)
            if changes:
                logger.info("bash %s: %d file(s) changed without an inotify event (shared mmap)", tool_call_id, len(changes))
            self._record(session_id, tool_call_id, turn, changes)
        except Exception:
            logger.exception("the confirmation walk after bash %s failed", tool_call_id)
        finally:
            job.set_result(None)
