"""Issue 20 through real headless Neovim (0.7.2 and 0.11.x): an MCP client's ``edit``, relayed by
``pi-lsp mcp`` to the daemon the Neovim plugin started, lands in the open dirty buffer next to the
user's unsaved text, as one undo step; the file on disk is left alone.

Neovim runs ``editors/nvim/tests/mcp_edit.lua`` in a thread while the test drives the MCP SDK's client:
the scenario writes a ready marker once the user's text is typed, the test then calls ``edit`` and
writes a done marker once it has the result; every wait on either side is bounded."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pi_lsp.ipc.registry import find_daemons
from tests.editors.editor_support import assert_passed
from tests.editors.test_nvim import nvim, run_scenario  # noqa: F401  (nvim is a fixture, re-used)
from tests.mcp.mcp_support import mcp_session, text_of

MARKER_WAIT_SECONDS = 30
"""How long the test waits for the scenario's ready marker (Neovim and the daemon starting)."""


async def _appears(path: Path, seconds: float) -> bool:
    for _ in range(int(seconds / 0.05)):
        if path.exists():
            return True
        await asyncio.sleep(0.05)
    return False


async def _announced(root: Path, seconds: float) -> bool:
    """Whether the plugin's daemon announced its socket for ``root`` (it does so just after ``initialize``)."""
    for _ in range(int(seconds / 0.05)):
        if find_daemons(root)[0]:
            return True
        await asyncio.sleep(0.05)
    return False


async def test_mcp_edit_lands_in_the_dirty_buffer_as_one_undo_step(nvim: str, tmp_path: Path) -> None:  # noqa: F811
    ready, done = tmp_path / "ready", tmp_path / "done"
    editor = asyncio.create_task(asyncio.to_thread(
        run_scenario, nvim, tmp_path, "mcp_edit.lua", PI_TEST_READY=str(ready), PI_TEST_DONE=str(done),
        PI_LSP_RUNTIME_DIR=os.environ["PI_LSP_RUNTIME_DIR"],  # the daemon announces where the MCP relay looks
    ))
    result = None
    try:
        if await _appears(ready, MARKER_WAIT_SECONDS) and await _announced(tmp_path / "ws", MARKER_WAIT_SECONDS):
            async with mcp_session(tmp_path / "ws") as session:
                result = await session.call_tool(
                    "edit", {"path": "dirty.txt", "edits": [{"oldText": "beta", "newText": "agent wrote this"}]}
                )
    finally:
        done.write_text("done", encoding="utf-8")
        (rc, data, output), ws = await editor
    assert_passed(rc, data, output)
    assert result is not None, "the scenario never signalled that the user had typed, or no daemon was announced"
    assert not result.is_error, text_of(result)
    assert "pi-lsp daemon" in text_of(result)  # the editor's daemon ran it, not the filesystem fallback
    assert (ws / "dirty.txt").read_text(encoding="utf-8") == "alpha\nbeta\n"
