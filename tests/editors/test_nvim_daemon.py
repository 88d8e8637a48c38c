"""The real headless Neovim (Debian's ``neovim``; CI installs it) driving the real daemon with its own
built-in LSP client, not the pi-lsp plugin (issue 5, real-clients.md): an agent edit lands in the
buffer, one ``:undo`` reverts it, the user's unsaved text survives agent edits, and ``read`` returns
the unsaved buffer. The Lua scenario is ``nvim_client/daemon.lua``; the run is bounded by
``timeout`` and always ends in ``cquit``, so a Lua error or a hang fails instead of blocking."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.editors.editor_support import NEOVIM_VERSIONS, REPO, assert_passed, editor_env, neovim, run_editor

SCENARIO = Path(__file__).resolve().parent / "nvim_client" / "daemon.lua"


@pytest.mark.parametrize("line", NEOVIM_VERSIONS, ids=lambda v: f"nvim{v}")
def test_neovim_client_edits_undo_and_unsaved_buffers_against_the_daemon(tmp_path: Path, line: str) -> None:
    nvim = neovim(line)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    result = tmp_path / "result.json"
    env = editor_env(
        tmp_path, shim_dir=None,
        PI_TEST_DIR=str(workspace), PI_TEST_PY=sys.executable, PI_TEST_REPO=str(REPO), PI_TEST_RESULT=str(result),
    )
    argv = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {SCENARIO}", "-c", "cquit 3"]
    rc, data, output = run_editor(argv, cwd=workspace, env=env, result=result)
    assert_passed(rc, data, output)
    names = [check["name"] for check in data["checks"]]
    assert "one :undo reverts the agent edit" in names and "read returns the unsaved buffer with the notice" in names
    assert (workspace / "a.txt").read_text(encoding="utf-8") == "héllo 😀 world\nsecond line\n"  # never saved
