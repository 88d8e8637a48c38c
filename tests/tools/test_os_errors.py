"""Node-style OS error texts (compared with what the peer printed for the same failures)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from pi_lsp.tools.file_io.os_errors import node_error, node_style_message, os_error_code


def _raised(fn) -> OSError:
    with pytest.raises(OSError) as info:
        fn()
    return info.value


def test_enoent_access(tmp_path: Path) -> None:
    missing = tmp_path / "missing.txt"
    exc = _raised(lambda: os.stat(missing))
    assert os_error_code(exc) == "ENOENT"
    assert node_style_message(exc, "access") == f"ENOENT: no such file or directory, access '{missing}'"


def test_eisdir_without_path(tmp_path: Path) -> None:
    exc = _raised(lambda: open(tmp_path, "rb").read())
    assert os_error_code(exc) == "EISDIR"
    assert node_style_message(exc, "open", str(tmp_path)) == (
        f"EISDIR: illegal operation on a directory, open '{tmp_path}'"
    )
    bare = OSError(errno.EISDIR, "Is a directory")
    assert node_style_message(bare, "read") == "EISDIR: illegal operation on a directory, read"


def test_eloop_and_enotdir(tmp_path: Path) -> None:
    (tmp_path / "l1").symlink_to("l2")
    (tmp_path / "l2").symlink_to("l1")
    exc = _raised(lambda: open(tmp_path / "l1", "rb"))
    assert node_style_message(exc, "open") == (
        f"ELOOP: too many symbolic links encountered, open '{tmp_path / 'l1'}'"
    )
    (tmp_path / "f").write_text("x")
    exc = _raised(lambda: os.stat(tmp_path / "f" / "x"))
    assert node_style_message(exc, "access").startswith("ENOTDIR: not a directory, access '")


def test_codes_and_fallbacks() -> None:
    assert os_error_code(OSError(errno.EACCES, "x")) == "EACCES"
    assert node_style_message(OSError(errno.EACCES, "x", "/a"), "open") == (
        "EACCES: permission denied, open '/a'"
    )
    assert node_style_message(OSError(errno.EEXIST, "x", "/a"), "mkdir") == (
        "EEXIST: file already exists, mkdir '/a'"
    )
    assert os_error_code(OSError("no errno")) is None
    assert node_style_message(OSError("disk offline"), "open") == "Error: disk offline"
    assert "[Errno" not in node_style_message(OSError(errno.ENOSPC, "No space"), "write")
    assert node_style_message(OSError(errno.EXDEV, "x", "/a", None, "/b"), "rename") == (
        "EXDEV: cross-device link not permitted, rename '/a' -> '/b'"
    )


def test_node_error_builds_a_real_oserror() -> None:
    exc = node_error("EISDIR", "/d")
    assert isinstance(exc, IsADirectoryError)
    assert exc.filename == "/d"
    with pytest.raises(ValueError):
        node_error("ENOTACODE")
