"""Hunks, locating them in text the user changed since, and undoing them (pure functions)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_lsp.changes.change_set import diff_hunks, locate, undo_hunks

LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\n", "e\n"]), max_size=12)


@settings(max_examples=300, deadline=None)
@given(before=LINES, after=LINES)
def test_undoing_every_hunk_of_an_untouched_file_gives_the_before_text(before: list[str], after: list[str]) -> None:
    hunks = diff_hunks("f", before, after)
    locate(after, after, hunks)
    assert all(h.status == "applied" for h in hunks)
    assert undo_hunks(after, hunks) == before


@settings(max_examples=300, deadline=None)
@given(before=LINES, after=LINES, where=st.integers(min_value=0, max_value=12))
def test_a_line_the_user_inserted_is_kept_and_touched_hunks_are_left_alone(
    before: list[str], after: list[str], where: int
) -> None:
    where = min(where, len(after))
    current = after[:where] + ["user\n"] + after[where:]
    hunks = diff_hunks("f", before, after)
    locate(after, current, hunks)
    applied = [h for h in hunks if h.status == "applied"]
    result = undo_hunks(current, applied)
    assert result.count("user\n") == 1  # the user's line survives every revert
    for hunk in hunks:  # a hunk is left alone only when the user's line touches it
        end = hunk.new_start + len(hunk.new_lines)
        if hunk.status == "changed":
            assert hunk.new_start <= where <= end
    if all(h.status == "applied" for h in hunks):  # everything reverted: before, plus the user's line
        assert [line for line in result if line != "user\n"] == before


def test_an_edit_above_shifts_the_hunk() -> None:
    before = ["one\n", "two\n", "three\n"]
    after = ["one\n", "TWO\n", "three\n"]
    current = ["zero\n", "one\n", "TWO\n", "three\n"]
    [hunk] = diff_hunks("f", before, after)
    locate(after, current, [hunk])
    assert (hunk.status, hunk.current_start) == ("applied", 2)
    assert undo_hunks(current, [hunk]) == ["zero\n", "one\n", "two\n", "three\n"]


def test_an_edit_inside_marks_the_hunk_changed() -> None:
    before = ["one\n", "two\n", "three\n"]
    after = ["one\n", "TWO\n", "three\n"]
    current = ["one\n", "TWO user\n", "three\n"]
    [hunk] = diff_hunks("f", before, after)
    locate(after, current, [hunk])
    assert hunk.status == "changed"
