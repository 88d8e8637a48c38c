"""The bash hook records the after snapshot at once and the confirmation walk later, into the same
call's entry; readers of the journal wait for that walk (issue 18, :mod:`pi_lsp.changes.pending`).

The confirmation is held on a gate so that "a reader asked while it runs" is certain, not a race."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.agent.hooks import AfterToolCallContext, BeforeToolCallContext
from pi_lsp.agent.tool import AbortSignal, ToolResult
from pi_lsp.changes.bash_changes import BashChangesHook
from pi_lsp.changes.blobs import BlobStore
from pi_lsp.changes.journal import ChangeJournal
from pi_lsp.changes.pending import PendingRecords
from pi_lsp.changes.revert import change_set
from pi_lsp.changes.workspace_scan import Change, CommandSnapshot, WorkspaceScanner
from pi_lsp.llm.types import ToolCall
from pi_lsp.tools.file_io.local_files import LocalFileAccess

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


class GatedScanner(WorkspaceScanner):
    """The real scanner; its confirmation walk starts only once the test opens the gate."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.gate = threading.Event()

    def confirm(self, command: CommandSnapshot) -> list[Change]:
        self.gate.wait()
        return super().confirm(command)


async def test_pi_changes_waits_for_the_confirmation_walk_and_gets_the_mmap_write(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    (root / "data.bin").write_bytes(b"000000\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    os.link(root / "data.bin", outside / "alias.bin")  # written through this name: no inotify event
    journal = ChangeJournal(tmp_path / "journal", BlobStore(tmp_path / "blobs"))
    scanner = GatedScanner(journal, lambda: [root])
    hook = BashChangesHook(scanner)
    call = ToolCall(id="c1", name="bash", arguments={"command": "..."})
    journal.begin_turn("s")

    await hook.before(BeforeToolCallContext(call, None, None, "s"), AbortSignal())  # type: ignore[arg-type]
    script = "import mmap,sys\nwith open(sys.argv[1],'r+b') as f, mmap.mmap(f.fileno(),0) as m: m[0:6]=b'MAPPED'\n"
    subprocess.run(["bash", "-c", f"echo A > a.txt && {sys.executable} -c \"{script}\" {outside / 'alias.bin'}"],
                   cwd=root, check=True)
    await hook.after(AfterToolCallContext(call, None, None, ToolResult(content=[]), False, "s"),  # type: ignore[arg-type]
                     AbortSignal())
    assert [Path(c.path).name for c in journal.changes("s")] == ["a.txt"]  # recorded at once
    journal.begin_turn("s")  # the next turn began before the walk ended: it still records in turn 1

    reader = asyncio.ensure_future(change_set(journal, LocalFileAccess(), "s", None))
    try:
        for _ in range(20):
            await asyncio.sleep(0)
        assert not reader.done()  # held while the walk is pending
    finally:
        scanner.gate.set()
    entries = {Path(entry.path).name: entry for entry in await reader}
    assert set(entries) == {"a.txt", "data.bin"}
    [mapped] = [c for c in journal.changes("s") if c.path.endswith("data.bin")]
    assert (mapped.tool_call_id, mapped.tool_name, mapped.turn) == ("c1", "bash", 1)
    assert journal.blobs.get(mapped.before) == b"000000\n" and journal.blobs.get(mapped.after) == b"MAPPED\n"
    assert await journal.pending.settled() and scanner.full_walks == 1
    scanner.close()


async def test_a_reader_waits_at_most_the_timeout() -> None:
    pending = PendingRecords(timeout_seconds=0.01)
    job: concurrent.futures.Future[object] = concurrent.futures.Future()
    pending.add("s", job)
    assert await pending.settled("other")  # another session's job holds nobody
    assert not await pending.settled("s") and not pending.settled_blocking()
    job.set_result(None)
    assert await pending.settled("s") and await pending.settled() and pending.settled_blocking()
