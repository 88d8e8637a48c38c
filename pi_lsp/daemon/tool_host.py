"""One daemon session's tool machinery: environment, pipeline, document store, file access.

Built by ``server.py`` at ``initialize`` (when the client's features are known) and closed on
``shutdown``/``exit``/stdin closed. It owns the session temp folder (bash spill files) and the
process registry; :meth:`ToolHost.close` ends every process group the tools started and removes
the folder (design.md section 5, Lifecycle).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pi_lsp.agent.events import EventSink
from pi_lsp.agent.pipeline import ToolPipeline
from pi_lsp.changes.bash_changes import BashChangesHook
from pi_lsp.changes.blob_gc import BlobCollector
from pi_lsp.changes.blobs import BlobStore
from pi_lsp.changes.git_index import GitIndex
from pi_lsp.changes.journal import ChangeJournal
from pi_lsp.changes.journaling_files import JournalingFileAccess
from pi_lsp.changes.review_before import EditReviewer, ReviewingFileAccess
from pi_lsp.changes.workspace_scan import WorkspaceScanner
from pi_lsp.daemon.session_journal import sessions_dir
from pi_lsp.editor.connection import EditorConnection, EditorSettings
from pi_lsp.editor.documents import DocumentStore
from pi_lsp.editor.file_access import EditorFileAccess
from pi_lsp.editor.knowledge import KnowledgeSettings, LspEditorKnowledge
from pi_lsp.editor.unsaved_notice import NOTICE_TOOLS, UnsavedFilesHook
from pi_lsp.daemon.settings import Settings
from pi_lsp.tools import DEFAULT_ACTIVE_TOOLS, create_tools
from pi_lsp.tools.environment import ToolEnvironment, ToolSettings
from pi_lsp.tools.language import create_language_tools
from pi_lsp.tools.language.after_edit import EDIT_TOOLS, AfterEditSettings, DiagnosticsAfterEdit
from pi_lsp.tools.file_io.local_files import LocalFileAccess
from pi_lsp.tools.session_temp import create_session_temp, remove_session_temp
from pi_lsp.tools.shell.processes import ProcessRegistry

logger = logging.getLogger(__name__)


class ToolHost:
    """The tools of one editor session.

    Attributes:
        store: the editor's open documents (design.md section 3).
        env: the :class:`ToolEnvironment` the tools share (``cwd`` = first workspace folder).
        pipeline: the :class:`ToolPipeline` running ``pi/executeToolCall(s)``.
        editor_settings: the ``pi.edit.*`` values the edit path reads.
    """

    def __init__(
        self,
        connection: EditorConnection,
        folders: Sequence[Path],
        settings: Settings,
        reviewer: EditReviewer | None = None,
    ) -> None:
        self.connection = connection
        self.store = DocumentStore()
        self.processes = ProcessRegistry()
        self.temp_dir = create_session_temp(process_tag=self.processes.token)
        self.editor_settings = _editor_settings(settings)
        self.files = EditorFileAccess(self.store, connection, self.editor_settings, LocalFileAccess())
        cwd = Path(folders[0]) if folders else Path.cwd()
        # one change journal per workspace (the session "external" of each workspace is its own)
        workspace_key = hashlib.sha256(str(cwd.resolve()).encode()).hexdigest()[:16]
        self.changes = ChangeJournal(
            sessions_dir() / "changes" / workspace_key, BlobStore(sessions_dir() / "blobs" / workspace_key)
        )
        self.env = ToolEnvironment(
            cwd=cwd,
            # the journal records what landed: after the user's review (pi.edit.review: before)
            files=JournalingFileAccess(ReviewingFileAccess(self.files, reviewer), self.changes),
            temp_dir=self.temp_dir,
            workspace_folders=[Path(f) for f in folders] or [cwd],
            processes=self.processes,
            settings=ToolSettings(bash_timeout_seconds=settings.bash.timeout_seconds),
        )
        # issue 17: the editor's language servers, when the client offers them
        self.knowledge = LspEditorKnowledge(connection, connection.features, self.store, _knowledge_settings(settings))  # type: ignore[arg-type]
        self.env.knowledge = self.knowledge
        tools = create_tools(self.env)
        language_tools = create_language_tools(self.env)
        known = {tool.name for tool in tools}
        self.default_active = [n for n in DEFAULT_ACTIVE_TOOLS if n in known] + [
            tool.name for tool in language_tools if tool.unavailable is None
        ]
        self.pipeline = ToolPipeline([*tools, *language_tools], active=self.default_active)
        self.pipeline.inactive_hint = self._inactive_hint
        # design.md section 4 step 7: reload after bash, the unsaved-files notice on bash/grep/find
        self.pipeline.add_after_hook(UnsavedFilesHook(self.files, lambda: self.env.cwd), tools=NOTICE_TOOLS)
        # issue 18: what bash changed in the workspace goes into the change journal
        self.git_index = GitIndex()
        bash_changes = BashChangesHook(
            WorkspaceScanner(self.changes, lambda: list(self.env.workspace_folders), git=self.git_index)
        )
        self.pipeline.add_before_hook(bash_changes.before, tools={"bash"})
        self.pipeline.add_after_hook(bash_changes.after, tools={"bash"})
        self.scanner = bash_changes.scanner
        self.blob_collector = BlobCollector(
            self.changes.directory, self.changes.blobs, self.scanner.cached_digests,
            settings.changes.blob_grace_minutes * 60,
        )
        # issue 17: the problems an edit/write introduced, appended to its result
        self.after_edit_settings = _after_edit_settings(settings)
        after_edit = DiagnosticsAfterEdit(self.env, lambda: self.after_edit_settings)
        self.pipeline.add_before_hook(after_edit.before, tools=EDIT_TOOLS)
        self.pipeline.add_after_hook(after_edit.after, tools=EDIT_TOOLS)
        self._closed = False
        self.apply_settings(settings)
        # blobs earlier sessions left unreferenced: collected off the event loop
        threading.Thread(target=self.blob_collector.collect, name="pi-lsp blob gc", daemon=True).start()

    def track_turns(self, sink: EventSink, session_id: str) -> EventSink:
        """``sink`` plus turn bookkeeping: each ``turn_start`` of ``session_id`` begins a turn in the
        change journal, so its changes can be reviewed and reverted per turn."""
        def on_event(event: dict[str, Any]) -> None:
            if event.get("type") == "turn_start":
                self.changes.begin_turn(session_id)
            sink(event)
        return on_event

    def _inactive_hint(self, name: str, active: list[str]) -> str:
        """Why tool ``name`` is not active and how a user changes that (the pipeline's
        :attr:`~pi_lsp.agent.pipeline.ToolPipeline.inactive_hint`): the editor's missing feature
        for a language tool it does not offer, else the ``pi.activeTools`` setting."""
        unavailable = getattr(self.pipeline.tools[name], "unavailable", None)
        if unavailable is not None:
            return f"({name} is unavailable: {unavailable})"
        return f"({name} is not active: add it to the pi.activeTools setting)"

    def apply_settings(self, settings: Settings) -> list[str]:
        """Take new settings; return messages about values that could not be applied.

        ``activeTools`` naming unknown tools keeps the current set and reports it.
        """
        problems: list[str] = []
        self.editor_settings = _editor_settings(settings)
        _set_editor_settings(self.files, self.editor_settings)
        self.knowledge.settings = _knowledge_settings(settings)
        self.after_edit_settings = _after_edit_settings(settings)
        self.env.settings.bash_timeout_seconds = settings.bash.timeout_seconds
        self.changes.blobs.max_file_bytes = settings.changes.max_file_bytes
        self.changes.blobs.max_total_bytes = settings.changes.max_total_bytes
        self.changes.pending.timeout_seconds = settings.changes.confirm_timeout_seconds
        self.git_index.timeout = settings.changes.git_timeout_seconds
        self.blob_collector.grace_seconds = settings.changes.blob_grace_minutes * 60
        if settings.active_tools is not None:
            try:
                self.pipeline.set_active(settings.active_tools)
            except ValueError as exc:
                problems.append(f"pi.activeTools: {exc}; keeping {self.pipeline.active_names}")
        return problems

    def set_folders(self, folders: Sequence[Path]) -> None:
        """Follow ``workspace/didChangeWorkspaceFolders``: the first folder is the new cwd."""
        if not folders:
            return
        self.env.cwd = Path(folders[0])
        self.env.workspace_folders = [Path(f) for f in folders]

    async def close(self) -> None:
        """End every process group the tools started and remove the temp folder. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self.blob_collector.close()
        await self.changes.pending.settled()  # bash confirmation walks still to record (bounded)
        self.scanner.close()
        try:
            await self.processes.end_all(include_children=True)
        except Exception:
            logger.exception("could not end the session's processes")
        remove_session_temp(self.temp_dir)

    def close_blocking(self) -> None:
        """:meth:`close` for when no event loop runs any more (interpreter exit)."""
        if self._closed:
            return
        self._closed = True
        self.blob_collector.close()
        self.changes.pending.settled_blocking()
        self.scanner.close()
        try:
            self.processes.end_all_blocking(include_children=True)
        except Exception:
            logger.exception("could not end the session's processes")
        remove_session_temp(self.temp_dir)


def _editor_settings(settings: Settings) -> EditorSettings:
    return EditorSettings(
        route=settings.edit.route,
        apply_timeout_seconds=settings.edit.apply_timeout_seconds,
        verify_timeout_seconds=settings.edit.verify_timeout_seconds,
    )


def _after_edit_settings(settings: Settings) -> AfterEditSettings:
    section = settings.diagnostics
    return AfterEditSettings(
        after_edit=section.after_edit, settle_seconds=section.settle_seconds,
        quiet_seconds=section.quiet_seconds, max_items=section.max_items,
    )


def _knowledge_settings(settings: Settings) -> KnowledgeSettings:
    return KnowledgeSettings(timeout_seconds=settings.language_server.timeout_seconds)


def _set_editor_settings(files: EditorFileAccess, settings: EditorSettings) -> None:
    # EditorSettings is frozen: the file access holds one instance; swap it.
    files.settings = settings
