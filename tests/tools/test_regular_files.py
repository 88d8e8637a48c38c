"""Devices, FIFOs and sockets are refused unopened by read, edit and write (a user's bug report:
``read /dev/zero`` grew to 23 GB, a FIFO blocked forever in ``open``).

Every call that could hang runs in a child process or worker thread bounded by a generous timeout,
so a regression fails instead of hanging the suite. The refusal itself is checked on real special
files: ``/dev/zero``, ``/dev/null`` and a FIFO made with :func:`os.mkfifo`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from pi_lsp.editor.documents import read_disk
from pi_lsp.tools.file_io.local_files import LocalFileAccess
from pi_lsp.tools.file_io.regular_files import NotRegularFileError
from pi_lsp.tools.file_io.safe_write import write_file_safely

REPO = Path(__file__).resolve().parents[2]
GENEROUS_SECONDS = 60


def _exec(cwd: Path, call: dict) -> dict:
    """Run one tool call through ``python3 -m pi_lsp exec`` (every tool active) and return its result."""
    done = subprocess.run(
        [sys.executable, "-m", "pi_lsp", "exec", "--cwd", str(cwd), "--tools", "all"],
        input=json.dumps(call) + "\n", capture_output=True, text=True, cwd=REPO,
        timeout=GENEROUS_SECONDS,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("name", ["/dev/zero", "fifo", "link-to-fifo"])
def test_read_tool_refuses_special_files_by_name(tmp_path: Path, fifo: Path, name: str) -> None:
    if name == "link-to-fifo":
        (tmp_path / name).symlink_to(fifo)
    result = _exec(tmp_path, {"id": "r", "name": "read", "arguments": {"path": name if name != "fifo" else str(fifo)}})
    assert result["isError"] is True
    text = result["content"][0]["text"]
    kind = "a character device" if name == "/dev/zero" else "a FIFO (named pipe)"
    assert f"is {kind}, not a regular file; read, edit and write only work on regular files." in text


def test_write_and_edit_tools_refuse_a_fifo_without_blocking(tmp_path: Path, fifo: Path) -> None:
    write = _exec(tmp_path, {"id": "w", "name": "write", "arguments": {"path": "pipe", "content": "hi"}})
    assert write["isError"] is True
    assert write["content"][0]["text"].startswith(f"{fifo} is a FIFO (named pipe), not a regular file")
    edit = _exec(tmp_path, {"id": "e", "name": "edit", "arguments": {
        "path": "pipe", "edits": [{"oldText": "a", "newText": "b"}]}})
    assert edit["isError"] is True
    assert "is a FIFO (named pipe), not a regular file" in edit["content"][0]["text"]
    assert fifo.is_fifo()


def test_directory_still_gives_eisdir(tmp_path: Path) -> None:
    result = _exec(tmp_path, {"id": "r", "name": "read", "arguments": {"path": str(tmp_path)}})
    assert result["content"][0]["text"] == "EISDIR: illegal operation on a directory, read"


async def test_local_file_access_refuses_device_fifo_and_socket(tmp_path: Path, fifo: Path) -> None:
    files = LocalFileAccess()
    sock_path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(sock_path))
        for path, kind in [(Path("/dev/zero"), "a character device"), (fifo, "a FIFO (named pipe)"),
                           (sock_path, "a socket")]:
            with pytest.raises(NotRegularFileError, match=re.escape(f"is {kind}, not a regular file")):
                await asyncio.wait_for(files.read(path), GENEROUS_SECONDS)
            with pytest.raises(NotRegularFileError, match=re.escape(f"is {kind}, not a regular file")):
                await asyncio.wait_for(files.write(path, b"x", previous=None, label="t"), GENEROUS_SECONDS)


async def test_safe_write_refuses_dev_null_and_regular_files_still_work(tmp_path: Path) -> None:
    with pytest.raises(NotRegularFileError, match="/dev/null is a character device"):
        await asyncio.wait_for(asyncio.to_thread(write_file_safely, Path("/dev/null"), b"x"), GENEROUS_SECONDS)
    target = tmp_path / "a.txt"
    write_file_safely(target, b"ok")
    assert (await LocalFileAccess().read(target)).data == b"ok"


async def test_editor_disk_read_gives_none_for_a_fifo(tmp_path: Path, fifo: Path) -> None:
    assert await asyncio.wait_for(asyncio.to_thread(read_disk, fifo), GENEROUS_SECONDS) is None
    regular = tmp_path / "r.txt"
    regular.write_bytes(b"abc")
    found = read_disk(regular)
    assert found is not None and found[0] == b"abc"


@pytest.mark.parametrize("name", ["pipe", "/dev/zero"])
def test_grep_refuses_a_fifo_or_device_path_without_blocking(tmp_path: Path, fifo: Path, name: str) -> None:
    # issue 12: ripgrep blocked reading the FIFO until the call was aborted; a directory holding
    # one is fine (ripgrep's walk skips special files)
    result = _exec(tmp_path, {"id": "g", "name": "grep", "arguments": {"pattern": "x", "path": name}})
    assert result["isError"] is True
    shown = fifo if name == "pipe" else name
    kind = "a FIFO (named pipe)" if name == "pipe" else "a character device"
    assert result["content"][0]["text"] == (
        f"{shown} is {kind}, not a regular file or directory; grep only searches regular files and directories."
    )
    (tmp_path / "a.txt").write_text("x marks\n")
    found = _exec(tmp_path, {"id": "d", "name": "grep", "arguments": {"pattern": "x", "path": "."}})
    assert found["content"][0]["text"] == "a.txt:1: x marks"


def test_a_file_system_that_honours_o_nonblock_is_read_blocking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A small file is read on its non-blocking descriptor; where the file system answers EAGAIN
    (some FUSE ones honour O_NONBLOCK on files), the descriptor is made blocking and the read
    asked again: the whole file, nothing lost or doubled."""
    from pi_lsp.tools.file_io import regular_files

    (tmp_path / "f.txt").write_bytes(b"line one\nline two\n")
    real_read = os.read
    refused: list[int] = []

    def eagain_while_non_blocking(fd: int, size: int) -> bytes:
        if not os.get_blocking(fd):
            refused.append(fd)
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return real_read(fd, size)

    monkeypatch.setattr(regular_files.os, "read", eagain_while_non_blocking)
    data, info = regular_files.read_checked_file(str(tmp_path / "f.txt"))
    assert data == b"line one\nline two\n" and info.st_size == len(data)
    assert len(refused) == 1  # asked once non-blocking, then blocking
