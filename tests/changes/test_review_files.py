"""``ReviewingFileAccess.write_files`` over the real filesystem access (which has no
``write_files``: one write per file) and the real change journal, with a scripted reviewer: a
file whose content is not UTF-8 is not proposed but written with the rest and a notice; a file
the user rejected is left out and journaled as nothing; a partly accepted file lands (and is
journaled) as accepted."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pi_lsp.agent.tool import ToolContext
from pi_lsp.changes.blobs import BlobStore
from pi_lsp.changes.journal import ChangeJournal
from pi_lsp.changes.journaling_files import JournalingFileAccess
from pi_lsp.changes.review_before import Decision, ReviewingFileAccess, ReviewMode, ReviewProposal
from pi_lsp.tools.file_io.file_access import FileWrite
from pi_lsp.tools.file_io.local_files import LocalFileAccess


class ScriptedReviewer:
    """Accepts the first hunk of a.txt, rejects everything else (with a reason)."""

    def __init__(self) -> None:
        self.proposals: list[ReviewProposal] = []

    def mode(self) -> ReviewMode:
        return "request"

    @property
    def timeout_seconds(self) -> float:
        return 60.0

    async def ask(self, proposal: ReviewProposal) -> dict[str, Decision]:
        self.proposals.append(proposal)
        return {
            hunk.id: Decision(proposal.path.name == "a.txt" and index == 0, "not this one")
            for index, hunk in enumerate(proposal.hunks)
        }

    def withdraw(self, proposal: ReviewProposal, reason: Literal["timeout", "aborted"]) -> None:
        raise AssertionError("nothing is withdrawn here")


async def test_a_multi_file_change_lands_as_reviewed_and_is_journaled_as_it_landed(tmp_path: Path) -> None:
    files = {
        "a.txt": (b"x = old\nkeep\ny = old\n", b"x = new\nkeep\ny = new\n"),
        "bin.dat": (b"\xff old\n", b"\xff new\n"),
        "c.txt": (b"old\n", b"new\n"),
    }
    disk = LocalFileAccess()
    writes = []
    for name, (before, after) in files.items():
        (tmp_path / name).write_bytes(before)
        writes.append(FileWrite(path=tmp_path / name, data=after, previous=await disk.read(tmp_path / name)))
    reviewer = ScriptedReviewer()
    journal = ChangeJournal(tmp_path / "changes", BlobStore(tmp_path / "blobs"))
    access = JournalingFileAccess(ReviewingFileAccess(disk, reviewer), journal)

    reports = await access.write_files(
        writes, label="pi: rename old to new", annotation="Rename old to new", ctx=ToolContext("call-1", session_id="s")
    )

    assert [(p.path.name, p.tool_name, p.tool_call_id) for p in reviewer.proposals] == [
        ("a.txt", "rename", "call-1"), ("c.txt", "rename", "call-1"),
    ]
    assert (tmp_path / "a.txt").read_bytes() == b"x = new\nkeep\ny = old\n"
    assert (tmp_path / "bin.dat").read_bytes() == b"\xff new\n"
    assert (tmp_path / "c.txt").read_bytes() == b"old\n"
    a, binary, c = reports
    assert a.landed == b"x = new\nkeep\ny = old\n" and "accepted 1 of 2 hunks" in a.notices[0]
    assert "hunk 2 of 2 (old lines 3, new lines 3): the user said: not this one" in a.notices[0]
    assert binary.notices == [f"[Not reviewed: {tmp_path / 'bin.dat'} is not UTF-8 text; its change was applied as proposed.]"]
    assert c.landed == b"old\n" and "rejected every hunk of the rename" in c.notices[0]
    recorded = {Path(change.path).name: change.after for change in journal.changes("s")}
    assert recorded == {"a.txt": journal.digest(b"x = new\nkeep\ny = old\n"), "bin.dat": journal.digest(b"\xff new\n")}
