"""Helpers for the edit tests: run the real EditTool the way the pipeline does (shim, validation, execute)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_lsp.agent.tool import ToolContext, ToolError
from pi_lsp.agent.validation import validator_for
from pi_lsp.tools.edit import EditArgs, EditTool
from pi_lsp.tools.environment import ToolEnvironment
from pi_lsp.tools.file_io.file_access import FileAccess
from pi_lsp.tools.file_io.local_files import LocalFileAccess


@dataclass
class Outcome:
    """What a call produced: the model-facing text, whether it failed, and ``details``."""

    is_error: bool
    text: str
    details: Any = None


def edit_tool(cwd: Path, files: FileAccess | None = None) -> EditTool:
    return EditTool(ToolEnvironment(cwd=cwd, files=files or LocalFileAccess(), temp_dir=cwd))


async def run_edit(cwd: Path, arguments: Any, files: FileAccess | None = None, tool: EditTool | None = None) -> Outcome:
    """prepare_arguments, then Pi's validation, then execute; a ToolError becomes an error outcome."""
    tool = tool or edit_tool(cwd, files)
    try:
        prepared = tool.prepare_arguments(arguments)
        args = validator_for(EditArgs).validate("edit", prepared)
        result = await tool.execute(args, ToolContext(tool_call_id="t1"))
    except ToolError as exc:
        return Outcome(True, exc.message)
    texts = [block.text for block in result.content]
    assert len(texts) == 1
    return Outcome(False, texts[0], result.details)


async def edit(cwd: Path, path: str, *pairs: tuple[str, str], files: FileAccess | None = None) -> Outcome:
    """Shorthand: ``edit(cwd, "a.txt", ("old", "new"), ...)``."""
    edits = [{"oldText": old, "newText": new} for old, new in pairs]
    return await run_edit(cwd, {"path": path, "edits": edits}, files)


def apply_patch(tmp: Path, original: str, patch: str) -> str:
    """Apply ``patch`` to ``original`` (LF text) with GNU ``patch`` and return the result."""
    work = tmp / "patch-work"
    work.mkdir(exist_ok=True)
    target = work / "target.txt"
    target.write_bytes(original.encode())
    done = subprocess.run(
        ["patch", "--silent", "--force", str(target)],
        input=patch.encode(),
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    return target.read_bytes().decode()
