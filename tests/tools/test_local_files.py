"""LocalFileAccess and the safe write (design.md section 7), on real files.

Privilege cases run a child process as ``nobody`` when the tests run as root (root may write
anything, so "permission denied" and "directory not writable" need another user); they skip with a
reason otherwise. Disk-full style failures use a real ``RLIMIT_FSIZE`` in a child process.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_lsp.tools.file_io.local_files import LocalFileAccess
from pi_lsp.tools.file_io.os_errors import node_style_message
from pi_lsp.tools.file_io.safe_write import write_file_safely

REPO = Path(__file__).resolve().parents[2]
NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to another user")


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory under /tmp that another user can traverse (pytest's tmp_path is 0700)."""
    path = Path(tempfile.mkdtemp(prefix="pi-lsp-test-"))
    path.chmod(0o755)
    yield path
    subprocess.run(["rm", "-rf", str(path)], check=False)


def _run_child(code: str, *, user: int | None = None) -> subprocess.CompletedProcess[str]:
    # import everything first: the interpreter's own files may not be readable by ``user``
    prelude = (
        "import asyncio, os, resource, signal, sys\n"
        "from pathlib import Path\n"
        "from pi_lsp.tools.file_io.local_files import LocalFileAccess\n"
        "from pi_lsp.tools.file_io.os_errors import node_style_message\n"
        "from pi_lsp.tools.file_io.safe_write import write_file_safely\n"
        "import concurrent.futures.thread\n"
    )
    if user is not None:
        prelude += f"os.setgid({user}); os.setuid({user})\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        cwd=REPO, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def _no_temp_files(directory: Path) -> bool:
    return not [p for p in directory.iterdir() if p.name.endswith(".pi-tmp")]


async def test_read_returns_raw_bytes_and_real_path(tmp_path: Path) -> None:
    target = tmp_path / "t.bin"
    target.write_bytes(b"\xef\xbb\xbfa\r\nb\x00")
    link = tmp_path / "link"
    link.symlink_to(target)
    snapshot = await LocalFileAccess().read(link)
    assert snapshot.data == b"\xef\xbb\xbfa\r\nb\x00"
    assert snapshot.path == link and snapshot.real_path == target.resolve()
    assert snapshot.source == "disk" and snapshot.version is None and snapshot.notices == ()


async def test_read_errors_carry_codes(tmp_path: Path) -> None:
    files = LocalFileAccess()
    with pytest.raises(OSError) as info:
        await files.read(tmp_path)
    assert info.value.errno == errno.EISDIR
    (tmp_path / "l1").symlink_to("l2")
    (tmp_path / "l2").symlink_to("l1")
    with pytest.raises(OSError) as info:
        await files.read(tmp_path / "l1")
    assert info.value.errno == errno.ELOOP
    with pytest.raises(OSError) as info:
        await files.access(tmp_path / "missing")
    assert node_style_message(info.value, "access") == (
        f"ENOENT: no such file or directory, access '{tmp_path / 'missing'}'"
    )
    await files.access(tmp_path)  # like Node: a directory passes access, reading it fails
    (tmp_path / "plain.txt").write_text("x")
    with pytest.raises(OSError) as info:
        await files.access(tmp_path / "plain.txt" / "child")
    assert node_style_message(info.value, "access") == (
        f"ENOTDIR: not a directory, access '{tmp_path / 'plain.txt' / 'child'}'"
    )


@needs_root
def test_access_denied_for_another_user(shared_dir: Path) -> None:
    secret = shared_dir / "secret.txt"
    secret.write_text("x")
    secret.chmod(0o600)
    done = _run_child(
        f"""
        import asyncio
        from pathlib import Path
        from pi_lsp.tools.file_io.local_files import LocalFileAccess
        from pi_lsp.tools.file_io.os_errors import node_style_message
        try:
            asyncio.run(LocalFileAccess().access(Path({str(secret)!r})))
        except OSError as exc:
            print(node_style_message(exc, "access"))
        """,
        user=NOBODY,
    )
    assert done.stdout.strip() == f"EACCES: permission denied, access '{secret}'", done.stderr


async def test_write_creates_parents_and_respects_umask(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "c.txt"
    await LocalFileAccess().write(target, b"hello", previous=None, label="pi: write c.txt")
    assert target.read_bytes() == b"hello"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert _no_temp_files(target.parent)


def test_write_through_symlink_keeps_the_symlink(tmp_path: Path) -> None:
    target = tmp_path / "real.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to("real.txt")
    write_file_safely(link, b"new")
    assert link.is_symlink() and os.readlink(link) == "real.txt"
    assert target.read_bytes() == b"new"
    dangling = tmp_path / "dangling"
    dangling.symlink_to("created.txt")
    write_file_safely(dangling, b"made")
    assert dangling.is_symlink() and (tmp_path / "created.txt").read_bytes() == b"made"


def test_write_keeps_mode_and_owner(tmp_path: Path) -> None:
    target = tmp_path / "script.sh"
    target.write_text("old")
    target.chmod(0o751)
    if os.geteuid() == 0:
        os.chown(target, 1234, 2345)
    write_file_safely(target, b"#!/bin/sh\n")
    info = target.stat()
    assert stat.S_IMODE(info.st_mode) == 0o751
    if os.geteuid() == 0:
        assert (info.st_uid, info.st_gid) == (1234, 2345)
    assert target.read_bytes() == b"#!/bin/sh\n"


def test_write_replaces_by_rename_normally(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old")
    before = target.stat().st_ino
    write_file_safely(target, b"new")
    assert target.stat().st_ino != before  # a fresh inode: atomic replace
    assert _no_temp_files(tmp_path)


def test_hard_linked_file_is_written_in_place(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old content that is long")
    other = tmp_path / "other-name.txt"
    os.link(target, other)
    inode = target.stat().st_ino
    write_file_safely(target, b"new")
    assert target.stat().st_ino == inode
    assert other.read_bytes() == b"new" and target.read_bytes() == b"new"


@needs_root
def test_unwritable_directory_is_written_in_place(shared_dir: Path) -> None:
    target = shared_dir / "mine.txt"
    target.write_text("old")
    os.chown(target, NOBODY, NOBODY)
    inode = target.stat().st_ino
    done = _run_child(
        f"""
        from pathlib import Path
        from pi_lsp.tools.file_io.safe_write import write_file_safely
        write_file_safely(Path({str(target)!r}), b"written by nobody")
        print("ok")
        """,
        user=NOBODY,
    )
    assert done.stdout.strip() == "ok", done.stderr
    assert target.read_bytes() == b"written by nobody"
    assert target.stat().st_ino == inode
    assert target.stat().st_uid == NOBODY


@needs_root
def test_read_only_file_is_refused_for_another_user(shared_dir: Path) -> None:
    target = shared_dir / "ro.txt"
    target.write_text("keep me")
    target.chmod(0o444)
    os.chown(shared_dir, NOBODY, NOBODY)  # the directory is writable: a rename would succeed
    done = _run_child(
        f"""
        from pathlib import Path
        from pi_lsp.tools.file_io.safe_write import write_file_safely
        from pi_lsp.tools.file_io.os_errors import node_style_message
        try:
            write_file_safely(Path({str(target)!r}), b"x")
        except OSError as exc:
            print(node_style_message(exc, "open"))
        """,
        user=NOBODY,
    )
    assert done.stdout.strip() == f"EACCES: permission denied, open '{target}'", done.stderr
    assert target.read_bytes() == b"keep me"


@pytest.mark.parametrize("hard_linked", [False, True], ids=["rename", "in-place"])
def test_failed_write_leaves_the_file_identical(tmp_path: Path, hard_linked: bool) -> None:
    target = tmp_path / "f.txt"
    old = b"old bytes\r\n\xff\x00 stay exactly\n"
    target.write_bytes(old)
    if hard_linked:
        os.link(target, tmp_path / "alias")
    done = _run_child(
        f"""
        import resource, signal
        from pathlib import Path
        from pi_lsp.tools.file_io.safe_write import write_file_safely
        from pi_lsp.tools.file_io.os_errors import node_style_message
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        try:
            write_file_safely(Path({str(target)!r}), b"x" * 100_000)
        except OSError as exc:
            print(node_style_message(exc, "open"))
        """
    )
    assert done.stdout.strip() == "EFBIG: file too large, write", done.stderr
    assert target.read_bytes() == old
    assert _no_temp_files(tmp_path)


def test_failure_after_partial_in_place_write_restores_old_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "f.txt"
    target.write_bytes(b"original content\n")
    os.link(target, tmp_path / "alias")
    real_ftruncate = os.ftruncate
    calls = {"n": 0}

    def failing_once(fd: int, length: int) -> None:  # the disk fails after the data was written
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError(errno.EIO, "Input/output error")
        real_ftruncate(fd, length)

    monkeypatch.setattr(os, "ftruncate", failing_once)
    with pytest.raises(OSError) as info:
        write_file_safely(target, b"NEW")
    assert node_style_message(info.value, "open") == "EIO: i/o error, write"
    assert target.read_bytes() == b"original content\n"


def test_failed_rename_removes_the_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "f.txt"
    target.write_bytes(b"old")

    def failing_replace(src: str, dst: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError):
        write_file_safely(target, b"new")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


def test_write_errors_in_node_words(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_text("x")
    (tmp_path / "l1").symlink_to("l2")
    (tmp_path / "l2").symlink_to("l1")
    cases = {
        tmp_path / "dir": f"EISDIR: illegal operation on a directory, open '{tmp_path / 'dir'}'",
        tmp_path / "l1": f"ELOOP: too many symbolic links encountered, open '{tmp_path / 'l1'}'",
        tmp_path / "file" / "x": f"EEXIST: file already exists, mkdir '{tmp_path / 'file'}'",
    }
    for path, message in cases.items():
        with pytest.raises(OSError) as info:
            write_file_safely(path, b"data")
        assert node_style_message(info.value, "open") == message
    assert (tmp_path / "file").read_text() == "x"
    assert _no_temp_files(tmp_path)


async def test_large_files_are_read_whole(tmp_path: Path) -> None:
    data = bytes(range(256)) * 8192  # 2 MiB: read in a worker thread
    (tmp_path / "big.bin").write_bytes(data)
    assert (await LocalFileAccess().read(tmp_path / "big.bin")).data == data
