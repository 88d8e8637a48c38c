"""The write tool (pi-behaviour.md 2.4 and 1.5, the mutation-queue checklist, design.md section 7)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pi_lsp.agent.tool import AbortSignal, ToolContext, ToolError, ToolResult
from pi_lsp.tools.environment import ToolEnvironment
from pi_lsp.tools.file_io.file_access import FileSnapshot, WriteReport
from pi_lsp.tools.file_io.local_files import LocalFileAccess
from pi_lsp.tools.file_io.mutation_queue import active_keys
from pi_lsp.tools.write import WriteArgs, WriteTool
from tests.peer import run_peer, run_peer_script


def _tool(cwd: Path, files: LocalFileAccess | None = None) -> WriteTool:
    return WriteTool(ToolEnvironment(cwd=cwd, files=files or LocalFileAccess(), temp_dir=cwd))


async def _write(cwd: Path, path: str, content: str, files: LocalFileAccess | None = None) -> ToolResult:
    return await _tool(cwd, files).execute(WriteArgs(path=path, content=content), ToolContext(tool_call_id="w"))


async def test_writes_and_reports(tmp_path: Path) -> None:
    result = await _write(tmp_path, "nested/dir/file.txt", "hello")
    assert result.content[0].text == "Successfully wrote 5 bytes to nested/dir/file.txt"  # type: ignore[union-attr]
    assert result.details is None
    assert (tmp_path / "nested/dir/file.txt").read_bytes() == b"hello"


async def test_overwrites_and_counts_utf8_bytes(tmp_path: Path) -> None:
    (tmp_path / "u.txt").write_text("old content")
    result = await _write(tmp_path, "u.txt", "héllo 🙂\n")
    # the peer would say 9 (UTF-16 units); pi-lsp reports the real bytes (design.md section 7)
    assert result.content[0].text == "Successfully wrote 12 bytes to u.txt"  # type: ignore[union-attr]
    assert (tmp_path / "u.txt").read_bytes() == "héllo 🙂\n".encode()


async def test_absolute_path_is_echoed_as_given(tmp_path: Path) -> None:
    target = tmp_path / "abs.txt"
    result = await _write(Path("/"), str(target), "x")
    assert result.content[0].text == f"Successfully wrote 1 bytes to {target}"  # type: ignore[union-attr]


async def test_errors_in_node_words(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_text("keep")
    (tmp_path / "l1").symlink_to("l2")
    (tmp_path / "l2").symlink_to("l1")
    expected = {
        "d": f"EISDIR: illegal operation on a directory, open '{tmp_path / 'd'}'",
        "f/x.txt": f"EEXIST: file already exists, mkdir '{tmp_path / 'f'}'",
        "l1": f"ELOOP: too many symbolic links encountered, open '{tmp_path / 'l1'}'",
        "file://remote/x": 'File URL host must be "localhost" or empty on linux',
    }
    for path, message in expected.items():
        with pytest.raises(ToolError) as info:
            await _write(tmp_path, path, "data")
        assert info.value.message == message
    assert (tmp_path / "f").read_text() == "keep"


class _Notices(LocalFileAccess):
    async def write(self, path: Path, data: bytes, *, previous: FileSnapshot | None, label: str,
                    ctx: ToolContext | None = None) -> WriteReport:
        await super().write(path, data, previous=previous, label=label, ctx=ctx)
        self.label = label
        return WriteReport(via="editor", notices=["applied by the editor, not yet confirmed"])


async def test_report_notices_and_label(tmp_path: Path) -> None:
    files = _Notices()
    result = await _write(tmp_path, "src/a.py", "x = 1\n", files)
    assert result.content[0].text == (  # type: ignore[union-attr]
        "Successfully wrote 6 bytes to src/a.py\napplied by the editor, not yet confirmed"
    )
    assert files.label == "pi: write src/a.py"


class _Slow(LocalFileAccess):
    """Disk writes that wait for a gate, recording when each starts (a slow disk or editor)."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.started: list[bytes] = []

    async def write(self, path: Path, data: bytes, *, previous: FileSnapshot | None, label: str,
                    ctx: ToolContext | None = None) -> WriteReport:
        self.started.append(data)
        await self.gate.wait()
        return await super().write(path, data, previous=previous, label=label, ctx=ctx)


async def test_same_file_writes_are_serialised_in_call_order(tmp_path: Path) -> None:
    files = _Slow()
    first = asyncio.create_task(_write(tmp_path, "q.txt", "first\n", files))
    second = asyncio.create_task(_write(tmp_path, "./q.txt", "second\n", files))
    await asyncio.sleep(0.05)
    assert files.started == [b"first\n"]
    files.gate.set()
    await asyncio.gather(first, second)
    assert files.started == [b"first\n", b"second\n"]
    assert (tmp_path / "q.txt").read_text() == "second\n"
    assert active_keys() == []


async def test_aborted_write_keeps_the_lock_until_its_write_settles(tmp_path: Path) -> None:
    files = _Slow()
    first = asyncio.create_task(_write(tmp_path, "q.txt", "first\n", files))
    await asyncio.sleep(0.05)
    second = asyncio.create_task(_write(tmp_path, "q.txt", "second\n", files))
    first.cancel()
    await asyncio.sleep(0.05)
    assert files.started == [b"first\n"] and not first.done()  # the next write has not started
    files.gate.set()
    with pytest.raises(asyncio.CancelledError):  # the pipeline reports it as "Operation aborted"
        await first
    await second
    assert (tmp_path / "q.txt").read_text() == "second\n"


async def test_aborted_before_start_writes_nothing(tmp_path: Path) -> None:
    signal = AbortSignal()
    signal.abort()
    with pytest.raises(ToolError, match="^Operation aborted$"):
        await _tool(tmp_path).execute(
            WriteArgs(path="x.txt", content="x"), ToolContext(tool_call_id="w", signal=signal)
        )
    assert not (tmp_path / "x.txt").exists()


async def test_different_files_write_concurrently(tmp_path: Path) -> None:
    files = _Slow()
    a = asyncio.create_task(_write(tmp_path, "a.txt", "a", files))
    b = asyncio.create_task(_write(tmp_path, "b.txt", "b", files))
    await asyncio.sleep(0.05)
    assert sorted(files.started) == [b"a", b"b"]
    files.gate.set()
    await asyncio.gather(a, b)


def test_tool_metadata_matches_the_peer(peer: Path) -> None:
    tool = _tool(Path("/"))
    assert (tool.name, tool.label, tool.execution_mode) == ("write", "write", "parallel")
    [defs] = run_peer_script(peer, "peer_defs.mjs")
    theirs = next(d for d in defs if d["name"] == "write")
    assert (tool.label, tool.description, tool.parameters) == (
        theirs["label"], theirs["description"], theirs["parameters"]
    )


WRITE_CASES = [
    {"path": "deep/er/new.txt", "content": "hello\nworld\n"},
    {"path": "@at.txt", "content": ""},
    {"path": "over.txt", "content": "replaced"},
    {"path": "dir", "content": "x"},
    {"path": "over.txt/x", "content": "x"},
    {"path": "l1", "content": "x"},
    {"path": "link.txt", "content": "via link"},
]


async def test_write_matches_the_peer(peer: Path, tmp_path: Path) -> None:
    trees = {}
    for name in ("peer", "ours"):
        root = tmp_path / name
        root.mkdir()
        (root / "over.txt").write_text("old")
        (root / "dir").mkdir()
        (root / "l1").symlink_to("l2")
        (root / "l2").symlink_to("l1")
        (root / "link.txt").symlink_to("over.txt")
        trees[name] = root
    requests = [
        {"cwd": str(trees["peer"]), "toolCall": {"id": f"w{i}", "name": "write", "arguments": args}}
        for i, args in enumerate(WRITE_CASES)
    ]
    answers = run_peer(peer, requests)
    for args, theirs in zip(WRITE_CASES, answers):
        try:
            result = await _write(trees["ours"], args["path"], args["content"])
            ours = (False, result.content[0].text)  # type: ignore[union-attr]
        except ToolError as exc:
            ours = (True, exc.message.replace(str(trees["ours"]), str(trees["peer"])))
        assert ours == (theirs["isError"], theirs["content"][0]["text"]), args
    for path in sorted(p.relative_to(trees["peer"]) for p in trees["peer"].rglob("*")):
        mine = trees["ours"] / path
        if (trees["peer"] / path).is_symlink():
            assert mine.is_symlink()
        elif (trees["peer"] / path).is_file():
            assert mine.read_bytes() == (trees["peer"] / path).read_bytes(), path
