"""What the coding tools share in one daemon or `pi-lsp exec` session.

:class:`ToolEnvironment` is built once per session by the daemon (``server.py``) or by
``pi-lsp exec`` and handed to :func:`pi_lsp.tools.create_tools`. It owns no pygls and no editor: the
editor reaches the tools only through the ``files`` seam.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pi_lsp.tools.file_io.file_access import FileAccess

if TYPE_CHECKING:  # pragma: no cover
    from pi_lsp.agent.tool import ToolContext
    from pi_lsp.tools.language.knowledge import EditorKnowledge
    from pi_lsp.tools.shell.processes import ProcessRegistry


@dataclass
class ToolSettings:
    """Timeouts and limits of the tools. Every one is a setting so tests can make them small.

    Units are seconds unless the name says otherwise.

    Attributes:
        bash_timeout_seconds: default timeout of a bash call without its own ``timeout``
            (design.md section 5, ``bash.timeoutSeconds``); ``None`` means no timeout (Pi).
        bash_kill_grace_seconds: time between SIGTERM and SIGKILL to a process group.
        bash_idle_drain_seconds: after the shell exited, stop reading pipes that stay open (held by
            background children) once they were silent this long (Pi: 0.1, re-armed per chunk).
        bash_max_drain_seconds: upper bound on that drain, however chatty the background children
            are; the result is returned then and later output is read and dropped.
        bash_update_interval_seconds: minimum time between two partial-output updates (Pi: 0.1).
        bash_max_spill_bytes: cap, in bytes, on a bash call's full-output (spill) file in the
            session temp folder (default 256 MiB). A runaway command such as ``yes`` writes about
            100 MB/s; past the cap the file stops growing (the result still shows the last lines
            and the notice says ``Full output (first 256.0MB): {path}``). ``None`` = no cap (Pi).
        bash_shell: the shell to run ``-c`` with; ``None`` = ``/bin/bash``, then ``bash`` on PATH,
            then ``sh`` (pi-behaviour.md 2.2).
    """

    bash_timeout_seconds: float | None = 600.0
    bash_kill_grace_seconds: float = 2.0
    bash_idle_drain_seconds: float = 0.1
    bash_max_drain_seconds: float = 5.0
    bash_update_interval_seconds: float = 0.1
    bash_max_spill_bytes: int | None = 256 * 1024 * 1024
    bash_shell: str | None = None


@dataclass
class ToolEnvironment:
    """The session the tools work in.

    Attributes:
        cwd: working directory: relative paths resolve against it, bash runs in it (the first
            workspace folder in the daemon).
        files: the :class:`~pi_lsp.tools.file_io.file_access.FileAccess` seam for read, edit and write.
        temp_dir: the session's own temp folder (bash spill files); removed with the session.
        workspace_folders: every workspace folder (``cwd`` first); used by policy and notices.
        processes: the registry of process groups started by tools, ended with the session.
        settings: timeouts and limits.
        content_guard: ``guard(absolute_path) -> reason or None``: files whose contents search
            results must not show (the policy's protected paths, issue 13); ``None``: no guard.
        knowledge: the editor's language servers (issue 17), ``None`` without an editor.
        approve_writes: ``await approve(tool, paths, ctx) -> refusal or None``: the policy's
            judgement of files a tool changes beyond the one its arguments name (``rename``'s
            other files: protected ones refused, ones outside the workspace asked about);
            ``None``: no policy.
    """

    cwd: Path
    files: FileAccess
    temp_dir: Path
    workspace_folders: list[Path] = field(default_factory=list)
    processes: "ProcessRegistry | None" = None
    settings: ToolSettings = field(default_factory=ToolSettings)
    content_guard: Callable[[str], str | None] | None = None
    knowledge: "EditorKnowledge | None" = None
    approve_writes: "Callable[[str, list[Path], ToolContext], Awaitable[str | None]] | None" = None
