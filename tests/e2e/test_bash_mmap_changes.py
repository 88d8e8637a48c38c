"""The bash snapshot after a command comes from inotify; a confirmation walk adds what only a write
through a shared ``mmap`` changed (issue 18). Through the real daemon: ``pi/changes`` asked right
after the command waits for that walk and sees the whole change set, and a ``write`` right after
the command is never the command's.
"""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")

MMAP_WRITE = textwrap.dedent("""\
    import mmap, sys
    with open(sys.argv[1], "r+b") as handle, mmap.mmap(handle.fileno(), 0) as shared:
        shared[0:6] = b"MAPPED"
""")


async def test_pi_changes_right_after_bash_has_the_mmap_write_and_not_the_next_write(
        make_editor: Any, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    (tmp_path / "data.bin").write_bytes(b"000000\n")
    (tmp_path / "a.txt").write_text("a\n")
    outside = tmp_path_factory.mktemp("outside")
    os.link(tmp_path / "data.bin", outside / "alias.bin")  # opened by this name, inotify sees nothing
    (outside / "mmap_write.py").write_text(MMAP_WRITE)
    editor = await make_editor(tmp_path)
    bash = await editor.call("bash", {"command": (
        f"echo A > a.txt && {sys.executable} {outside / 'mmap_write.py'} {outside / 'alias.bin'}")}, "c1")
    assert not bash["isError"], editor.result_text(bash)
    written = await editor.call("write", {"path": "after.txt", "content": "written after bash\n"}, "c2")
    assert not written["isError"], editor.result_text(written)

    result = await editor.request("pi/changes", {"sessionId": "external"})
    files = {Path(entry["path"]).name: entry for entry in result["files"]}
    assert set(files) == {"a.txt", "data.bin", "after.txt"}
    assert [call["toolCallId"] for call in files["data.bin"]["toolCalls"]] == ["c1"]
    assert files["data.bin"]["state"] == "modified" and files["data.bin"]["hunks"][0]["newText"] == "MAPPED\n"
    assert [call["toolName"] for call in files["after.txt"]["toolCalls"]] == ["write"]

    reverted = await editor.request("pi/revertChanges", {"sessionId": "external", "files": [str(tmp_path / "data.bin")]})
    assert not reverted["conflicts"], reverted
    assert (tmp_path / "data.bin").read_bytes() == b"000000\n"
