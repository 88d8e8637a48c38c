"""design.md section 7 decisions for edit (byte-faithful splicing), bad input, and the FileAccess seam."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from pi_lsp.agent.tool import ToolContext, ToolError
from pi_lsp.tools.edit import EditArgs
from pi_lsp.tools.file_io.file_access import FileSnapshot, WriteReport
from pi_lsp.tools.file_io.local_files import LocalFileAccess
from pi_lsp.tools.file_io.mutation_queue import active_keys
from tests.tools.edit_support import edit, edit_tool

REPO = Path(__file__).resolve().parents[2]


async def test_mixed_endings_outside_the_span_are_kept(tmp_path: Path) -> None:
    (tmp_path / "m.txt").write_bytes(b"a\r\nb\nc\rd\r\n")
    await edit(tmp_path, "m.txt", ("b", "B"))
    assert (tmp_path / "m.txt").read_bytes() == b"a\r\nB\nc\rd\r\n"
    # newlines of the replacement take the first line break inside the replaced span ("\n" here)
    await edit(tmp_path, "m.txt", ("B\nc", "1\n2\n3"))
    assert (tmp_path / "m.txt").read_bytes() == b"a\r\n1\n2\n3\rd\r\n"
    # no break inside: the ending of the line the span is on (CRLF for "d")
    await edit(tmp_path, "m.txt", ("d", "d1\nd2"))
    assert (tmp_path / "m.txt").read_bytes() == b"a\r\n1\n2\n3\rd1\r\nd2\r\n"


async def test_lone_cr_files_stay_cr(tmp_path: Path) -> None:
    (tmp_path / "cr.txt").write_bytes(b"a\rb\rc\r")
    out = await edit(tmp_path, "cr.txt", ("b", "B\nX"))
    assert out.details["diff"] == " 1 a\n-2 b\n+2 B\n+3 X\n 3 c"
    assert (tmp_path / "cr.txt").read_bytes() == b"a\rB\rX\rc\r"


async def test_fuzzy_on_crlf_keeps_untouched_lines(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"keep  \r\nsay \xe2\x80\x9chi\xe2\x80\x9d  \r\ntail \xe2\x80\x94 x\r\n")
    await edit(tmp_path, "f.txt", ('say "hi"', "SAY"))
    assert (tmp_path / "f.txt").read_bytes() == b"keep  \r\nSAY\r\ntail \xe2\x80\x94 x\r\n"


async def test_bom_with_lf_is_kept_and_never_matched(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_bytes(b"\xef\xbb\xbffirst\nsecond\n")
    out = await edit(tmp_path, "b.txt", ("first", "1st"))
    assert out.details["firstChangedLine"] == 1
    assert (tmp_path / "b.txt").read_bytes() == b"\xef\xbb\xbf1st\nsecond\n"


async def test_invalid_utf8_is_refused_and_untouched(tmp_path: Path) -> None:
    data = b"caf\xe9 latin-1\nsecond\n"
    (tmp_path / "l1.txt").write_bytes(data)
    before = os.stat(tmp_path / "l1.txt")
    out = await edit(tmp_path, "l1.txt", ("second", "2"))
    assert out.is_error
    assert out.text.startswith("Could not edit file: l1.txt. It is not valid UTF-8 text (invalid byte at offset 3)")
    assert (tmp_path / "l1.txt").read_bytes() == data
    assert os.stat(tmp_path / "l1.txt").st_mtime_ns == before.st_mtime_ns


async def test_directory_loop_and_huge_old_text(tmp_path: Path) -> None:
    (tmp_path / "adir").mkdir()
    out = await edit(tmp_path, "adir", ("a", "b"))
    assert out.text == "EISDIR: illegal operation on a directory, read"
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    out = await edit(tmp_path, "loop1", ("a", "b"))
    assert out.text == "Could not edit file: loop1. Error code: ELOOP."
    (tmp_path / "a.txt").write_text("small\n")
    out = await edit(tmp_path, "a.txt", ("x" * 5_000_000, "y"))
    assert out.text.startswith("Could not find the exact text in a.txt.")
    assert (tmp_path / "a.txt").read_text() == "small\n"
    assert active_keys() == []


NOBODY = 65534


async def test_read_only_file_is_eacces(tmp_path: Path) -> None:
    """Run as an unprivileged user: as root (CI) in a child that switches to ``nobody`` (root
    bypasses file permissions, as Node's fs.access does), else in this process."""
    if os.geteuid() != 0:
        target = tmp_path / "ro.txt"
        target.write_text("x\n")
        target.chmod(0o444)
        out = await edit(tmp_path, "ro.txt", ("x", "y"))
        assert out.text == "Could not edit file: ro.txt. Error code: EACCES."
        return
    shared = Path(tempfile.mkdtemp(prefix="pi-lsp-test-"))  # tmp_path is 0700: nobody cannot enter it
    try:
        shared.chmod(0o755)
        target = shared / "ro.txt"
        target.write_text("x\n")
        target.chmod(0o444)
        os.chown(target, NOBODY, NOBODY)  # nobody's own file: only its mode refuses the write
        code = textwrap.dedent(f"""
            import asyncio, os, json
            from pathlib import Path
            from tests.tools.edit_support import edit
            # one edit as root first: everything the edit path imports or builds lazily is loaded
            # while the interpreter's files are still readable
            warm = Path({str(shared)!r}) / "warm"
            warm.mkdir()
            (warm / "w.txt").write_text("x\\n")
            asyncio.run(edit(warm, "w.txt", ("x", "y")))
            os.setgid({NOBODY}); os.setuid({NOBODY})
            out = asyncio.run(edit(Path({str(shared)!r}), "ro.txt", ("x", "y")))
            print(json.dumps([os.geteuid(), out.text]))
        """)
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60,
            stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == [NOBODY, "Could not edit file: ro.txt. Error code: EACCES."]
        assert target.read_text() == "x\n"
    finally:
        subprocess.run(["rm", "-rf", str(shared)], check=False)


class _Recording(LocalFileAccess):
    """The real filesystem access, plus scripted failures and a record of writes."""

    def __init__(self, access_error: OSError | None = None, write_error: Exception | None = None,
                 notices: list[str] | None = None, gate: asyncio.Event | None = None) -> None:
        self.access_error = access_error
        self.write_error = write_error
        self.notices = notices or []
        self.gate = gate
        self.writes: list[tuple[Path, bytes, FileSnapshot | None, str]] = []
        self.write_started = asyncio.Event()

    async def access(self, path: Path, *, write: bool = False) -> None:
        if self.access_error is not None:
            raise self.access_error
        await super().access(path, write=write)

    async def write(self, path: Path, data: bytes, *, previous: FileSnapshot | None, label: str,
                    ctx: ToolContext | None = None) -> WriteReport:
        self.writes.append((path, data, previous, label))
        self.write_started.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.write_error is not None:
            raise self.write_error
        await super().write(path, data, previous=previous, label=label, ctx=ctx)
        return WriteReport(via="disk", notices=list(self.notices))


async def test_access_errors_use_pis_words(tmp_path: Path) -> None:
    (tmp_path / "broken.txt").write_text("a\n")
    offline = _Recording(access_error=OSError("disk offline"))
    out = await edit(tmp_path, "broken.txt", ("a", "b"), files=offline)
    assert out.text == "Could not edit file: broken.txt. Error: disk offline."
    denied = _Recording(access_error=PermissionError(errno.EACCES, "Permission denied", str(tmp_path / "broken.txt")))
    out = await edit(tmp_path, "broken.txt", ("a", "b"), files=denied)
    assert out.text == "Could not edit file: broken.txt. Error code: EACCES."
    assert (tmp_path / "broken.txt").read_text() == "a\n"


async def test_seam_gets_label_snapshot_and_notices_come_back(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_bytes(b"one\r\ntwo\r\n")
    files = _Recording(notices=["[applied by the editor, not yet confirmed]"])
    out = await edit(tmp_path, "./sub/a.txt", ("two", "2"), files=files)
    assert out.text == "Successfully replaced 1 block(s) in ./sub/a.txt.\n[applied by the editor, not yet confirmed]"
    [(path, data, previous, label)] = files.writes
    assert path == tmp_path / "sub" / "a.txt" and data == b"one\r\n2\r\n"
    assert previous is not None and previous.data == b"one\r\ntwo\r\n"
    assert label == "pi: edit sub/a.txt"


async def test_failed_write_is_an_error_and_leaves_the_file(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    full = _Recording(write_error=OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "a.txt")))
    out = await edit(tmp_path, "a.txt", ("a", "b"), files=full)
    assert out.text == f"ENOSPC: no space left on device, open '{tmp_path / 'a.txt'}'"
    refused = _Recording(write_error=ToolError("The editor refused the edit: document changed"))
    out = await edit(tmp_path, "a.txt", ("a", "b"), files=refused)
    assert out.text == "The editor refused the edit: document changed"
    assert (tmp_path / "a.txt").read_text() == "a\n"


async def test_cancel_during_write_waits_for_it_and_holds_the_lock(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    gate = asyncio.Event()
    files = _Recording(gate=gate)
    tool = edit_tool(tmp_path, files)
    first = asyncio.create_task(
        tool.execute(EditArgs.model_validate({"path": "a.txt", "edits": [{"oldText": "one", "newText": "1"}]}), ToolContext("c1"))
    )
    await asyncio.wait_for(files.write_started.wait(), 5)
    second = asyncio.create_task(
        tool.execute(EditArgs.model_validate({"path": "a.txt", "edits": [{"oldText": "two", "newText": "2"}]}), ToolContext("c2"))
    )
    first.cancel()
    await asyncio.sleep(0.05)
    assert len(files.writes) == 1 and not first.done()  # still writing, still holding the lock
    gate.set()
    with pytest.raises(ToolError) as aborted:
        await first
    assert aborted.value.message == (
        "Operation aborted after the edit was written: Successfully replaced 1 block(s) in a.txt."
    )
    result = await asyncio.wait_for(second, 5)
    assert result.content[0].text == "Successfully replaced 1 block(s) in a.txt."
    assert (tmp_path / "a.txt").read_text() == "1\n2\n"
