"""The unsaved-files notice and the reload after ``bash`` (design.md section 4 step 7, section 3).

:class:`UnsavedFilesHook` is the ``after_tool_call`` hook the daemon registers on its pipeline:

* after ``bash`` (which runs on the filesystem), every open clean buffer whose file the command
  changed is reloaded through ``pi/reloadDocuments`` (:meth:`EditorFileAccess.reload_changed`);
* every ``bash``, ``grep`` and ``find`` result then ends with a notice naming the files the editor
  holds whose buffer differs from disk, so the model knows those tools saw the saved version.

The notice is appended to the result's last text block after a blank line (a new text block when
there is none), like the unsaved-buffer notice of ``read``. It is added to error results too: a
failing test run is exactly when the model must know it ran against the saved files.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from pi_lsp.agent.hooks import AfterToolCallContext, AfterToolCallResult
from pi_lsp.agent.tool import AbortSignal
from pi_lsp.editor.file_access import EditorFileAccess
from pi_lsp.llm.types import TextContent
from pi_lsp.tools.file_io.paths import display_path

NOTICE_TOOLS = frozenset({"bash", "grep", "find"})
"""The tools that see the disk, not the editor's buffers (design.md section 4 step 7)."""


def unsaved_notice(paths: Sequence[Path], cwd: Path) -> str:
    """The notice line for ``paths`` (shown relative to ``cwd`` when inside it)."""
    names = ", ".join(display_path(path, cwd) for path in paths)
    return (
        f"[Unsaved changes in the editor: {names}. This result comes from the files on disk, "
        "not from the editor's buffers.]"
    )


class UnsavedFilesHook:
    """``after_tool_call`` hook (see the module docstring).

    Args:
        files: the session's :class:`EditorFileAccess` (its store and editor connection).
        cwd: returns the current working directory (the first workspace folder; it may change).

    Reload problems are never errors: a buffer that could not be reloaded stays outdated and the
    next ``read`` returns the disk, the next ``edit`` reloads first (design.md section 3).
    """

    def __init__(self, files: EditorFileAccess, cwd: Callable[[], Path]) -> None:
        self.files = files
        self.cwd = cwd

    async def __call__(self, ctx: AfterToolCallContext, signal: AbortSignal) -> AfterToolCallResult | None:
        """Reload after ``bash``; append the notice to ``bash``/``grep``/``find`` results."""
        name = ctx.tool_call.name
        if name not in NOTICE_TOOLS:
            return None
        if name == "bash":
            problems = await self.files.reload_changed()
            for uri, reason in problems.items():
                self.files.connection.log(f"pi-lsp: {uri} was changed by bash and not reloaded: {reason}")
        unsaved = await self.files.unsaved_files()
        if not unsaved:
            return None
        notice = unsaved_notice(unsaved, self.cwd())
        content = list(ctx.result.content)
        for index in range(len(content) - 1, -1, -1):
            block = content[index]
            if isinstance(block, TextContent):
                text = block.text
                content[index] = TextContent(text=f"{text}\n\n{notice}" if text else notice)
                break
        else:
            content.append(TextContent(text=notice))
        return AfterToolCallResult(content=content)
