"""``pi-lsp mcp`` with an editor's daemon running: calls land in the editor, as pi-lsp's own do."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import anyio

from pi_lsp.ipc.registry import find_daemons
from tests.mcp.mcp_support import mcp_session, text_of


async def _announced(root: Path) -> None:
    for _ in range(200):
        if find_daemons(root)[0]:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the daemon never announced its socket")


async def test_edit_lands_in_the_dirty_buffer_next_to_the_users_text(make_editor: Any, tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("first\nsecond\n")
    editor = await make_editor(tmp_path)
    editor.open("notes.txt")
    editor.type("notes.txt", 0, 0, "user typed this\n")  # unsaved
    await _announced(tmp_path)
    async with mcp_session(tmp_path) as session:
        init_tools = await session.list_tools()
        result = await session.call_tool(
            "edit", {"path": "notes.txt", "edits": [{"oldText": "second", "newText": "agent wrote this"}]}
        )
    assert {t.name for t in init_tools.tools} >= {"read", "edit", "bash", "write"}
    assert not result.is_error, text_of(result)
    assert "pi-lsp daemon" in text_of(result)  # the first result says the editor's daemon ran it
    assert editor.text("notes.txt") == "user typed this\nfirst\nagent wrote this\n"
    assert target.read_text() == "first\nsecond\n"  # the buffer was dirty: left unsaved, disk untouched
    assert len(editor.apply_edits) == 1
    external = [e for e in editor.events if e.get("sessionId") == "external"]
    assert any(e["event"].get("type") == "tool_execution_end" for e in external)


async def test_same_result_as_pi_executetoolcall_for_a_stale_edit(make_editor: Any, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    editor = await make_editor(tmp_path)
    editor.open("a.py")
    editor.type("a.py", 0, 5, "x = 2")  # the user changed the text the agent read
    await _announced(tmp_path)
    args = {"path": "a.py", "edits": [{"oldText": "x = 1", "newText": "x = 3"}]}
    direct = await editor.call("edit", args, call_id="direct")
    async with mcp_session(tmp_path) as session:
        await session.call_tool("read", {"path": "a.py"})  # spend the first-result notice
        relayed = await session.call_tool("edit", args)
    assert relayed.is_error and direct["isError"]
    assert text_of(relayed) == editor.result_text(direct)
    assert editor.text("a.py") == "x = 2\n"


async def test_pi_abort_external_stops_an_mcp_bash(make_editor: Any, tmp_path: Path) -> None:
    editor = await make_editor(tmp_path)
    await _announced(tmp_path)
    results: list[Any] = []
    async with mcp_session(tmp_path) as session:
        async def run() -> None:
            results.append(await session.call_tool("bash", {"command": "sleep 30"}))

        async with anyio.create_task_group() as group:
            group.start_soon(run)
            for _ in range(200):
                starts = [e for e in editor.events if e["event"].get("type") == "tool_execution_start"]
                if starts:
                    break
                await anyio.sleep(0.05)
            await anyio.sleep(0.2)
            editor.notify("pi/abort", {"sessionId": "external"})
    assert results and results[0].is_error
    assert text_of(results[0]).startswith("Operation aborted") or "aborted" in text_of(results[0])


async def test_the_socket_goes_away_with_the_daemon(make_editor: Any, tmp_path: Path) -> None:
    editor = await make_editor(tmp_path)
    await _announced(tmp_path)
    [entry] = find_daemons(tmp_path)[0]
    assert entry.socket.exists() and entry.path.exists()
    await editor.stop()
    assert not entry.socket.exists() and not entry.path.exists()
    async with mcp_session(tmp_path) as session:
        result = await session.call_tool("read", {"path": "."})
    assert "the filesystem" in text_of(result)


def test_runtime_dir_is_the_tests_own() -> None:
    assert "pi-lsp-test-runtime-" in os.environ["PI_LSP_RUNTIME_DIR"]


async def test_two_editors_on_one_folder_are_named_and_the_choice_is_said(make_editor: Any, tmp_path: Path) -> None:
    # a new user ran two Neovims on one folder: pi-lsp mcp picked one without a word
    (tmp_path / "a.txt").write_text("a\n")
    first = await make_editor(tmp_path)
    second = await make_editor(tmp_path)
    for _ in range(200):
        if len(find_daemons(tmp_path)[0]) == 2:
            break
        await asyncio.sleep(0.05)
    pids = {entry.pid for entry in find_daemons(tmp_path)[0]}
    assert pids == {first.process.pid, second.process.pid}
    with open(tmp_path / "mcp.err", "w+") as errlog:
        async with mcp_session(tmp_path, env=None, errlog=errlog) as session:
            result = await session.call_tool("read", {"path": "a.txt"})
        errlog.seek(0)
        stderr = errlog.read()
    assert not result.is_error, text_of(result)
    assert "2 editors' pi-lsp daemons serve" in stderr and "--editor NAME or --editor PID" in stderr, stderr
    assert all(f"(pid {pid})" in stderr for pid in pids), stderr
    chosen = [pid for pid in pids if f"(pid {pid}):" in text_of(result)]
    assert len(chosen) == 1, text_of(result)  # the first result names the daemon that ran it
