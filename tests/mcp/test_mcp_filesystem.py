"""``pi-lsp mcp`` without an editor: the SDK's MCP client against the real server over stdio."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import anyio
import pytest

from tests.mcp.mcp_support import mcp_session, text_of


def _running(marker: str) -> bool:
    out = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    return out.returncode == 0


async def test_lists_the_active_tools_with_hints_and_says_where_they_run(tmp_path: Path) -> None:
    async with mcp_session(tmp_path) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert sorted(tools) == ["bash", "edit", "read", "write"]
    read, bash, edit = tools["read"], tools["bash"], tools["edit"]
    assert read.annotations.read_only_hint is True and read.annotations.destructive_hint is False
    assert bash.annotations.read_only_hint is False and bash.annotations.open_world_hint is True
    assert edit.annotations.destructive_hint is True and edit.annotations.idempotent_hint is False
    assert edit.input_schema["required"] == ["path", "edits"]
    assert "Edit a single file" in (edit.description or "")


async def test_all_tools_on_request(tmp_path: Path) -> None:
    async with mcp_session(tmp_path, "--tools", "all") as session:
        names = sorted(tool.name for tool in (await session.list_tools()).tools)
    assert names == ["bash", "edit", "find", "grep", "ls", "read", "write"]


async def test_read_edit_and_errors_in_pis_words(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    async with mcp_session(tmp_path) as session:
        first = await session.call_tool("read", {"path": "a.txt"})
        edited = await session.call_tool("edit", {"path": "a.txt", "edits": [{"oldText": "beta", "newText": "gamma"}]})
        missing = await session.call_tool("edit", {"path": "a.txt", "edits": [{"oldText": "nope", "newText": "x"}]})
        invalid = await session.call_tool("read", {})
        second = await session.call_tool("read", {"path": "a.txt"})
        inactive = await session.call_tool("grep", {"pattern": "a"})
    assert not first.is_error and text_of(first).startswith("alpha\nbeta\n")
    assert "the filesystem" in text_of(first)  # the first result says where the tools run
    assert "the filesystem" not in text_of(second)
    assert not edited.is_error and (tmp_path / "a.txt").read_text() == "alpha\ngamma\n"
    assert missing.is_error and text_of(missing).startswith("Could not find the exact text in a.txt.")
    assert invalid.is_error and 'Validation failed for tool "read"' in text_of(invalid)
    assert inactive.is_error and text_of(inactive) == (  # the hint names this command's option
        "Tool grep not found (grep is not active: start pi-lsp mcp with --tools read,bash,edit,write,grep or --tools all)"
    )


async def test_bash_reports_progress(tmp_path: Path) -> None:
    seen: list[str] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")

    async with mcp_session(tmp_path) as session:
        result = await session.call_tool(
            "bash", {"command": "for i in 1 2 3; do echo line$i; sleep 0.3; done"}, progress_callback=progress
        )
    assert not result.is_error and text_of(result).startswith("line1\nline2\nline3")
    assert "".join(seen).startswith("line1\n") and len(seen) >= 2


async def test_cancelling_a_call_ends_its_process(tmp_path: Path) -> None:
    marker = f"pi-lsp-mcp-cancel-{os.getpid()}-{time.monotonic_ns()}"
    async with mcp_session(tmp_path) as session:
        with anyio.move_on_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(session.call_tool, "bash", {"command": f"bash -c 'sleep 300; true' {marker}"})
                for _ in range(200):
                    if _running(marker):
                        break
                    await anyio.sleep(0.05)
                assert _running(marker)
                group.cancel_scope.cancel()
        for _ in range(200):
            if not _running(marker):
                break
            await anyio.sleep(0.05)
        assert not _running(marker), "the cancelled call's process is still running"
        after = await session.call_tool("bash", {"command": "echo still-serving"})
    assert text_of(after).startswith("still-serving")


async def test_approvals_deny_refuses_asked_calls(tmp_path: Path) -> None:
    async with mcp_session(tmp_path, "--approvals", "deny") as session:
        result = await session.call_tool("bash", {"command": "echo one; echo two"})
    assert result.is_error and "pi-lsp mcp has no editor to ask" in text_of(result)


def test_bad_options_exit_2(tmp_path: Path) -> None:
    from tests.e2e.daemon_support import SERVER_COMMAND, server_env

    out = subprocess.run([*SERVER_COMMAND, "mcp", "--cwd", str(tmp_path / "nope")], capture_output=True,
                         text=True, env=server_env(), timeout=60)
    assert out.returncode == 2 and "is not a directory" in out.stderr
    out = subprocess.run([*SERVER_COMMAND, "mcp", "--cwd", str(tmp_path), "--tools", "read,frobnicate"],
                         capture_output=True, text=True, env=server_env(), timeout=60, input="")
    assert out.returncode == 2 and "unknown tools: frobnicate" in out.stderr
    out = subprocess.run([*SERVER_COMMAND, "mcp", "--cwd", str(tmp_path), "--editor", "nosuch"],
                         capture_output=True, text=True, env=server_env(), timeout=60, input="")
    assert out.returncode == 2 and "--editor 'nosuch'" in out.stderr and "(running: none)" in out.stderr


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_sigterm_ends_running_commands_and_the_temp_folder(tmp_path: Path) -> None:
    import signal as signals
    import sys

    from tests.e2e.daemon_support import server_env

    marker = f"pi-lsp-mcp-term-{os.getpid()}-{time.monotonic_ns()}"
    script = (
        "import anyio, os, sys\n"
        "from mcp.client.stdio import stdio_client, StdioServerParameters\n"
        "from mcp.client.session import ClientSession\n"
        "async def main():\n"
        f"    p = StdioServerParameters(command=sys.executable, args=['-m', 'pi_lsp', 'mcp', '--cwd', {str(tmp_path)!r}])\n"
        "    async with stdio_client(p) as (r, w):\n"
        "        async with ClientSession(r, w) as s:\n"
        "            await s.initialize()\n"
        "            await s.call_tool('bash', {'command': \"bash -c 'sleep 300; true' \" + os.environ['MARK']})\n"
        "anyio.run(main)\n"
    )
    temp_root = tmp_path / "tmp"
    temp_root.mkdir()
    client = subprocess.Popen([sys.executable, "-c", script], env=server_env(TMPDIR=str(temp_root), MARK=marker),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(600):
            if _running(marker):
                break
            time.sleep(0.05)
        assert _running(marker)
        server = subprocess.run(["pgrep", "-f", "pi_lsp mcp --cwd " + str(tmp_path)], capture_output=True, text=True)
        for pid in server.stdout.split():
            os.kill(int(pid), signals.SIGTERM)
        for _ in range(200):
            if not _running(marker):
                break
            time.sleep(0.05)
        assert not _running(marker), "SIGTERM left the bash command running"
        assert not [p for p in temp_root.iterdir() if p.name.startswith("pi-lsp-mcp-")]
    finally:
        client.kill()
        client.wait()
