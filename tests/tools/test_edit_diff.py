"""The line diff, display diff and patch (pi_lsp.tools.text.line_diff / edit_diff), against Pi's own code."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pi_lsp.tools.text.edit_diff import edit_diff
from pi_lsp.tools.text.line_diff import MAX_EDIT_DISTANCE, diff_lines
from tests.peer import run_peer_script
from tests.tools.edit_support import apply_patch


def _pairs(seed: int, count: int, max_lines: int, alphabet: list[str]) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        lines = [rng.choice(alphabet) for _ in range(rng.randint(0, max_lines))]
        changed = list(lines)
        for _ in range(rng.randint(0, 4)):
            pos = rng.randint(0, len(changed))
            roll = rng.random()
            if roll < 0.4:
                changed.insert(pos, rng.choice(alphabet))
            elif roll < 0.7 and changed:
                del changed[min(pos, len(changed) - 1)]
            elif changed:
                changed[min(pos, len(changed) - 1)] += "!"
        pairs.append(("\n".join(lines) + rng.choice(["", "\n"]), "\n".join(changed) + rng.choice(["", "\n"])))
    return pairs


@pytest.mark.parametrize(
    ("seed", "max_lines", "alphabet"),
    [(1, 30, ["a", "b", "c", "", "x y"]), (2, 300, ["a", "b"]), (3, 120, ["a", "", "b", "c", "d", "e"])],
)
def test_matches_pis_display_diff_and_jsdiffs_patch(tmp_path: Path, peer: Path, seed: int, max_lines: int, alphabet: list[str]) -> None:
    pairs = _pairs(seed, 600, max_lines, alphabet)
    answers = run_peer_script(peer, "peer_jsdiff.mjs", [{"old": old, "new": new} for old, new in pairs])
    for (old, new), answer in zip(pairs, answers):
        mine = edit_diff("p.txt", old, new)
        assert (mine.diff, mine.first_changed_line) == (answer["diff"], answer["first"]), (old, new)
        assert mine.patch == answer["patch"], (old, new)


def test_parts_rebuild_both_texts_and_patch_applies(tmp_path: Path) -> None:
    for old, new in _pairs(7, 200, 40, ["a", "b", "", "c"])[:40]:
        parts = diff_lines(old, new)
        assert "".join(p.text for p in parts if p.kind != "+") == old
        assert "".join(p.text for p in parts if p.kind != "-") == new
        assert all(a.kind != b.kind for a, b in zip(parts, parts[1:]))
        if old != new:
            assert apply_patch(tmp_path, old, edit_diff("p.txt", old, new).patch) == new


def test_huge_rewrite_falls_back_to_remove_then_add() -> None:
    old = "".join(f"old {i}\n" for i in range(2 * MAX_EDIT_DISTANCE)) + "same\n"
    new = "".join(f"new {i}\n" for i in range(2 * MAX_EDIT_DISTANCE)) + "same\n"
    parts = diff_lines(old, new)
    assert [p.kind for p in parts] == ["-", "+", " "]
    assert parts[2].text == "same\n"


def test_no_change_and_one_line_in_a_big_file() -> None:
    assert edit_diff("p", "a\n", "a\n").first_changed_line is None
    old = "".join(f"line {i}\n" for i in range(60_000))
    new = old.replace("line 30000\n", "LINE 30000\n")
    result = edit_diff("big.txt", old, new)
    assert result.first_changed_line == 30001
    assert result.diff.splitlines() == [
        "       ...", *(f" {n} line {n - 1}" for n in range(29997, 30001)),
        "-30001 line 30000", "+30001 LINE 30000",
        *(f" {n} line {n - 1}" for n in range(30002, 30006)), "       ...",
    ]
    assert result.patch.startswith("--- big.txt\n+++ big.txt\n@@ -29997,9 +29997,9 @@\n")
