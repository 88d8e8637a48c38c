"""The bounded output accumulator behind bash (pi_lsp/tools/shell/output_buffer.py).

Decoding per stream, escape stripping across chunk boundaries, the peer's line/byte totals, the
spill file holding every raw byte, and bounded memory on large outputs.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_lsp.tools.shell.output_buffer import EscapeStripper, OutputBuffer, strip_escapes
from pi_lsp.tools.text.truncate import truncate_tail


def _feed_all(buffer: OutputBuffer, chunks: list[tuple[int, bytes]]) -> str:
    for stream, data in chunks:
        buffer.feed(stream, data)
    buffer.finish()
    snapshot = buffer.snapshot()
    buffer.close()
    return snapshot.content


def test_small_output_is_kept_whole_without_spill_file(tmp_path: Path) -> None:
    buffer = OutputBuffer(tmp_path)
    assert _feed_all(buffer, [(1, b"out\n"), (2, b"err\n")]) == "out\nerr\n"
    assert buffer.full_output_path is None
    assert list(tmp_path.iterdir()) == []
    # Pi 1.6.0 (issue 12): a final \n ends the last line (the 0.73.1 peer counted a phantom third)
    assert (buffer.total_lines, buffer.total_bytes) == (2, 8)


def test_character_split_across_chunks_arrives_whole(tmp_path: Path) -> None:
    euro = "€\n".encode()
    buffer = OutputBuffer(tmp_path)
    assert _feed_all(buffer, [(1, euro[:1]), (1, euro[1:2]), (1, euro[2:])]) == "€\n"


def test_streams_have_separate_decoders(tmp_path: Path) -> None:
    # stdout and stderr each split a character, interleaved: one shared decoder would garble both
    euro, pound = "€".encode(), "£".encode()
    chunks = [(1, euro[:2]), (2, pound[:1]), (1, euro[2:] + b"\n"), (2, pound[1:] + b"\n")]
    text = _feed_all(OutputBuffer(tmp_path), chunks)
    assert text == "€\n£\n"


def test_invalid_bytes_become_replacement_characters(tmp_path: Path) -> None:
    text = _feed_all(OutputBuffer(tmp_path), [(1, b"\xff\xfeok\xc3"), (1, b"\n")])
    assert text == "\ufffd\ufffdok\ufffd\n"


def test_escapes_are_stripped_even_when_split(tmp_path: Path) -> None:
    raw = b"\x1b[1;31mred\x1b[0m \x1b]0;title\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x1b(Bdone\n"
    for cut in range(1, len(raw)):
        buffer = OutputBuffer(tmp_path)
        assert _feed_all(buffer, [(1, raw[:cut]), (1, raw[cut:])]) == "red link done\n", cut


def test_line_and_byte_totals_follow_pi_1_6(tmp_path: Path) -> None:
    # issue 12: the 0.73.1 peer says "of 3001" and starts the tail at 1002 (a phantom empty line)
    data = subprocess.run(["seq", "3000"], capture_output=True, check=True).stdout
    buffer = OutputBuffer(tmp_path)
    for start in range(0, len(data), 1000):
        buffer.feed(1, data[start : start + 1000])
    buffer.finish()
    snap = buffer.snapshot()
    buffer.close()
    t = snap.truncation
    assert (t.truncated, t.truncated_by, t.total_lines, t.total_bytes) == (True, "lines", 3000, len(data))
    assert (t.output_lines, snap.content.split("\n")[0], snap.content.split("\n")[-1]) == (2000, "1001", "3000")
    assert snap.full_output_path is not None
    assert re.fullmatch(r"pi-bash-[0-9a-f]{16}\.log", snap.full_output_path.name)
    assert snap.full_output_path.parent == tmp_path
    assert snap.full_output_path.read_bytes() == data


def test_spill_file_holds_raw_bytes_of_both_streams_in_arrival_order(tmp_path: Path) -> None:
    chunks = [(1 + i % 2, b"\x1b[32m%d\xff\n" % i) for i in range(5000)]
    buffer = OutputBuffer(tmp_path)
    _feed_all(buffer, chunks)
    assert buffer.full_output_path is not None
    assert buffer.full_output_path.read_bytes() == b"".join(data for _, data in chunks)


def test_memory_stays_bounded_on_20_mb(tmp_path: Path) -> None:
    line = b"x" * 99 + b"\n"
    buffer = OutputBuffer(tmp_path)
    for _ in range(2000):
        buffer.feed(1, line * 100)  # 10 KB chunks, 20 MB in all
        assert len(buffer._tail) <= 4 * buffer.max_bytes + 10_000
    buffer.feed(1, b"LAST\n")
    buffer.finish()
    snap = buffer.snapshot()
    buffer.close()
    assert snap.content.endswith("\nLAST")
    assert snap.truncation.total_lines == 200_001
    assert snap.full_output_path.stat().st_size == 20_000_005  # type: ignore[union-attr]


def test_huge_single_line_keeps_its_end(tmp_path: Path) -> None:
    buffer = OutputBuffer(tmp_path)
    _feed_all(buffer, [(1, b"a" * 60_000 + b"END")])
    snap = buffer.snapshot()
    assert snap.truncation.last_line_partial and snap.content.endswith("aEND")
    assert buffer.last_line_bytes == 60_003


def test_feed_after_finish_is_ignored(tmp_path: Path) -> None:
    buffer = OutputBuffer(tmp_path)
    buffer.feed(1, b"a\n")
    buffer.finish()
    buffer.feed(1, b"late\n")
    assert buffer.snapshot().content == "a\n"


def test_unwritable_temp_dir_does_not_crash(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    buffer = OutputBuffer(blocker / "sub")
    text = _feed_all(buffer, [(1, b"y\n" * 3000)])
    assert text.endswith("y\ny") and buffer.truncated


_ESCAPE_ALPHABET = st.sampled_from(
    ["\x1b", "[", "]", "0", "1", ";", "m", "\x07", "\\", "P", "(", "B", "a", "\n", "é", "\x9b"]
)


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(_ESCAPE_ALPHABET, max_size=40).map("".join),
    cuts=st.lists(st.integers(min_value=0, max_value=40), max_size=4),
)
def test_incremental_stripping_equals_whole_stripping(text: str, cuts: list[int]) -> None:
    stripper = EscapeStripper()
    points = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    out = "".join(stripper.feed(text[a:b]) for a, b in zip(points, points[1:]))
    out += stripper.flush()
    assert out == strip_escapes(text)


_PIECES = st.sampled_from([b"\n", b"abc", "é€".encode(), b"\xff", b"x" * 150, b"\x1b[1m", b"y" * 700])


@settings(max_examples=300, deadline=None)
@given(
    data=st.one_of(st.binary(max_size=3000), st.lists(_PIECES, max_size=40).map(b"".join)),
    cuts=st.lists(st.integers(min_value=0, max_value=30000), max_size=6),
)
def test_chunking_never_changes_the_result(tmp_path_factory, data: bytes, cuts: list[int]) -> None:
    # whatever the chunking and however much the rolling tail dropped, the snapshot equals
    # truncating the whole decoded, stripped output at once
    points = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    buffer = OutputBuffer(tmp_path_factory.mktemp("spill"), max_lines=50, max_bytes=500)
    for a, b in zip(points, points[1:]):
        buffer.feed(1, data[a:b])
    buffer.finish()
    got = buffer.snapshot().truncation
    buffer.close()
    whole = strip_escapes(data.decode("utf-8", "replace"))
    want = truncate_tail(whole, 50, 500)
    assert (got.content, got.truncated, got.total_lines, got.total_bytes) == (
        want.content, want.truncated, want.total_lines, want.total_bytes
    )
    assert (got.output_lines, got.output_bytes, got.last_line_partial) == (
        want.output_lines, want.output_bytes, want.last_line_partial
    )
    if want.truncated:
        assert got.truncated_by == want.truncated_by
        assert buffer.full_output_path.read_bytes() == data  # type: ignore[union-attr]
