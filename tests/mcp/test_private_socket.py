"""The daemon's private socket: only this user, only with the token, only inside the runtime dir."""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.ipc import registry
from pi_lsp.ipc.registry import DaemonEntry, find_daemons
from pi_lsp.ipc.runtime_dir import UnsafeRuntimeDir, ensure_private_dir, runtime_dir
from pi_lsp.mcp.daemon_client import DaemonClient, DaemonError
from tests.mcp.mcp_support import mcp_session, text_of
from tests.mcp.test_mcp_through_editor import _announced


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


async def test_files_are_private(make_editor: Any, tmp_path: Path) -> None:
    await make_editor(tmp_path)
    await _announced(tmp_path)
    [entry] = find_daemons(tmp_path)[0]
    assert _mode(runtime_dir()) == 0o700
    assert _mode(entry.socket.parent) == 0o700 and _mode(entry.path.parent) == 0o700
    assert _mode(entry.socket) == 0o600 and _mode(entry.path) == 0o600
    assert stat.S_ISSOCK(os.lstat(entry.socket).st_mode)
    assert len(entry.token) == 64


async def test_a_wrong_token_is_refused(make_editor: Any, tmp_path: Path) -> None:
    await make_editor(tmp_path)
    await _announced(tmp_path)
    [entry] = find_daemons(tmp_path)[0]
    forged = DaemonEntry(**{**entry.__dict__, "token": "0" * 64})
    with pytest.raises(DaemonError, match="token"):
        await DaemonClient.connect(forged, timeout_seconds=10)
    good = await DaemonClient.connect(entry, timeout_seconds=10)
    assert [t["name"] for t in await good.list_tools()][:2] == ["read", "bash"]
    await good.close()


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to run a client as another user")
async def test_another_user_is_refused_even_with_the_token(make_editor: Any, tmp_path: Path) -> None:
    await make_editor(tmp_path)
    await _announced(tmp_path)
    [entry] = find_daemons(tmp_path)[0]
    # Open the path for the other user so that only the peer-credential check stands in the way.
    opened = [(runtime_dir(), 0o711), (entry.socket.parent, 0o711), (entry.socket, 0o666)]
    saved = [(p, _mode(p)) for p, _ in opened]
    nobody = pwd.getpwnam("nobody").pw_uid
    code = (
        "import os, socket, json, sys\n"
        f"os.setgid({nobody}); os.setuid({nobody})\n"
        "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
        "body = json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'pi/authenticate', 'params': {'token': sys.argv[2]}}).encode()\n"
        "try:\n    s.sendall(b'Content-Length: %d\\r\\n\\r\\n' % len(body) + body)\nexcept OSError:\n    pass\n"
        "s.settimeout(30); print(s.recv(65536).decode(errors='replace'))\n"
    )
    try:
        for path, mode in opened:
            os.chmod(path, mode)
        out = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-c", code, str(entry.socket), entry.token],
            capture_output=True, text=True, timeout=60,
        )
    finally:
        for path, mode in saved:
            os.chmod(path, mode)
    assert "not the same user" in out.stdout, (out.stdout, out.stderr)
    assert '"result"' not in out.stdout


def _plant(name: str, **fields: Any) -> Path:
    directory = ensure_private_dir(ensure_private_dir(runtime_dir()) / "daemons")
    path = directory / f"{name}.json"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump({"version": 1, "token": "x" * 64, "client": "planted", **fields}, out)
    return path


async def test_an_entry_pointing_outside_the_runtime_dir_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "evil.sock"
    outside.touch()
    planted = _plant("planted-outside", pid=os.getpid(), socket=str(outside), folders=[str(tmp_path)])
    try:
        daemons, refused = find_daemons(tmp_path)
        assert daemons == [] and any("outside" in reason for reason in refused)
        async with mcp_session(tmp_path) as session:
            result = await session.call_tool("read", {"path": "."})
        assert "the filesystem" in text_of(result)
    finally:
        planted.unlink()


def test_a_stale_entry_is_removed(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    sock = registry.socket_path("stale-test")
    sock.touch()
    planted = _plant("stale-test", pid=dead.pid, socket=str(sock), folders=[str(tmp_path)])
    assert find_daemons(tmp_path)[0] == []
    assert not planted.exists() and not sock.exists()


def test_an_open_runtime_dir_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "rt"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    with pytest.raises(UnsafeRuntimeDir, match="must be 700"):
        ensure_private_dir(shared)
    link = tmp_path / "link"
    link.symlink_to(ensure_private_dir(tmp_path / "private"))
    with pytest.raises(UnsafeRuntimeDir, match="not a directory"):
        ensure_private_dir(link)
