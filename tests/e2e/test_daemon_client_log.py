"""The daemon's log reaches the editor as ``window/logMessage`` with its real severity, and stays
off stderr while a client is connected (issue 15: Neovim's ``:LspLog`` shows every stderr line
as ``[ERROR]``). A real ``python -m pi_lsp`` over stdio, driven by FakeEditor."""

from __future__ import annotations

from pathlib import Path

from pi_lsp.demo.fake_editor import FakeEditor
from tests.e2e.daemon_support import server_env, server_tmp, wait_until

INFO, WARNING = 3, 2


async def test_the_log_goes_to_the_client_with_its_severity_and_not_to_stderr(tmp_path: Path) -> None:
    editor = FakeEditor(
        tmp_path, env=server_env(TMPDIR=str(server_tmp(tmp_path))), message_answer="Deny",
        initialization_options={"pi": {"maxTurns": "many"}},
    )
    await editor.start()
    try:
        assert await wait_until(lambda: any("initialized for" in m for m in editor.log_messages))
        result = await editor.call("bash", {"command": "touch made.txt"})  # asked, denied: an INFO line
        assert result["isError"] is True
        assert await wait_until(lambda: any('"decision": "deny"' in m for m in editor.log_messages))
        logged = list(zip(editor.log_types, editor.log_messages))
        assert any(kind == INFO and "pi_lsp.daemon.handlers.lifecycle: initialized for" in m for kind, m in logged), logged
        assert any(kind == WARNING and "pi.maxTurns" in m for kind, m in logged), logged
        assert not [m for kind, m in logged if kind == 1], logged  # nothing went wrong: no Error
    finally:
        await editor.stop()
    stderr = list(editor.stderr_tail)
    # only what happened before initialize may reach stderr, and only WARNING and above
    assert not [line for line in stderr if " INFO " in line or " DEBUG " in line], stderr
    assert not [line for line in stderr if "initialized for" in line or "approval:" in line], stderr
