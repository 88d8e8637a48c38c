"""The read tool on real files (pi-behaviour.md 2.1 checklist, design.md section 7)."""

from __future__ import annotations

import base64
import io
import random
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from pi_lsp.agent.tool import AbortSignal, ToolContext, ToolError, ToolResult
from pi_lsp.tools.environment import ToolEnvironment
from pi_lsp.tools.file_io.file_access import FileSnapshot
from pi_lsp.tools.file_io.images import RESIZE_FAILED, prepare_image, sniff_image_mime
from pi_lsp.tools.file_io.local_files import LocalFileAccess
from pi_lsp.llm.types import to_wire
from pi_lsp.tools.read import ReadArgs, ReadTool
from tests.peer import MAKE_FIXTURE, run_peer, run_peer_script


def _tool(cwd: Path, files: LocalFileAccess | None = None) -> ReadTool:
    return ReadTool(ToolEnvironment(cwd=cwd, files=files or LocalFileAccess(), temp_dir=cwd))


async def _read(cwd: Path, **arguments: object) -> ToolResult:
    return await _tool(cwd).execute(ReadArgs(**arguments), ToolContext(tool_call_id="t"))


async def _error(cwd: Path, **arguments: object) -> str:
    with pytest.raises(ToolError) as info:
        await _read(cwd, **arguments)
    return info.value.message


def _text(result: ToolResult) -> str:
    assert result.content[0].type == "text"
    return result.content[0].text  # type: ignore[union-attr]


def _png(width: int, height: int, *, noise: bool = False) -> bytes:
    image = Image.new("RGB", (width, height), (200, 30, 30))
    if noise:
        rng = random.Random(7)
        image = Image.frombytes("RGB", (width, height), rng.randbytes(width * height * 3))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


async def test_small_file_exactly(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree")
    result = await _read(tmp_path, path="a.txt")
    assert _text(result) == "one\ntwo\nthree" and result.details is None
    assert "Use offset=" not in _text(result)


async def test_missing_file_is_enoent(tmp_path: Path) -> None:
    message = await _error(tmp_path, path="nope.txt")
    assert message == f"ENOENT: no such file or directory, access '{tmp_path / 'nope.txt'}'"


async def test_line_limit(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("\n".join(f"Line {i}" for i in range(1, 2501)))
    result = await _read(tmp_path, path="big.txt")
    text = _text(result)
    assert "Line 1\n" in text and "Line 2000\n" in text and "Line 2001" not in text
    assert text.endswith("\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]")
    truncation = result.details["truncation"]
    assert truncation["truncated"] and truncation["truncatedBy"] == "lines"
    assert (truncation["totalLines"], truncation["outputLines"]) == (2500, 2000)


async def test_byte_limit(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text("\n".join(f"{i:03d}" + "x" * 206 for i in range(500)))
    text = _text(await _read(tmp_path, path="wide.txt"))
    match = re.search(r"\[Showing lines 1-(\d+) of 500 \(50\.0KB limit\)\. Use offset=(\d+) to continue\.\]$", text)
    assert match and int(match.group(2)) == int(match.group(1)) + 1
    assert len(text.encode()) <= 51200 + 200


async def test_offset_and_limit_windows(tmp_path: Path) -> None:
    (tmp_path / "h.txt").write_text("\n".join(f"Line {i}" for i in range(1, 101)))
    text = _text(await _read(tmp_path, path="h.txt", offset=51))
    assert text.startswith("Line 51\n") and text.endswith("Line 100") and "Use offset" not in text
    text = _text(await _read(tmp_path, path="h.txt", limit=10))
    assert text == "\n".join(f"Line {i}" for i in range(1, 11)) + (
        "\n\n[90 more lines in file. Use offset=11 to continue.]"
    )
    text = _text(await _read(tmp_path, path="h.txt", offset=41, limit=20))
    assert text.startswith("Line 41\n") and "Line 60\n\n[40 more lines in file. Use offset=61 to continue.]" in text
    text = _text(await _read(tmp_path, path="h.txt", limit=0))
    assert text == "\n\n[100 more lines in file. Use offset=1 to continue.]"


async def test_offset_beyond_end(tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text("a\nb\nc")
    assert await _error(tmp_path, path="s.txt", offset=100) == "Offset 100 is beyond end of file (3 lines total)"
    (tmp_path / "t.txt").write_text("a\nb\nc\n")  # the peer counts the empty line after the last \n
    assert await _error(tmp_path, path="t.txt", offset=5) == "Offset 5 is beyond end of file (4 lines total)"
    assert _text(await _read(tmp_path, path="t.txt", offset=4)) == ""


async def test_trailing_newline_line_count_is_the_peers(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("".join(f"{i}\n" for i in range(1, 2001)))
    text = _text(await _read(tmp_path, path="n.txt"))
    assert text.endswith("1999\n2000\n\n[Showing lines 1-2000 of 2001. Use offset=2001 to continue.]")
    (tmp_path / "m.txt").write_text("".join(f"{i}\n" for i in range(1, 1999)))
    result = await _read(tmp_path, path="m.txt")
    assert result.details is None and _text(result).endswith("1998\n")


async def test_first_line_over_limit(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text("short\n" + "y" * 60_000 + "\nafter")
    result = await _read(tmp_path, path="long.txt", offset=2)
    assert _text(result) == (
        "[Line 2 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '2p' long.txt | head -c 51200]"
    )
    assert result.details["truncation"]["firstLineExceedsLimit"] is True


async def test_crlf_and_utf8_bom_untouched(tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_bytes(b"\xef\xbb\xbfa\r\nb\r\n")
    assert _text(await _read(tmp_path, path="c.txt")) == "\ufeffa\r\nb\r\n"


@pytest.mark.parametrize("codec,label", [("utf-16", "UTF-16LE"), ("utf-16-be", "UTF-16BE"), ("utf-32", "UTF-32LE")])
async def test_utf16_and_utf32_with_bom_are_transcoded(tmp_path: Path, codec: str, label: str) -> None:
    text = "héllo\nwörld 🙂\n"
    data = text.encode(codec)
    if codec == "utf-16-be":
        data = b"\xfe\xff" + data
    (tmp_path / "u.txt").write_bytes(data)
    assert _text(await _read(tmp_path, path="u.txt")) == (
        f"{text}\n\n[File is {label} with a byte-order mark; shown decoded as text.]"
    )


async def test_latin1_text_gets_replacement_characters_and_a_notice(tmp_path: Path) -> None:
    (tmp_path / "l.txt").write_bytes("ok\ncafé crème\n".encode("latin-1"))
    assert _text(await _read(tmp_path, path="l.txt")) == (
        "ok\ncaf\ufffd cr\ufffdme\n\n\n"
        "[File is not valid UTF-8 (first invalid byte at offset 6); invalid bytes shown as U+FFFD.]"
    )


@pytest.mark.parametrize(
    "data,kind",
    [
        (b"\x7fELF\x02\x01\x01" + bytes(200), "ELF"),
        (b"PK\x03\x04" + bytes(40) + b"secret.txt", "zip"),
        (b"%PDF-1.7\n%\xe2\xe3\n1 0 obj", "PDF"),
        (b"\x1f\x8b\x08\x00" + bytes(20), "gzip"),
        (b"SQLite format 3\x00" + bytes(100), "SQLite"),
        (b"plain text then a NUL\x00 byte", "binary data"),
        (b"x" * 257 + b"ustar\x0000" + bytes(100), "tar archive"),
        (b"\x00\x00\x00\x18ftypmp42" + bytes(20), "MP4"),
        (b"a" * 8191 + b"\x00", "binary data"),
    ],
)
async def test_binary_files_are_refused(tmp_path: Path, data: bytes, kind: str) -> None:
    (tmp_path / "f.dat").write_bytes(data)
    message = await _error(tmp_path, path="f.dat")
    assert "binary" in message and kind in message and f"{len(data)} bytes" in message
    assert "secret.txt" not in message and "NUL" not in message


async def test_a_nul_byte_after_the_sniffed_bytes_leaves_a_file_text(tmp_path: Path) -> None:
    (tmp_path / "late.txt").write_bytes(b"a" * 8192 + b"\x00tail")
    assert _text(await _read(tmp_path, path="late.txt")).startswith("a" * 100)


async def test_png_named_txt_is_an_image(tmp_path: Path) -> None:
    data = _png(3, 2)
    (tmp_path / "image.txt").write_bytes(data)
    result = await _read(tmp_path, path="image.txt")
    assert _text(result) == "Read image file [image/png]"
    image = result.content[1]
    assert image.type == "image" and image.mime_type == "image/png"  # type: ignore[union-attr]
    assert base64.b64decode(image.data) == data  # type: ignore[union-attr]  # within limits: untouched
    assert result.details is None


async def test_text_named_png_is_text(tmp_path: Path) -> None:
    (tmp_path / "not-an-image.png").write_text("just text")
    result = await _read(tmp_path, path="not-an-image.png")
    assert [c.type for c in result.content] == ["text"] and _text(result) == "just text"


def _bmp_1x1() -> bytes:
    pixels = b"\x00\x00\xff\x00"  # one blue-green-red pixel, row padded to 4 bytes
    header = struct.pack("<IiiHHIIiiII", 40, 1, 1, 1, 24, 0, len(pixels), 2835, 2835, 0, 0)
    return b"BM" + struct.pack("<IHHI", 14 + 40 + len(pixels), 0, 0, 54) + header + pixels


async def test_bmp_is_converted_to_png(tmp_path: Path) -> None:
    (tmp_path / "pic.bmp").write_bytes(_bmp_1x1())
    result = await _read(tmp_path, path="pic.bmp")
    assert _text(result) == "Read image file [image/png]\n[Image converted from image/bmp to image/png.]"
    data = base64.b64decode(result.content[1].data)  # type: ignore[union-attr]
    assert data[0] == 0x89 and Image.open(io.BytesIO(data)).getpixel((0, 0)) == (255, 0, 0)


async def test_large_image_is_resized(tmp_path: Path) -> None:
    (tmp_path / "wide.png").write_bytes(_png(3000, 1000))
    result = await _read(tmp_path, path="wide.png")
    assert _text(result) == (
        "Read image file [image/png]\n[Image: original 3000x1000, displayed at 2000x667. "
        "Multiply coordinates by 1.50 to map to original image.]"
    )
    image = Image.open(io.BytesIO(base64.b64decode(result.content[1].data)))  # type: ignore[union-attr]
    assert image.size == (2000, 667)


def test_image_over_the_byte_limit_falls_back_to_jpeg_then_omits() -> None:
    noisy = _png(300, 300, noise=True)  # ~270 KB of incompressible pixels
    fitted = prepare_image(noisy, "image/png", max_base64_bytes=200_000)
    assert fitted.mime_type == "image/jpeg" and fitted.data is not None and len(fitted.data) < 200_000
    assert fitted.notes == [
        "[Image: original 300x300, displayed at 300x300. Multiply coordinates by 1.00 to map to original image.]"
    ]
    omitted = prepare_image(noisy, "image/png", max_base64_bytes=10)
    assert omitted.data is None and omitted.notes == [RESIZE_FAILED]


def test_sniffing_rules() -> None:
    assert sniff_image_mime(b"\xff\xd8\xff\xe0rest") == "image/jpeg"
    assert sniff_image_mime(b"\xff\xd8\xff\xf7rest") is None  # JPEG-LS
    assert sniff_image_mime(b"GIF89a") == "image/gif"
    assert sniff_image_mime(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert sniff_image_mime(b"BM not really a bitmap header at all") is None
    assert sniff_image_mime(b"") is None and sniff_image_mime(b"plain text") is None
    png = _png(1, 1)
    apng = png[:33] + struct.pack(">I", 8) + b"acTL" + bytes(8) + b"\x00\x00\x00\x00" + png[33:]
    assert sniff_image_mime(png) == "image/png" and sniff_image_mime(apng) is None


async def test_text_starting_with_gif_is_text(tmp_path: Path) -> None:
    # issue 12 (Pi 1.6.0): 0.73.1 took any file starting with "GIF" for an image and could not read it
    (tmp_path / "notes.txt").write_text("GIFs are fun\nsecond line\n", encoding="utf-8")
    assert _text(await _read(tmp_path, path="notes.txt")) == "GIFs are fun\nsecond line\n"
    assert sniff_image_mime(b"GIF8 not a header") is None and sniff_image_mime(b"GIF87a\x01\x00") == "image/gif"


async def test_animated_png_is_binary_not_image(tmp_path: Path) -> None:
    png = _png(1, 1)
    (tmp_path / "anim.png").write_bytes(png[:33] + struct.pack(">I", 8) + b"acTL" + bytes(12) + png[33:])
    assert "binary" in await _error(tmp_path, path="anim.png")


async def test_directory_and_symlink_loop(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    assert await _error(tmp_path, path="d") == "EISDIR: illegal operation on a directory, read"
    (tmp_path / "l1").symlink_to("l2")
    (tmp_path / "l2").symlink_to("l1")
    assert await _error(tmp_path, path="l1") == (
        f"ELOOP: too many symbolic links encountered, access '{tmp_path / 'l1'}'"
    )


async def test_path_fallback_and_at_prefix(tmp_path: Path) -> None:
    (tmp_path / "Shot 1.00.00\u202fPM.png").write_text("screenshot text")
    assert _text(await _read(tmp_path, path="@Shot 1.00.00 PM.png")) == "screenshot text"


class _DirtyBufferFiles(LocalFileAccess):
    """Disk content plus the notice an editor adds for an unsaved buffer."""

    async def read(self, path: Path, ctx: ToolContext | None = None, *, real_path: str | None = None) -> FileSnapshot:
        snapshot = await super().read(path, ctx)
        return FileSnapshot(
            path=snapshot.path, real_path=snapshot.real_path, data=snapshot.data, source="buffer",
            version=3, notices=("[Unsaved changes in the editor: this is the editor's buffer, not the file on disk.]",),
        )


async def test_snapshot_notices_follow_the_text(tmp_path: Path) -> None:
    (tmp_path / "h.txt").write_text("\n".join(f"L{i}" for i in range(1, 11)))
    tool = _tool(tmp_path, _DirtyBufferFiles())
    result = await tool.execute(ReadArgs(path="h.txt", limit=2), ToolContext(tool_call_id="t"))
    assert _text(result) == (
        "L1\nL2\n\n[8 more lines in file. Use offset=3 to continue.]\n\n"
        "[Unsaved changes in the editor: this is the editor's buffer, not the file on disk.]"
    )


async def test_aborted_before_start(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    signal = AbortSignal()
    signal.abort()
    with pytest.raises(ToolError, match="^Operation aborted$"):
        await _tool(tmp_path).execute(ReadArgs(path="a.txt"), ToolContext(tool_call_id="t", signal=signal))


def test_tool_metadata_matches_the_peer(peer: Path) -> None:
    tool = _tool(Path("/"))
    assert (tool.name, tool.label, tool.execution_mode) == ("read", "read", "parallel")
    assert tool.prepare_arguments({"path": 1}) == {"path": 1}
    [defs] = run_peer_script(peer, "peer_defs.mjs")
    theirs = next(d for d in defs if d["name"] == "read")
    assert (tool.label, tool.description, tool.parameters) == (
        theirs["label"], theirs["description"], theirs["parameters"]
    )


def _differential_tree(root: Path) -> None:
    subprocess.run([sys.executable, str(MAKE_FIXTURE), str(root)], check=True, capture_output=True)
    (root / "n2000.txt").write_text("".join(f"{i}\n" for i in range(1, 2001)))
    (root / "wide.txt").write_text("\n".join(f"{i:03d}" + "é" * 120 for i in range(600)))
    (root / "long.txt").write_text("x\n" + "y" * 70_000 + "\nz")
    (root / "crlf-bom.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    (root / "empty.txt").write_bytes(b"")
    (root / "dir").mkdir()
    (root / "l1").symlink_to("l2")
    (root / "l2").symlink_to("l1")
    (root / "image.txt").write_bytes(_png(2, 2))
    (root / "it\u2019s.txt").write_text("curly")


READ_CASES = [
    {"path": "a.txt"}, {"path": "a.txt", "offset": 2, "limit": 2}, {"path": "a.txt", "offset": 7},
    {"path": "a.txt", "offset": 8}, {"path": "a.txt", "offset": -3}, {"path": "a.txt", "limit": 0},
    {"path": "a.txt", "limit": 100}, {"path": "big.txt"}, {"path": "big.txt", "offset": 2990},
    {"path": "n2000.txt"}, {"path": "wide.txt"}, {"path": "wide.txt", "offset": 300, "limit": 5},
    {"path": "long.txt"}, {"path": "long.txt", "offset": 2}, {"path": "crlf-bom.txt"},
    {"path": "empty.txt"}, {"path": "empty.txt", "offset": 2}, {"path": "missing.txt"}, {"path": "dir"},
    {"path": "l1"}, {"path": "a.txt/x"}, {"path": "@a.txt"}, {"path": "red.png"}, {"path": "image.txt"},
    {"path": "it's.txt"}, {"path": "src/../a.txt"},
]


async def test_read_matches_the_peer(peer: Path, tmp_path: Path) -> None:
    _differential_tree(tmp_path)
    requests = [
        {"cwd": str(tmp_path), "toolCall": {"id": f"r{i}", "name": "read", "arguments": args}}
        for i, args in enumerate(READ_CASES)
    ]
    answers = run_peer(peer, requests)
    for args, theirs in zip(READ_CASES, answers):
        try:
            result = await _read(tmp_path, **args)
        except ToolError as exc:
            ours = {"isError": True, "content": [{"type": "text", "text": exc.message}]}
        else:
            ours = {"isError": False, "content": [to_wire(block) for block in result.content]}
            assert result.details == theirs["details"], args
        assert ours == {"isError": theirs["isError"], "content": theirs["content"]}, args
