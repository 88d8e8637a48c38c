"""The change journal's prompts (issue 18): which turns each ``pi/prompt`` run covered, kept across
a daemon restart (a new journal over the same folder)."""

from __future__ import annotations

from pathlib import Path

from pi_lsp.changes.blobs import BlobStore
from pi_lsp.changes.journal import ChangeJournal, TurnSpan


def _journal(tmp_path: Path) -> ChangeJournal:
    return ChangeJournal(tmp_path / "changes", BlobStore(tmp_path / "blobs"))


def test_prompts_cover_their_turns_and_survive_a_restart(tmp_path: Path) -> None:
    journal = _journal(tmp_path)
    assert journal.begin_prompt("s") == 1
    journal.begin_turn("s")
    journal.begin_turn("s")
    assert journal.begin_prompt("s") == 2
    assert journal.begin_prompt("s") == 3  # a prompt whose run made no model call (an error at once)
    journal.begin_turn("s")
    for reopened in (journal, _journal(tmp_path)):
        assert reopened.prompt_count("s") == 3
        assert [reopened.prompt_turns("s", n) for n in (1, 2, 3)] == [TurnSpan(1, 2), TurnSpan(3, 2), TurnSpan(3, 3)]
        assert [reopened.prompt_of("s", t) for t in (0, 1, 2, 3)] == [None, 1, 1, 3]
        assert reopened.prompt_turns("s", 4) is None and reopened.prompt_turns("s", 0) is None
        assert 3 not in TurnSpan(3, 2) and 2 in TurnSpan(1, 2)
