"""The daemon's lifecycle over real stdio: initialize, settings, folders, shutdown/exit, stdin closed."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from pi_lsp.demo.fake_editor import FakeEditor

from tests.e2e.daemon_support import SERVER_COMMAND, server_env, wait_until

ALLOW = "Allow once"  # the approval answer for bash commands that are not read-only (issue 9)


@pytest_lsp.fixture(
    params=["visual_studio_code", "neovim"],
    config=ClientServerConfig(server_command=SERVER_COMMAND, server_env=server_env()),
)
async def lsp_client(lsp_client: LanguageClient, request: pytest.FixtureRequest, tmp_path: Path):
    (tmp_path / "a.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    lsp_client.set_configuration({"pi": {"edit": {"applyTimeoutSeconds": 1}}})
    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities(request.param),
            root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
        )
    )
    lsp_client.init_result = result
    lsp_client.profile = request.param
    yield
    await lsp_client.shutdown_session()


async def test_initialize_result_per_client_profile(lsp_client: LanguageClient) -> None:
    result = lsp_client.init_result
    assert result.server_info.name == "pi-lsp" and result.server_info.version
    sync = result.capabilities.text_document_sync
    assert sync.change == types.TextDocumentSyncKind.Incremental
    assert sync.open_close is True
    assert isinstance(sync.save, types.SaveOptions)  # declared statically
    expected = "utf-8" if lsp_client.profile == "neovim" else "utf-16"
    assert result.capabilities.position_encoding == expected
    assert result.capabilities.workspace.workspace_folders.change_notifications is True


async def test_tool_call_through_a_pytest_lsp_client(lsp_client: LanguageClient) -> None:
    reply = await lsp_client.protocol.send_request_async(
        "pi/executeToolCall", {"toolCall": {"id": "r1", "name": "read", "arguments": {"path": "a.txt"}}}
    )
    # pytest-lsp turns custom results into namedtuples: attribute access
    assert reply.toolCallId == "r1" and reply.isError is False
    assert reply.content[0].text == "alpha\nbeta\n"


async def test_shutdown_then_exit_ends_with_code_0_and_removes_the_temp_folder(make_editor, tmp_path: Path) -> None:
    editor: FakeEditor = await make_editor()
    # the session is built right after the initialize reply, and before any later message is handled
    await editor.request("pi/listTools", {})
    servertmp = tmp_path.parent / f"{tmp_path.name}-servertmp"
    sessions = list(servertmp.glob("pi-lsp-*"))
    assert len(sessions) == 1 and sessions[0].is_dir()
    code = await editor.stop()
    assert code == 0
    assert not sessions[0].exists()


async def test_exit_without_shutdown_ends_with_code_1(make_editor) -> None:
    editor: FakeEditor = await make_editor()
    editor.client.exit(None)
    assert await asyncio.wait_for(editor.process.wait(), 15) == 1


async def test_stdin_closed_ends_process_groups_and_the_temp_folder(make_editor, tmp_path: Path) -> None:
    editor: FakeEditor = await make_editor(message_answer=ALLOW)
    pid_file = tmp_path / "sleeper.pid"
    task = asyncio.ensure_future(
        editor.call("bash", {"command": f"sleep 300 & echo $! > {pid_file}; wait"}, call_id="long")
    )
    for _ in range(200):  # until the shell has started its child
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.05)
    sleeper = int(pid_file.read_text())
    servertmp = tmp_path.parent / f"{tmp_path.name}-servertmp"
    assert list(servertmp.glob("pi-lsp-*"))
    editor.process.stdin.close()
    assert await asyncio.wait_for(editor.process.wait(), 20) in (0, 1)
    task.cancel()
    assert not list(servertmp.glob("pi-lsp-*"))
    assert not _alive(sleeper)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie not yet reaped by init counts as gone
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


async def test_settings_from_init_options_then_configuration_then_changes(make_editor, tmp_path: Path) -> None:
    editor: FakeEditor = await make_editor(
        initialization_options={"pi": {"activeTools": ["read", "ls"]}},
        configuration={"pi": {"edit": {"applyTimeoutSeconds": -3}}},
    )
    assert await wait_until(lambda: editor.shown_messages)
    assert any("pi.edit.applyTimeoutSeconds" in m and "using the default" in m for m in editor.shown_messages)
    listing = await editor.request("pi/listTools", {})
    active = [t["name"] for t in listing["tools"] if t["active"]]
    assert active == ["read", "ls"]  # init options kept, configuration merged over them
    editor.configuration = {"pi": {"activeTools": ["read", "grep", "find"]}}
    editor.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    for _ in range(100):
        listing = await editor.request("pi/listTools", {})
        active = [t["name"] for t in listing["tools"] if t["active"]]
        if active == ["read", "grep", "find"]:
            break
        await asyncio.sleep(0.05)
    assert active == ["read", "grep", "find"]


async def test_unknown_active_tools_in_settings_are_reported_not_applied(make_editor) -> None:
    editor: FakeEditor = await make_editor(configuration={"pi": {"activeTools": ["read", "teleport"]}})
    await wait_until(lambda: any("teleport" in m for m in editor.shown_messages))
    assert any("pi.activeTools" in m and "teleport" in m for m in editor.shown_messages)
    listing = await editor.request("pi/listTools", {})
    assert [t["name"] for t in listing["tools"] if t["active"]] == ["read", "bash", "edit", "write"]


async def test_several_invalid_settings_are_shown_in_one_message_and_logged_once(make_editor) -> None:
    bad = {"model": 5, "maxTurns": "many", "edit": {"review": "sometimes"}, "bash": {"sandbox": "weird"},
           "activeTools": ["read", "teleport"]}
    editor: FakeEditor = await make_editor(initialization_options={"pi": bad}, configuration={"pi": bad})
    await wait_until(lambda: editor.shown_messages)
    names = ("pi.model:", "pi.maxTurns:", "pi.edit.review:", "pi.bash.sandbox:", "pi.activeTools:")
    await wait_until(lambda: all(any(n in m for m in editor.log_messages) for n in names))
    await editor.request("pi/listTools", {})  # initialized's report (deduplicated) came before this reply
    assert len(editor.shown_messages) == 1, editor.shown_messages
    lines = editor.shown_messages[0].split("\n")
    assert lines[0] == "5 problems in the pi settings:" and all(line.startswith("- pi.") for line in lines[1:])
    assert [sum(n in line for line in lines) for n in names] == [1] * 5, lines
    assert [sum(n in m for m in editor.log_messages) for n in names] == [1] * 5, editor.log_messages


async def test_first_workspace_folder_is_the_cwd_and_folder_changes_are_followed(make_editor, tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    editor: FakeEditor = await make_editor(root=first, extra_folders=[second])
    result = await editor.call("bash", {"command": "pwd"})
    assert editor.result_text(result).strip() == str(first)
    editor.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[], removed=[types.WorkspaceFolder(uri=first.as_uri(), name="one")]
            )
        )
    )
    result = await editor.call("bash", {"command": "pwd"})
    assert editor.result_text(result).strip() == str(second)


async def test_stray_prints_cannot_reach_the_protocol_stream(make_editor, tmp_path: Path) -> None:
    editor: FakeEditor = await make_editor(message_answer=ALLOW)
    # a child process inheriting the daemon's fd 1 writes to stderr, not into the protocol
    result = await editor.call("bash", {"command": "echo to-stdout; echo to-stderr >&2"})
    assert "to-stdout" in editor.result_text(result)
    listing = await editor.request("pi/listTools", {})
    assert listing["tools"]
